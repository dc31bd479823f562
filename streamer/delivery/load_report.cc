#include "streamer/delivery/load_report.h"

#include <string>

namespace meshwork::streamer {

void FillLoadReport(const LoadReportSources& s, v1::LoadReport& report) {
  const HostSampler::Load load = s.sampler->Sample();
  s.shedder->SetLoad(load.cpu_percent, load.out_kbit);
  s.ott->SetLoad(load.cpu_percent, load.out_kbit);
  s.alerts->Update({.cpu_high = s.shedder->CpuAboveAlert(),
                    .network_high = s.shedder->NetworkAboveAlert(),
                    .archive_disk_full = s.recorder->disk_full()});
  report.set_backup_sessions(s.ott->ExpireAndCountBackupSessions());
  report.set_refusals(s.ott->refusals());
  for (const auto& id : s.ott->held_key_ids()) report.add_viewing_key_ids(id);
  uint64_t in = 0, out = 0;
  for (const auto* server : s.servers) {
    in += server->counters().bytes_in;
    out += server->counters().bytes_out;
  }
  report.set_listener_bytes_in(in);
  report.set_listener_bytes_out(out);
  s.streams->FillReport(report);
  const PlaySessions::Counts counts = s.sessions->Count();
  s.node_metrics->Update(counts, s.origin->waiting());
  report.set_play_sessions(counts.total);
  for (const auto& session : counts.sessions) {
    auto* out = report.add_login_sessions();
    out->set_stream(session.stream);
    out->set_login(session.login);
    out->set_protocol(session.protocol);
    out->set_client(session.client);
    out->set_since_unix_ms(session.since_unix_ms);
  }
  for (auto& stream : *report.mutable_streams()) {
    auto it = counts.by_stream.find(stream.name());
    stream.set_play_sessions(it == counts.by_stream.end() ? 0 : it->second);
    for (auto proto : {archive::Proto::kTs, archive::Proto::kFmp4}) {  // D-6
      if (auto extent = s.archive_index->Extent(stream.name(), proto)) {
        auto* range = stream.add_archive();
        range->set_protocol(std::string(archive::ProtoName(proto)));
        range->set_from_ms(extent->first);
        range->set_to_ms(extent->second);
      }
    }
  }
}

}  // namespace meshwork::streamer
