// The viewer routing decision (Z-7…Z-18, Z-24) over a RoutingSnapshot and the nodes' live
// state. Stateless apart from the snapshot's rotation counters; safe to call from any
// thread; never blocks and never touches the store.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "central/routing/routing_snapshot.h"
#include "common/net/ip_address.h"
#include "common/time/clock.h"

namespace meshwork::central {

using LiveStreams = absl::flat_hash_set<std::string>;

struct Candidate {
  int node = -1;
  std::optional<uint64_t> play_sessions;
  bool held = false;  // placed there, its own copy not working (yet): ordered last
};

struct ZoneCandidates {
  int zone = -1;                 // -1 in unrestricted mode
  std::vector<Candidate> nodes;  // eligible nodes, fewest Play sessions first
};

struct RouteDecision {
  bool restricted = false;
  int client_zone = -1;
  std::vector<ZoneCandidates> zones;  // in chain order (kListAll: every chain zone)
  int selected = -1;                  // node index
};

enum class RouteMode {
  kDecide,   // stop at the first zone with an eligible node and pick one (rotating ties)
  kListAll,  // list every candidate zone and its eligible nodes; pick without rotating
  // kDecide's choice alone: `zones` is left empty and nothing is allocated (a viewer's
  // redirect needs only the node, P-2).
  kSelect,
};

class Selector {
 public:
  Selector(const Clock& clock, std::chrono::nanoseconds offline_after)
      : clock_(clock), offline_after_(offline_after) {}

  // NotFound: the stream is neither configured nor live anywhere. Unavailable: restricted
  // mode and the client is unknown or matches no route (Z-9), or no node is eligible.
  absl::StatusOr<RouteDecision> Route(const RoutingSnapshot& snapshot, const LiveStreams& live,
                                      std::string_view stream,
                                      const std::optional<net::IpAddress>& client,
                                      RouteMode mode) const;

  // Z-13: online, able to serve `stream`, not draining (CS-4), and no limit excludes it
  // (Z-15…Z-17).
  bool Eligible(const RoutingSnapshot& snapshot, const LiveStreams& live, int node,
                std::string_view stream) const;

  // Online and able to serve `stream`, whatever its limits and drain say (CS-2: such a node
  // is still a pathway, ordered last): an edge while the stream works somewhere; any other
  // node placed there or whose own copy works. Route() orders a placed node whose copy does
  // not work after every node whose copy does.
  bool Serves(const RoutingSnapshot& snapshot, const LiveStreams& live, int node,
              std::string_view stream) const;

  // Z-24 over a canonical VOD object ({"placements": [{streamer, revision, available}]}).
  // Returns the chosen node index. Unavailable when nothing is allowed.
  absl::StatusOr<int> ChooseVod(const RoutingSnapshot& snapshot, const nlohmann::json& vod,
                                const std::optional<net::IpAddress>& client) const;

 private:
  // `now`: the clock's Monotonic(), read once per decision.
  bool OnlineWithinLimits(const RouteNode& node, std::chrono::steady_clock::time_point now) const;
  bool Eligible(const RoutingSnapshot& snapshot, const LiveStreams& live, int node,
                std::string_view stream, std::chrono::steady_clock::time_point now) const;
  bool Serves(const RoutingSnapshot& snapshot, const LiveStreams& live, int node,
              std::string_view stream, std::chrono::steady_clock::time_point now) const;
  // Sorts eligible `nodes` by load into `out`.
  void Collect(const RoutingSnapshot& snapshot, const LiveStreams& live,
               const std::vector<int>& nodes, std::string_view stream,
               std::chrono::steady_clock::time_point now, std::vector<Candidate>& out) const;
  // Fewest sessions; ties in turn using `rotation` (or the first when it is null).
  static int Pick(const std::vector<Candidate>& sorted, std::atomic<uint64_t>* rotation);

  const Clock& clock_;
  std::chrono::nanoseconds offline_after_;
};

}  // namespace meshwork::central
