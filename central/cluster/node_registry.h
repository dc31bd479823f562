// Central's live view of the nodes: registrations, sessions, latest load reports and
// online/offline state (C-4).
//
// A node is online while at least one Session of it is attached and its last report is
// younger than `offline_after`. Sweep() turns that rule into transitions (logged, counted);
// IsOnline() answers it directly from the clock, so routing never sees a stale "online".
// All methods are thread-safe; none blocks on I/O (Report() hands the report to a
// ReportWriter, whose own thread writes it to the store, unsynced).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "central/cluster/live_node.h"
#include "central/cluster/node_state.h"
#include "central/cluster/report_writer.h"
#include "central/model/config_service.h"
#include "central/store/store.h"
#include "common/sync/periodic_thread.h"
#include "common/sync/snapshot.h"
#include "common/time/clock.h"
#include "meshwork/v1/control.pb.h"
#include "nlohmann/json.hpp"
#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"

namespace meshwork::central {

// One attached Session as the registry sees it: something config changes are pushed to.
class NodeChannel {
 public:
  virtual ~NodeChannel() = default;
  // Must not block; called with no registry lock held.
  virtual void ConfigChanged(std::shared_ptr<const ClusterConfig> config) = 0;
  // O-6/O-15: the node's OTT group views changed; send them on their own (an update with the
  // revision already sent and only the ott_groups section). Must not block.
  virtual void OttViewsChanged(const meshwork::v1::OttGroupViews& views) {}
  // A newer session of the same node took this one's place (Attach): end it. Must not block.
  virtual void Evict() {}
};

class NodeRegistry {
 public:
  NodeRegistry(const Clock& clock, std::chrono::milliseconds offline_after, Store* store,
               prometheus::Registry* metrics);
  ~NodeRegistry();

  void Registered(const meshwork::v1::RegisterRequest& request);
  // Attaches a session of the node. Beyond `max_sessions` the oldest ones are evicted
  // (NodeChannel::Evict, outside the lock; they Detach when they end): the newest session of
  // a node wins — one whose link died silently leaves a session behind until its connection
  // is found dead — and a client opening many holds no more than `max_sessions` queues.
  void Attach(const std::string& node_id, std::shared_ptr<NodeChannel> channel,
              size_t max_sessions = SIZE_MAX);
  void Detach(const std::string& node_id, const NodeChannel* channel);
  void Report(const std::string& node_id, const meshwork::v1::LoadReport& report);
  // C-10: a node attached to another central, as the shared store reports it (a serialized
  // v1::SharedNodeState; nullopt when its report is gone). It counts as one session while
  // its report lasts, so it is online while the reports keep coming; a node attached here
  // ignores what others say of it.
  void RemoteReport(const std::string& node_id, const std::optional<std::string>& value);

  bool IsOnline(const std::string& node_id) const;

  // Called by Report() with every report, on the reporting thread (a gRPC reactor: the
  // listener must not block), with no registry lock held. Set once, before any session.
  using ReportListener =
      std::function<void(const std::string& node_id, const meshwork::v1::LoadReport&)>;
  void SetReportListener(ReportListener listener) { report_listener_ = std::move(listener); }

  // The lock-free state of a node for routing; created on first use and kept for the life of
  // the registry.
  std::shared_ptr<LiveNode> Live(const std::string& node_id);
  // Streams some online node reports working ("live somewhere", Z-13). Refreshed when a
  // report names a stream not yet in it and on every Sweep().
  using StreamSet = absl::flat_hash_set<std::string>;
  std::shared_ptr<const StreamSet> live_streams() const { return live_streams_.Get(); }
  // The same through a reader's own cache (Snapshot::Read): valid until that cache's next read.
  const StreamSet* ReadLiveStreams(Snapshot<StreamSet>::ReadCache& cache) const {
    return live_streams_.Read(cache);
  }
  std::chrono::milliseconds offline_after() const { return offline_after_; }
  const Clock& clock() const { return clock_; }
  // The read-only `status` member of a streamer object (M-1).
  nlohmann::json StatusJson(const std::string& node_id) const;

  // What the OTT evaluator needs of every known node (registration, latest report, online,
  // central's receive time of the report).
  NodeStates OttNodeStates() const;
  // Replaces the OTT group views of every node (a node absent from `views` has none) and
  // sends each node whose views changed its new views on every attached channel. A channel
  // attached later gets the node's current views at once.
  void SetOttViews(std::map<std::string, meshwork::v1::OttGroupViews> views);
  // The node's current views (empty when it is a member of no group).
  meshwork::v1::OttGroupViews OttViews(const std::string& node_id) const;
  // S-6: `stream`'s timeline fingerprint in the node's latest report; empty when none.
  std::string TimelineFingerprint(const std::string& node_id, const std::string& stream) const;

  // Pushes a new configuration to every attached channel.
  void ConfigChanged(std::shared_ptr<const ClusterConfig> config);

  // Applies the online rule: logs and counts transitions, updates gauges.
  void Sweep();
  // Runs Sweep() every `period` on a thread of its own until destruction.
  void StartSweeper(std::chrono::milliseconds period);

 private:
  struct Node {
    meshwork::v1::RegisterRequest registration;
    bool registered = false;
    std::vector<std::shared_ptr<NodeChannel>> channels;
    bool has_report = false;
    meshwork::v1::LoadReport report;
    std::chrono::steady_clock::time_point report_at;
    Clock::TimePoint report_wall;
    bool online = false;  // as of the last Sweep()
    bool remote = false;  // known from another central's reports (holds one session)
    meshwork::v1::OttGroupViews ott_views;
    std::string ott_views_bytes;  // serialized, to tell a change
    bool had_views = false;       // some views were ever set (a Register snapshot had them)
    std::shared_ptr<LiveNode> live = std::make_shared<LiveNode>();
  };
  void RefreshLiveStreamsLocked() ABSL_SHARED_LOCKS_REQUIRED(mu_);
  void RegisteredLocked(Node& node, const meshwork::v1::RegisterRequest& request)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ApplyReportLocked(Node& node, const meshwork::v1::LoadReport& report)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool OnlineLocked(const Node& node) const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  const Clock& clock_;
  const std::chrono::milliseconds offline_after_;
  std::unique_ptr<ReportWriter> report_writer_;  // null without a store
  mutable absl::Mutex mu_;
  std::map<std::string, Node> nodes_ ABSL_GUARDED_BY(mu_);
  Snapshot<StreamSet> live_streams_;
  ReportListener report_listener_;  // set before sessions start, then only read

  prometheus::Counter* heartbeats_ = nullptr;
  prometheus::Gauge* online_gauge_ = nullptr;
  prometheus::Gauge* offline_gauge_ = nullptr;
  prometheus::Counter* went_online_ = nullptr;
  prometheus::Counter* went_offline_ = nullptr;
  prometheus::Gauge* sessions_gauge_ = nullptr;

  PeriodicThread sweeper_;  // last: stopped before the members Sweep() reads
};

}  // namespace meshwork::central
