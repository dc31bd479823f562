#include "streamer/delivery/play_sessions.h"

#include <algorithm>

#include "absl/hash/hash.h"
#include "common/status/absl_view.h"

namespace meshwork::streamer {

PlaySessions::Touched PlaySessions::Touch(std::string_view stream, std::string_view protocol,
                                          const net::IpAddress& client, std::string_view user_agent,
                                          std::chrono::milliseconds active_window, Login login,
                                          std::string_view first_protocol) {
  // A viewer is (client, stream, player): kept as a 64-bit hash, so a Touch allocates
  // nothing unless the viewer is new or changes protocol. Two viewers colliding would count
  // as one.
  const uint64_t key = absl::HashOf(client, stream, user_agent.substr(0, 256));
  const auto now = clock_.CoarseMonotonic();  // ages in seconds
  const auto expires = now + active_window;
  Shard& shard = ShardOf(key);
  std::string ended_protocol;  // the protocol of a session that ended, kept past its erasure
  {
    absl::MutexLock lock(&shard.mu);
    auto it = shard.viewers.find(key);
    if (it != shard.viewers.end()) {
      if (it->second.expires > now && it->second.login == login.name) {
        it->second.expires = expires;
        if (!protocol.empty() && it->second.protocol != protocol) it->second.protocol = protocol;
        return Touched::kKnown;
      }
      // a session that had ended (not yet swept), or the same player under another
      // login, starts again as a new one: counted and held to its login's limit.
      if (protocol.empty()) {
        ended_protocol = std::move(it->second.protocol);
        protocol = ended_protocol;
      }
      shard.viewers.erase(it);
      tracked_.fetch_sub(1, std::memory_order_relaxed);
    }
    if (protocol.empty()) protocol = first_protocol;
    if (protocol.empty()) return Touched::kKnown;
    if (tracked_.load(std::memory_order_relaxed) >= kMaxTracked) {
      // Full: a viewer under a limited login is not let in uncounted (A-8 fails closed).
      return login.max_sessions > 0 ? Touched::kOverLimit : Touched::kKnown;
    }
  }
  Entry entry{std::string(stream),
              std::string(protocol),
              expires,
              std::string(login.name),
              client,
              std::chrono::duration_cast<std::chrono::milliseconds>(clock_.Now().time_since_epoch())
                  .count()};
  if (login.name.empty()) {
    absl::MutexLock lock(&shard.mu);
    if (!shard.viewers.emplace(key, std::move(entry)).second) return Touched::kKnown;
    tracked_.fetch_add(1, std::memory_order_relaxed);
    return Touched::kNew;
  }
  // admitted under its login only while the login is below its limit.
  absl::MutexLock logins(&logins_mu_);
  auto& keys = logins_[AbslView(login.name)];
  if (login.max_sessions > 0 && PruneLocked(login.name, keys, now) >= login.max_sessions) {
    if (keys.empty()) logins_.erase(AbslView(login.name));
    return Touched::kOverLimit;
  }
  absl::MutexLock lock(&shard.mu);
  if (!shard.viewers.emplace(key, std::move(entry)).second) return Touched::kKnown;
  tracked_.fetch_add(1, std::memory_order_relaxed);
  // A viewer that came back may still be listed (its old session not pruned yet).
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  return Touched::kNew;
}

bool PlaySessions::Active(uint64_t key, std::string_view login,
                          std::chrono::steady_clock::time_point now) {
  Shard& shard = ShardOf(key);
  absl::MutexLock lock(&shard.mu);
  auto it = shard.viewers.find(key);
  return it != shard.viewers.end() && it->second.expires > now && it->second.login == login;
}

size_t PlaySessions::PruneLocked(std::string_view login, std::vector<uint64_t>& keys,
                                 std::chrono::steady_clock::time_point now) {
  std::erase_if(keys, [&](uint64_t key) { return !Active(key, login, now); });
  return keys.size();
}

size_t PlaySessions::SessionsOf(std::string_view login) {
  absl::MutexLock logins(&logins_mu_);
  auto it = logins_.find(AbslView(login));
  return it == logins_.end() ? 0 : PruneLocked(login, it->second, clock_.Monotonic());
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
      const Entry& e = it->second;
      ++counts.total;
      ++counts.by_stream[e.stream];
      ++counts.by_stream_protocol[{e.stream, e.protocol}];
      if (!e.login.empty() && counts.sessions.size() < kMaxListedSessions) {
        counts.sessions.push_back(
            Session{e.stream, e.login, e.protocol, e.client.ToString(), e.since_unix_ms});
      }
      ++it;
    }
  }
  // Logins whose viewers all expired go (each shard locked on its own, after the logins').
  absl::MutexLock logins(&logins_mu_);
  for (auto it = logins_.begin(); it != logins_.end();) {
    if (PruneLocked(it->first, it->second, now) == 0) {
      logins_.erase(it++);
    } else {
      ++it;
    }
  }
  return counts;
}

}  // namespace meshwork::streamer
