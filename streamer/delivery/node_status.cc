#include "streamer/delivery/node_status.h"

#include "meshwork/v1/report_json.h"

namespace meshwork::streamer {

nlohmann::json StreamsStatus(const v1::LoadReport& report, const PlaySessions::Counts& viewers) {
  nlohmann::json streams = v1::StreamsJson(report);
  for (auto& s : streams) {
    const std::string name = s["name"];
    nlohmann::json by_protocol = nlohmann::json::object();
    uint64_t total = 0;
    for (const auto& [key, n] : viewers.by_stream_protocol) {
      if (key.first != name) continue;
      by_protocol[key.second] = n;
      total += n;
    }
    s["play_sessions"] = total;
    s["viewers"] = by_protocol;
  }
  return streams;
}

}  // namespace meshwork::streamer
