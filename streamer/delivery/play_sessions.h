// Play session accounting (S-18): a viewer is (client address, stream, user agent) — the
// spec's key without a session id — and carries the protocol its last playlist or manifest
// request named ("hls", "ll-hls", "dash"). Media objects that do not name a protocol
// (init, CMAF segments) keep a known viewer active and never make a new one. Active while
// it made a request within the last `active_window` (2 × target duration). Counts by stream
// and protocol feed the load report. Bounded: about kMaxTracked viewers are tracked
// (concurrent callers may pass it by one each); beyond that new ones are not counted.
// Thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "common/net/ip_address.h"
#include "common/time/clock.h"

namespace meshwork::streamer {

class PlaySessions {
 public:
  static constexpr size_t kMaxTracked = 1'000'000;
  explicit PlaySessions(const Clock& clock) : clock_(clock) {}

  // `protocol` empty: the request does not say (an object both CMAF protocols fetch).
  // True when this made a new viewer (A-10 counts admissions per play session).
  bool Touch(std::string_view stream, std::string_view protocol, const net::IpAddress& client,
             std::string_view user_agent, std::chrono::milliseconds active_window);

  struct Counts {
    uint64_t total = 0;
    std::map<std::string, uint64_t> by_stream;
    std::map<std::pair<std::string, std::string>, uint64_t> by_stream_protocol;
  };
  // Forgets expired viewers and counts the rest.
  Counts Count();

 private:
  static constexpr size_t kShards = 16;
  struct Entry {
    std::string stream;
    std::string protocol;
    std::chrono::steady_clock::time_point expires;
  };
  struct Shard {
    absl::Mutex mu;
    absl::flat_hash_map<uint64_t, Entry> viewers ABSL_GUARDED_BY(mu);
  };
  const Clock& clock_;
  // Sharded by viewer, so playlist requests on different workers rarely share a lock.
  std::array<Shard, kShards> shards_;
  std::atomic<size_t> tracked_{0};  // across shards; bounds the total at kMaxTracked
};

}  // namespace meshwork::streamer
