// CS-2…CS-5: central's steering server. `GET /steering/{stream}` answers the steering
// manifest of HLS Content Steering (Apple, VERSION 1: TTL, RELOAD-URI, PATHWAY-PRIORITY) or,
// for a DASH client (`_DASH_pathway`/`_DASH_throughput` in the query, or `format=dash`), of
// DASH-IF content steering (SERVICE-LOCATION-PRIORITY, spec 10's name, beside PATHWAY-PRIORITY,
// the DASH-IF manifest's key that dash.js 5 and Shaka read). Pathway ids are node ids.
//
// The priority is the selector's own order for this viewer now (Z-5…Z-19): the client's zone
// and its fallback chain, nodes by load within a zone, in kListAll mode; then nodes that are
// online and serve the stream but may not take viewers (draining, CS-4, or over a limit,
// Z-15…Z-17). Offline nodes are left out. Stickiness (CS-3): the viewer's current pathway
// (`_HLS_pathway`/`_DASH_pathway`) stays first while it is eligible, in the best zone that
// has an eligible node, and not more than `rebalance_percent` (plus one session) more loaded
// than the best node; a move for load alone is rate-limited per stream (`max_moves_per_s`),
// so a rebalance does not stampede. Computed from the routing snapshot and the nodes' live
// numbers only (CS-5): no store read, no I/O.
//
// Thread-safe. Answers: 200 with the manifest; 410 for a stream the cluster does not know;
// 503 + Retry-After when no node serves it for this viewer; 429 + Retry-After beyond
// `max_answers_per_client_per_s` answers in a second to one client address (an IPv6 /64;
// net::AddressRate) or `max_answers_per_s` to all (the player keeps its pathway and asks
// again): one address cannot spend the whole budget alone (many addresses still can). A
// central behind a load balancer that is not among the trusted proxies sees every viewer
// as one address: raise the share, or 0 turns it off.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "central/model/config_service.h"
#include "central/routing/routing_service.h"
#include "common/metrics/metrics.h"
#include "common/net/address_rate.h"
#include "common/net/ip_address.h"
#include "common/sync/snapshot.h"
#include "common/time/clock.h"
#include "nlohmann/json.hpp"
#include "prometheus/registry.h"

namespace meshwork::central {

struct SteeringRequest {
  std::string stream;
  std::optional<net::IpAddress> client;
  bool dash = false;
  std::string current;     // the pathway the player is on; empty when it did not say
  std::string base_query;  // the viewer's own query, without _HLS_/_DASH_ parameters
};

// Parses the query of a steering request into `out` (stream and client not touched).
void ParseSteeringQuery(std::string_view query, SteeringRequest& out);

// The order of pathways for one viewer (CS-2, CS-3), a pure function.
struct PathwayNode {
  std::string id;
  int zone_rank = 0;      // position of its zone in the viewer's chain (0 = the client's own)
  uint64_t load = 0;      // play sessions
  bool eligible = false;  // may take viewers now; false: draining or over a limit
};
struct PriorityResult {
  std::vector<std::string> priority;
  bool moved_for_load = false;  // the current pathway lost first place to load alone
};
// `nodes` in the selector's order (eligible ones by zone rank then load, then the others).
// `allow_load_move` false keeps a current pathway first when only load would move it.
PriorityResult PathwayPriority(const std::vector<PathwayNode>& nodes, const std::string& current,
                               int64_t rebalance_percent, bool allow_load_move);

class SteeringService {
 public:
  struct Options {
    int64_t max_answers_per_s = 20000;
    int64_t max_answers_per_client_per_s = 200;
    int64_t max_moves_per_s = 20;  // per stream, moves for load alone (CS-3)
  };
  // `routing` and `config` must outlive the service; `metrics` may be null.
  SteeringService(Options options, RoutingService* routing, ConfigService* config,
                  const Clock& clock, prometheus::Registry* metrics);

  struct Answer {
    int status = 200;
    nlohmann::json body;        // the manifest (200) or {"error": …}
    int64_t retry_after_s = 0;  // 429, 503
  };
  Answer Steer(const SteeringRequest& request);

  // Central's base URL for players ("http://host:port"), RELOAD-URI's; set once the
  // listener is bound (any thread).
  void set_public_base(std::string base) {
    public_base_.Set(std::make_shared<const std::string>(std::move(base)));
  }

 private:
  int64_t NowSeconds() const;
  bool AdmitAnswer();
  bool AdmitMove(const std::string& stream);

  const Options options_;
  RoutingService* routing_;
  ConfigService* config_;
  const Clock& clock_;
  std::atomic<int64_t> second_{0};
  std::atomic<int64_t> answers_in_second_{0};
  net::AddressRate per_client_;
  Snapshot<std::string> public_base_{std::make_shared<const std::string>()};
  absl::Mutex mu_;
  // Per stream: the second of the last load move and the moves in it.
  absl::flat_hash_map<std::string, std::pair<int64_t, int64_t>> moves_ ABSL_GUARDED_BY(mu_);
  metrics::LabeledCounters answers_;        // by result
  metrics::LabeledCounters moves_counter_;  // by reason
};

}  // namespace meshwork::central
