// The two anchors of one stream's timeline on this node (S-5):
//  - the stream's anchor as central keeps it (pushed in the stream object; set by the agent's
//    thread through StreamManager), and
//  - the anchor the segmenter dates segments with ("in use": central's once adopted, else the
//    segmenter's own proposal), which the load report carries to central.
// The segmenter polls `central_generation()` (one atomic load per frame) and reads the
// central anchor only when it changed.
//
// Thread-safe: any thread may call anything.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>

#include "absl/synchronization/mutex.h"
#include "common/time/timeline_anchor.h"

namespace meshwork::streamer {

class TimelineAnchors {
 public:
  // Central's anchor for the stream (nullopt: central has none yet). Bumps the generation
  // only when the value changes.
  void SetCentral(std::optional<TimelineAnchor> anchor) {
    absl::MutexLock lock(&mu_);
    if (central_ == anchor) return;
    central_ = anchor;
    generation_.fetch_add(1, std::memory_order_release);
  }
  std::optional<TimelineAnchor> Central() const {
    absl::MutexLock lock(&mu_);
    return central_;
  }
  uint64_t central_generation() const { return generation_.load(std::memory_order_acquire); }

  void SetInUse(TimelineAnchor anchor) {
    absl::MutexLock lock(&mu_);
    in_use_ = anchor;
  }
  std::optional<TimelineAnchor> InUse() const {
    absl::MutexLock lock(&mu_);
    return in_use_;
  }

 private:
  mutable absl::Mutex mu_;
  std::optional<TimelineAnchor> central_ ABSL_GUARDED_BY(mu_);
  std::optional<TimelineAnchor> in_use_ ABSL_GUARDED_BY(mu_);
  std::atomic<uint64_t> generation_{0};
};

}  // namespace meshwork::streamer
