// The immutable routing state (C-7): every zone route in one longest-prefix table, the zone
// chains, the nodes with their zone, role and limits, and which nodes hold which stream.
// Rebuilt from the configuration on each change and swapped whole; decisions read it
// without locks. Live numbers (online, sessions, bandwidth, streams served) are not copied
// in: each node points at its LiveNode, which the registry updates in place.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "central/cluster/live_node.h"
#include "central/model/config_service.h"
#include "common/net/cidr.h"
#include "meshwork/v1/types.pb.h"

namespace meshwork::central {

struct RouteNode {
  std::string id;
  std::string hostname;
  meshwork::v1::Role role = meshwork::v1::ROLE_UNSPECIFIED;
  int zone = -1;  // index into zones(), -1: unzoned or its zone does not exist
  std::optional<uint64_t> session_limit;    // cdn.playback_session_limit (Z-15)
  std::optional<uint64_t> bandwidth_limit;  // cdn.playback_bandwidth_kbit
  bool drain = false;                       // CS-4: no new viewers
  std::shared_ptr<const LiveNode> live;
};

struct RouteZone {
  std::string name;
  int fallback = -1;       // index of the fallback zone, -1: none or missing (Z-6)
  std::vector<int> nodes;  // indices into nodes(), in id order
  bool has_routes = false;
};

class RoutingSnapshot {
 public:
  using LiveLookup = std::function<std::shared_ptr<const LiveNode>(const std::string& id)>;
  // Builds the snapshot; `live` gives each node's live state.
  static std::shared_ptr<const RoutingSnapshot> Build(const ClusterConfig& config,
                                                      const LiveLookup& live);

  uint64_t revision() const { return revision_; }
  // Z-7: at least one zone has at least one route.
  bool restricted() const { return restricted_; }
  // The zone whose route is the longest match for `client` (Z-5), or -1.
  int ZoneOf(const net::IpAddress& client) const;
  // Z-8: the zone followed by its fallback chain, ending at none, a missing zone or a zone
  // already visited. Made once when the snapshot is built (a restricted decision walks it on
  // every redirect, P-2); empty for -1.
  const std::vector<int>& Chain(int zone) const;

  const std::vector<RouteNode>& nodes() const { return nodes_; }
  const std::vector<RouteZone>& zones() const { return zones_; }
  int ZoneIndex(const std::string& name) const;
  int NodeIndex(const std::string& id) const;
  const std::vector<int>& nodes_with_role(meshwork::v1::Role role) const;

  // Streams configured in central, and the nodes each is placed on.
  bool StreamConfigured(std::string_view stream) const;
  bool PlacedOn(std::string_view stream, int node) const;

  // A rotation counter for ties (Z-14), one per zone and one per unrestricted role group;
  // mutable state inside the immutable snapshot, shared by all readers.
  std::atomic<uint64_t>& Rotation(int zone) const;
  std::atomic<uint64_t>& RoleRotation(meshwork::v1::Role role) const;

 private:
  uint64_t revision_ = 0;
  bool restricted_ = false;
  net::PrefixTable<int> routes_;
  std::vector<RouteZone> zones_;
  std::vector<std::vector<int>> chains_;  // Chain(z) for every zone index z
  std::vector<RouteNode> nodes_;
  absl::flat_hash_map<std::string, int> zone_index_;
  absl::flat_hash_map<std::string, int> node_index_;
  std::vector<int> edges_, ingests_, origins_;
  absl::flat_hash_map<std::string, std::vector<int>> placements_;  // sorted node indices
  std::unique_ptr<std::atomic<uint64_t>[]> zone_rotation_;
  mutable std::atomic<uint64_t> edge_rotation_{0}, ingest_rotation_{0}, origin_rotation_{0};
};

}  // namespace meshwork::central
