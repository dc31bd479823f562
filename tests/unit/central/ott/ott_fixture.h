// A healthy three-node OTT group for the group, alert and view tests: streams "ch1" on
// ingest-1 and ingest-3 and "ch1-spare" on ingest-2, all in group "ch1"; every node online,
// on one timeline, with the current key "k2", public DNS names and https certificates.
#pragma once

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "central/model/config_service.h"
#include "central/model/object_codecs.h"
#include "central/ott/groups.h"
#include "nlohmann/json.hpp"

namespace meshwork::central::ott::testing {

inline constexpr int64_t kNow = 1'700'000'000'000;
inline constexpr int64_t kSegmentMs = 2000;

inline void PutStream(ClusterConfig& config, const std::string& name,
                      const std::vector<std::string>& nodes, const std::string& backup) {
  nlohmann::json body = {{"segment_ms", kSegmentMs},
                         {"placement", {{"streamers", nodes}}},
                         {"ott", {{"enabled", true}, {"group", "ch1"}, {"backup", backup}}}};
  auto stream = ValidateStream(body, name);
  REQUIRE(stream.ok());
  config.streams[name] = ObjectRecord{*stream, 1};
}

inline ClusterConfig HealthyConfig() {
  ClusterConfig config;
  config.revision = 10;
  PutStream(config, "ch1", {"ingest-1", "ingest-3"}, "can_replace");
  PutStream(config, "ch1-spare", {"ingest-2"}, "can_replace");
  for (const char* id : {"ingest-1", "ingest-2", "ingest-3"}) {
    StreamerRecord record;
    record.settings.set_id(id);
    record.settings.set_hostname(std::string(id) + ".example.net");
    record.settings.set_role(meshwork::v1::ROLE_INGEST);
    record.settings.mutable_alert_thresholds()->mutable_cpu_percent_error()->set_value(90);
    record.settings.mutable_alert_thresholds()->mutable_network_percent_error()->set_value(90);
    record.settings.mutable_cdn()->mutable_network_bandwidth_kbit()->set_value(1'000'000);
    record.settings.mutable_backup_session_limit()->set_value(100);
    config.streamers[id] = record;
  }
  config.viewing_keys = {ViewingKeyRecord{"k2", std::string(32, 'b'), kNow - 1000, 0},
                         ViewingKeyRecord{"k1", std::string(32, 'a'), kNow - 9000, kNow + 5000}};
  return config;
}

// One healthy node reporting `stream` at segment `msn` of the common timeline.
inline NodeState HealthyNode(const std::string& id, const std::string& stream, int64_t msn) {
  NodeState s;
  s.registered = true;
  s.registration.set_node_id(id);
  s.registration.set_protocol_version(1);
  s.registration.set_hostname(id + ".example.net");
  auto* http = s.registration.add_listeners();
  http->set_name("http");
  http->set_scheme("http");
  http->set_port(8080);
  auto* https = s.registration.add_listeners();
  https->set_name("https");
  https->set_scheme("https");
  https->set_port(8443);
  auto* publish = s.registration.add_listeners();
  publish->set_name("publish");
  publish->set_scheme("http");
  publish->set_port(9000);
  s.registration.add_certificate_names("*.example.net");
  s.online = true;
  s.has_report = true;
  s.report_received_unix_ms = kNow;
  auto& r = s.report;
  r.set_node_clock_unix_ms(kNow);
  r.set_play_sessions(7);
  r.set_out_kbit(100'000);
  r.set_cpu_percent(10);
  r.set_backup_sessions(0);
  r.add_viewing_key_ids("k1");
  r.add_viewing_key_ids("k2");
  auto* st = r.add_streams();
  st->set_name(stream);
  st->set_working(true);
  st->set_live_window_age_s(1.5);
  // Segment msn starts at msn × segment_ms on the shared timeline (in 90 kHz ticks).
  st->set_timeline_fingerprint(std::to_string(msn) + ":" + std::to_string(msn * kSegmentMs * 90) +
                               ":" + std::to_string(kSegmentMs * 90));
  auto* video = st->add_renditions();
  video->set_name("720p");
  video->set_codecs("avc1.64001f,mp4a.40.2");
  video->set_bitrate_kbit(3000);
  auto* low = st->add_renditions();
  low->set_name("360p");
  low->set_codecs("avc1.4d401e,mp4a.40.2");
  low->set_bitrate_kbit(800);
  return s;
}

inline NodeStates HealthyNodes() {
  NodeStates nodes;
  nodes["ingest-1"] = HealthyNode("ingest-1", "ch1", 1000);
  nodes["ingest-2"] = HealthyNode("ingest-2", "ch1-spare", 1000);
  nodes["ingest-3"] = HealthyNode("ingest-3", "ch1", 1001);  // a report one segment later
  return nodes;
}

inline const MemberStatus& Member(const GroupsSnapshot& snapshot, const std::string& node) {
  const GroupStatus& group = snapshot.groups.at("ch1");
  for (const auto& m : group.members) {
    if (m.node == node) return m;
  }
  FAIL("no member on " << node);
  return group.members.front();
}

}  // namespace meshwork::central::ott::testing
