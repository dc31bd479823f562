#include "central/ott/steering_views.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "central/model/steering_config.h"
#include "central/ott/groups.h"
#include "nlohmann/json.hpp"

namespace meshwork::central::ott {

using nlohmann::json;

void AddSteeringViews(const ClusterConfig& config, const NodeStates& nodes,
                      const std::string& steering_base,
                      std::map<std::string, v1::OttGroupViews>& views) {
  if (steering_base.empty()) return;
  std::map<std::string, NodeAddresses> addresses;
  bool addresses_known = false;
  for (const auto& [stream, record] : config.streams) {
    const SteeringSettings steering = SteeringOf(record.object, config.steering);
    if (!steering.enabled) continue;
    if (!addresses_known) {
      addresses = ViewerAddresses(config, nodes);
      addresses_known = true;
    }
    std::set<std::string> placed;
    if (auto p = record.object.find("placement"); p != record.object.end() && p->is_object()) {
      for (const auto& id : p->value("streamers", json::array())) {
        if (id.is_string()) placed.insert(id.get<std::string>());
      }
    }
    json members = json::array();
    std::vector<std::string> candidates;
    for (const auto& [id, streamer] : config.streamers) {
      if (!placed.contains(id) && streamer.settings.role() != v1::ROLE_EDGE) continue;
      auto state = nodes.find(id);
      auto address = addresses.find(id);
      if (state == nodes.end() || !state->second.online || address == addresses.end()) continue;
      const NodeAddresses& a = address->second;
      if (a.http_base.empty() && a.https_base.empty()) continue;
      members.push_back({{"node", id},
                         {"stream", stream},
                         {"eligible", true},
                         {"http_base", a.http_base.empty() ? json(nullptr) : json(a.http_base)},
                         {"https_base", a.https_base.empty() ? json(nullptr) : json(a.https_base)},
                         {"address_public", a.address_public},
                         {"shared_name", a.shared_name},
                         {"zone", streamer.settings.zone()},
                         {"load", 0}});
      candidates.push_back(id);
    }
    if (candidates.empty()) continue;
    const std::string group = absl::StrCat(kSteeringGroupPrefix, stream);
    const std::string view = json{
        {"group", group},
        {"server_uri", absl::StrCat(steering_base, "/steering/", stream)},
        {"ttl_s", steering.ttl_s},
        {"members",
         std::move(members)}}.dump();
    for (const auto& id : candidates) {
      auto* g = views[id].add_groups();
      g->set_group(group);
      g->set_view_json(view);
    }
  }
}

}  // namespace meshwork::central::ott
