// S-21: the upstreams one relayed stream may pull from and the one it pulls from now, shared
// by the stream's rendition threads. Central is asked (UpstreamsFn) when none is left to try;
// an upstream that failed within the last kFailedMemory is put last — central still lists a
// node whose viewer port is black-holed (R-9: its control channel is another port), and
// trying it first again would cost another deadline.
//
// Central is asked again at most every kMinAskInterval, and when every upstream of the last
// answer had failed (a lone upstream that refuses at once: a crashed parent edge still listed)
// the interval doubles up to kMaxAskInterval; Connect() is false meanwhile and the caller
// pauses. An answer that names an upstream not failed lately starts over from the minimum.
//
// Thread-safe (one mutex; the UpstreamsFn call happens under it, so two threads never ask
// central at once for the same stream).
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/time/clock.h"
#include "streamer/relay/relay.h"

namespace meshwork::streamer::relay {

class UpstreamList {
 public:
  static constexpr auto kFailedMemory = std::chrono::seconds(10);
  static constexpr auto kMinAskInterval = std::chrono::milliseconds(100);
  static constexpr auto kMaxAskInterval = std::chrono::milliseconds(500);

  // `upstreams` and `clock` outlive this.
  UpstreamList(std::string stream, const UpstreamsFn* upstreams, const Clock& clock)
      : stream_(std::move(stream)), upstreams_fn_(upstreams), clock_(clock) {}

  // Asks central for upstreams when there are none left to try (see the ask interval above).
  // False when none is known, or central was asked too recently to ask again.
  bool Connect();
  // Moves on from `failed` (a base URL) to the next upstream; Connect() asks central again
  // after the last. False (a no-op) when another thread moved on already.
  bool Next(const std::string& failed);

  // The upstream pulled from now; empty strings when none.
  std::string node_id() const;
  std::string base_url() const;
  std::string zone() const;
  std::string timeline_fingerprint() const;

 private:
  const UpstreamNode* CurrentLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return current_ < upstreams_.size() ? &upstreams_[current_] : nullptr;
  }

  const std::string stream_;
  const UpstreamsFn* upstreams_fn_;
  const Clock& clock_;
  mutable absl::Mutex mu_;
  std::vector<UpstreamNode> upstreams_ ABSL_GUARDED_BY(mu_);
  size_t current_ ABSL_GUARDED_BY(mu_) = 0;
  // When each upstream (base URL) last failed; forgotten after kFailedMemory.
  std::map<std::string, std::chrono::steady_clock::time_point> failed_at_ ABSL_GUARDED_BY(mu_);
  std::optional<std::chrono::steady_clock::time_point> next_ask_ ABSL_GUARDED_BY(mu_);
  std::chrono::milliseconds ask_interval_ ABSL_GUARDED_BY(mu_) = kMinAskInterval;
};

}  // namespace meshwork::streamer::relay
