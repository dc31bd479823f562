#include "central/routing/routing_snapshot.h"

#include <algorithm>

#include "common/log/check.h"
#include "common/status/absl_view.h"
#include "meshwork/v1/role_names.h"

namespace meshwork::central {
namespace {

std::optional<uint64_t> LimitOf(const nlohmann::json& cdn, const char* key) {
  auto it = cdn.find(key);
  if (it == cdn.end() || !it->is_number_integer() || it->get<int64_t>() < 0) return std::nullopt;
  return it->get<uint64_t>();
}

}  // namespace

std::shared_ptr<const RoutingSnapshot> RoutingSnapshot::Build(const ClusterConfig& config,
                                                              const LiveLookup& live) {
  auto s = std::make_shared<RoutingSnapshot>();
  s->revision_ = config.revision;
  // Zones first (std::map: sorted by name), then the fallback links between them.
  for (const auto& [name, record] : config.zones) {
    s->zone_index_[name] = static_cast<int>(s->zones_.size());
    s->zones_.push_back(RouteZone{name, -1, {}, false});
  }
  for (const auto& [name, record] : config.zones) {
    RouteZone& zone = s->zones_[s->zone_index_[name]];
    const auto& fallback = record.object["fallback_zone"];
    if (fallback.is_string()) {
      auto it = s->zone_index_.find(fallback.get<std::string>());
      if (it != s->zone_index_.end()) zone.fallback = it->second;
    }
    for (const auto& r : record.object["routes"]) {
      auto cidr = net::Cidr::Parse(r.get<std::string>());
      // Routes are validated when written; a stored one that does not parse is a bug.
      MESHWORK_CHECK(cidr.ok(), "a zone route in the configuration is not a valid CIDR");
      s->routes_.Insert(*cidr, s->zone_index_[name]);
      zone.has_routes = true;
      s->restricted_ = true;
    }
  }
  for (int z = 0; z < static_cast<int>(s->zones_.size()); ++z) {
    std::vector<int>& chain = s->chains_.emplace_back();
    for (int at = z; at >= 0 && std::find(chain.begin(), chain.end(), at) == chain.end();
         at = s->zones_[at].fallback) {
      chain.push_back(at);
    }
  }
  for (const auto& [id, record] : config.streamers) {
    RouteNode node;
    node.id = id;
    node.hostname = record.object["hostname"].get<std::string>();
    v1::ParseRole(record.object["role"].get<std::string>(), &node.role);
    const auto& zone = record.object["zone"];
    if (zone.is_string()) {
      auto it = s->zone_index_.find(zone.get<std::string>());
      if (it != s->zone_index_.end()) node.zone = it->second;
    }
    node.session_limit = LimitOf(record.object["cdn"], "playback_session_limit");
    node.bandwidth_limit = LimitOf(record.object["cdn"], "playback_bandwidth_kbit");
    node.drain = record.object.value("drain", false);
    node.live = live(id);
    int index = static_cast<int>(s->nodes_.size());
    s->node_index_[id] = index;
    if (node.zone >= 0) s->zones_[node.zone].nodes.push_back(index);
    switch (node.role) {
      case v1::ROLE_EDGE:
        s->edges_.push_back(index);
        break;
      case v1::ROLE_INGEST:
        s->ingests_.push_back(index);
        break;
      case v1::ROLE_ORIGIN:
        s->origins_.push_back(index);
        break;
      default:
        break;
    }
    s->nodes_.push_back(std::move(node));
  }
  for (const auto& [name, record] : config.streams) {
    std::vector<int>& holders = s->placements_[name];
    for (const auto& id : record.object["placement"]["streamers"]) {
      auto it = s->node_index_.find(id.get<std::string>());
      if (it != s->node_index_.end()) holders.push_back(it->second);
    }
    std::sort(holders.begin(), holders.end());
  }
  s->zone_rotation_ = std::make_unique<std::atomic<uint64_t>[]>(s->zones_.size() + 1);
  return s;
}

int RoutingSnapshot::ZoneOf(const net::IpAddress& client) const {
  const int* zone = routes_.Lookup(client);
  return zone ? *zone : -1;
}

const std::vector<int>& RoutingSnapshot::Chain(int zone) const {
  static const std::vector<int> kNone;
  if (zone < 0) return kNone;
  MESHWORK_CHECK(zone < static_cast<int>(chains_.size()),
                 "a zone index beyond the snapshot's zones");
  return chains_[zone];
}

int RoutingSnapshot::ZoneIndex(const std::string& name) const {
  auto it = zone_index_.find(name);
  return it == zone_index_.end() ? -1 : it->second;
}

int RoutingSnapshot::NodeIndex(const std::string& id) const {
  auto it = node_index_.find(id);
  return it == node_index_.end() ? -1 : it->second;
}

const std::vector<int>& RoutingSnapshot::nodes_with_role(v1::Role role) const {
  switch (role) {
    case v1::ROLE_EDGE:
      return edges_;
    case v1::ROLE_INGEST:
      return ingests_;
    default:
      return origins_;
  }
}

bool RoutingSnapshot::StreamConfigured(std::string_view stream) const {
  return placements_.contains(AbslView(stream));
}

bool RoutingSnapshot::PlacedOn(std::string_view stream, int node) const {
  auto it = placements_.find(AbslView(stream));
  return it != placements_.end() && std::binary_search(it->second.begin(), it->second.end(), node);
}

std::atomic<uint64_t>& RoutingSnapshot::Rotation(int zone) const { return zone_rotation_[zone]; }

std::atomic<uint64_t>& RoutingSnapshot::RoleRotation(v1::Role role) const {
  switch (role) {
    case v1::ROLE_EDGE:
      return edge_rotation_;
    case v1::ROLE_INGEST:
      return ingest_rotation_;
    default:
      return origin_rotation_;
  }
}

}  // namespace meshwork::central
