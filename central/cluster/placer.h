// C-9: placement by count. A stream whose placement is {"count": k, "zone": z, …} has its
// placement.streamers chosen by central: the nodes of zone `z` (any zone when null) with the
// most unused `cdn.network_bandwidth_kbit` budget, where each stream placed on a node uses
// its bitrate × (1 + publish targets) of that node's RX+TX budget.
//
// PlaceByCount() is the pure decision. The Placer applies it two ways:
//  - Fill() is ConfigService's StreamFiller: every write of a count-placed stream (PUT, PATCH,
//    masks, anchors) commits a placement decided against the configuration it is written
//    into, so a PUT answers with its nodes already chosen;
//  - Tick(), every second on the leader (C-10), writes each count-placed stream whose decision
//    changed: a node offline for `replace_after_s` is replaced, a node that came online fills
//    a placement short of its count.
// A node is "offline since" the first round (or Fill) that found it offline, or since the
// placer started for nodes it never saw: a central that just started does not re-place at once.
//
// Thread-safe. Fill() runs under ConfigService's write lock and never calls ConfigService;
// Tick() blocks on the store (its own thread, never an HTTP worker or gRPC reactor).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "central/cluster/node_state.h"
#include "central/model/config_service.h"
#include "common/sync/periodic_thread.h"
#include "common/time/clock.h"
#include "nlohmann/json.hpp"
#include "prometheus/counter.h"
#include "prometheus/registry.h"

namespace meshwork::central {

// What one placement decision reads.
struct PlacementView {
  const ClusterConfig& config;
  const NodeStates& nodes;
  const std::map<std::string, int64_t>& offline_since_ms;  // node id → Unix ms
  int64_t now_ms = 0;
};

// The most a stream's renditions are taken to add up to, kbit/s (100 Gbit/s).
inline constexpr int64_t kMaxStreamKbit = 100'000'000;

// The stream's use of a node's budget, kbit/s: its bitrate × (1 + publish targets). The
// bitrate is the largest total of rendition bitrates a node the stream is placed on reports
// for it (at most kMaxStreamKbit), else the operator's placement.bitrate_kbit, else 0.
int64_t PlacementNeedKbit(const std::string& name, const nlohmann::json& stream,
                          const NodeStates& nodes);

struct PlacementDecision {
  std::vector<std::string> streamers;  // in order: kept nodes first, then new ones
  std::vector<std::string> replaced;   // dropped because offline for replace_after_s or more
};

// For a canonical stream with a count placement: keeps the listed nodes that are still
// configured, in the zone, not edges, and online or offline for less than replace_after_s
// in their order (a lowered count drops offline ones first); then adds eligible nodes (online, in
// the zone, not edges, budget not 0, unused budget ≥ the stream's need; a null budget is unlimited)
// by most unused budget, then fewest placed streams, then id, up to `count`. Fewer eligible
// nodes than `count`: as many as there are.
PlacementDecision PlaceByCount(const PlacementView& view, const std::string& name,
                               const nlohmann::json& stream);

class Placer {
 public:
  using NodesFn = std::function<NodeStates()>;
  // `config` must outlive the placer; `metrics` may be null.
  Placer(ConfigService* config, NodesFn nodes, const Clock& clock, prometheus::Registry* metrics);
  ~Placer();  // stops the timer

  // C-10: only the leader re-places (Tick writes nothing elsewhere). Call before Start().
  void set_leader_check(std::function<bool()> is_leader) { is_leader_ = std::move(is_leader); }
  void Start(std::chrono::milliseconds period);
  void Stop();

  // ConfigService::StreamFiller.
  void Fill(const ClusterConfig& current, const std::string& name, nlohmann::json& stream);
  // One round: notes offline nodes; on the leader, writes every count-placed stream whose
  // decision differs from its stored placement. Returns the streams written.
  std::vector<std::string> Tick();

 private:
  // Updates offline_since_ms_ from `nodes` and the configured streamers.
  void NoteOffline(const ClusterConfig& config, const NodeStates& nodes, int64_t now_ms)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  ConfigService* config_;
  NodesFn nodes_;
  const Clock& clock_;
  const int64_t started_ms_;
  std::function<bool()> is_leader_;  // set before Start(), then only read
  prometheus::Counter* replaced_total_ = nullptr;

  absl::Mutex mu_;
  std::map<std::string, int64_t> offline_since_ms_ ABSL_GUARDED_BY(mu_);

  PeriodicThread timer_;  // last: stopped before the members Tick() reads
};

}  // namespace meshwork::central
