// S-23: an ingest node feeds origins. For every stream placed on this node whose object
// names `publish` targets ([{"to": origin id, "pipeline": id, "from": node id or null}]; a
// target with `from` is this node's only when it names this node), each object of the CMAF
// form the local packager publishes (init, parts, segments) is PUT to the target's publish
// listener as that pipeline (L-1), with the stream's token for it (M-3: the pipeline's own
// token, else the first publish token) and its timing (X-Media-Timing). The MPEG-TS form never
// crosses (S-25): the origin makes it from the CMAF segments (FeedTs).
//
// Nothing here can slow packaging or local viewers: the store's publish hook only appends to
// a bounded queue per target (at most kMaxQueuedObjects objects and kMaxQueuedBytes bytes; the
// oldest are dropped and counted beyond that) and returns. One thread per target sends in
// order, retrying an object with back-off until its retry deadline (three target durations
// after it was packaged), then drops it and goes on. Target addresses come from central
// (NodesFn, the Control/Nodes RPC) and are looked up again after a failure.
//
// Threads: OnPublish() on packaging threads, Apply() on the agent thread, Status() anywhere;
// a mutex guards the target map; each target's queue has its own mutex and condition.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/stream/defaults.h"
#include "common/time/clock.h"
#include "nlohmann/json.hpp"
#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"
#include "streamer/agent/node_config.h"
#include "streamer/store/origin_rules.h"

namespace meshwork::streamer::relay {

inline constexpr size_t kMaxQueuedObjects = 1024;
inline constexpr uint64_t kMaxQueuedBytes = 128ull << 20;

// node id → http://host:port of its publish listener (empty when unknown). Called on the
// targets' threads.
using NodesFn = std::function<absl::StatusOr<std::map<std::string, std::string>>(
    const std::vector<std::string>& node_ids)>;

class OriginFeed {
 public:
  // `node_id` is this node's; `clock` (retry deadlines) must outlive the feed; `metrics` may
  // be null.
  OriginFeed(std::string node_id, NodesFn nodes, const Clock& clock, prometheus::Registry* metrics);
  ~OriginFeed();  // stops the targets' threads (objects still queued are dropped)

  // The streams placed on this node and their `publish` targets.
  void Apply(const NodeConfig& config);
  // The store's publish hook: queues the local packager's objects for the stream's targets.
  void OnPublish(const std::string& stream, const std::string& rendition, ObjectKey key,
                 const std::shared_ptr<const Candidate>& candidate);
  // Per target: to, pipeline, queued objects and bytes, sent, failed attempts, dropped.
  nlohmann::json Status() const;
  // The same, grouped by the stream that feeds each target (M-5's per-stream /status).
  std::map<std::string, nlohmann::json> StatusByStream() const;

  class Target;

 private:
  struct StreamTargets {
    std::vector<std::shared_ptr<Target>> targets;
    std::vector<std::string> tokens;  // per target, the token it presents ("" for none)
    int segment_ms = stream_defaults::kSegmentMs;
  };

  const std::string node_id_;
  NodesFn nodes_;
  const Clock& clock_;
  prometheus::Registry* metrics_;
  mutable absl::Mutex mu_;
  std::map<std::string, StreamTargets> streams_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<Target>> targets_ ABSL_GUARDED_BY(mu_);  // "to/pipeline"
};

}  // namespace meshwork::streamer::relay
