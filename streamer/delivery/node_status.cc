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

void AddStreamRoutes(nlohmann::json& streams, const nlohmann::json& relays,
                     const std::map<std::string, nlohmann::json>& targets) {
  for (auto& s : streams) {
    const std::string& name = s["name"].get_ref<const std::string&>();
    s["relay_upstream"] = nullptr;
    for (const auto& r : relays) {
      if (r.value("stream", "") == name) s["relay_upstream"] = r["upstream"];
    }
    auto t = targets.find(name);
    s["publish_targets"] = t != targets.end() ? t->second : nlohmann::json::array();
  }
}

}  // namespace meshwork::streamer
