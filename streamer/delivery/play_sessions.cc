#include "streamer/delivery/play_sessions.h"

#include "absl/hash/hash.h"

namespace meshwork::streamer {

bool PlaySessions::Touch(std::string_view stream, std::string_view protocol,
                         const net::IpAddress& client, std::string_view user_agent,
                         std::chrono::milliseconds active_window) {
  // A viewer is (client, stream, player): kept as a 64-bit hash, so a Touch allocates
  // nothing unless the viewer is new or changes protocol. Two viewers colliding would count
  // as one.
  uint64_t key = absl::HashOf(client, stream, user_agent.substr(0, 256));
  auto expires = clock_.Monotonic() + active_window;
  Shard& shard = shards_[key % kShards];
  absl::MutexLock lock(&shard.mu);
  auto it = shard.viewers.find(key);
  if (it != shard.viewers.end()) {
    it->second.expires = expires;
    if (!protocol.empty() && it->second.protocol != protocol) it->second.protocol = protocol;
    return false;
  }
  if (protocol.empty()) return false;
  if (tracked_.load(std::memory_order_relaxed) >= kMaxTracked) return false;
  tracked_.fetch_add(1, std::memory_order_relaxed);
  shard.viewers.emplace(key, Entry{std::string(stream), std::string(protocol), expires});
  return true;
}

PlaySessions::Counts PlaySessions::Count() {
  Counts counts;
  auto now = clock_.Monotonic();
  // One shard at a time: a Touch waits for at most one shard's walk.
  for (Shard& shard : shards_) {
    absl::MutexLock lock(&shard.mu);
    for (auto it = shard.viewers.begin(); it != shard.viewers.end();) {
      if (it->second.expires <= now) {
        shard.viewers.erase(it++);
        tracked_.fetch_sub(1, std::memory_order_relaxed);
        continue;
      }
      ++counts.total;
      ++counts.by_stream[it->second.stream];
      ++counts.by_stream_protocol[{it->second.stream, it->second.protocol}];
      ++it;
    }
  }
  return counts;
}

}  // namespace meshwork::streamer
