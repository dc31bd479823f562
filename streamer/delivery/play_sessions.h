// Play session accounting (S-18) and per-login limits. A viewer is (client address,
// stream, user agent) — the spec's key without a session id — and carries the protocol its
// last playlist or manifest request named ("hls", "ll-hls", "dash"). Media objects that do
// not name a protocol (init, CMAF segments) keep a known viewer active and never make a new
// one. Active while it made a request within the last `active_window` (2 × target duration).
// Counts by stream and protocol feed the load report. Bounded: about kMaxTracked viewers are
// tracked (concurrent callers may pass it by one each); beyond that new ones are not counted.
//
// a viewer admitted with a login (a token's `sub`) is counted under it on this node; a
// new viewer of a login that already holds `max_per_login` active sessions is refused and not
// tracked. The sessions of logins are listed for the load report, at most
// kMaxListedSessions.
// Thread-safe. Locks: a viewer's shard; for a new viewer with a login, the logins' lock and
// then shards (never the other way round).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "common/net/ip_address.h"
#include "common/time/clock.h"

namespace meshwork::streamer {

// the login a viewer is admitted under, and the most active sessions it may hold here.
struct PlayLogin {
  std::string_view name;      // empty: none
  uint64_t max_sessions = 0;  // 0: no limit
};

class PlaySessions {
 public:
  static constexpr size_t kMaxTracked = 1'000'000;
  static constexpr size_t kMaxListedSessions = 5'000;
  explicit PlaySessions(const Clock& clock) : clock_(clock) {}

  enum class Touched { kKnown, kNew, kOverLimit };
  using Login = PlayLogin;
  // `protocol` empty: the request does not say (an object both CMAF protocols fetch); such a
  // request makes a new viewer only with `first_protocol` (S-17, CS-1: a DASH player moved
  // here by a BaseURL asks for segments only, never for this node's MPD), and never changes a
  // known viewer's protocol. kNew when this made a new viewer (A-10 counts admissions per play
  // session); kOverLimit when it would have, but its login holds `max_sessions` active
  // sessions already.
  Touched Touch(std::string_view stream, std::string_view protocol, const net::IpAddress& client,
                std::string_view user_agent, std::chrono::milliseconds active_window,
                Login login = {}, std::string_view first_protocol = {});

  // an active session of a login.
  struct Session {
    std::string stream;
    std::string login;
    std::string protocol;
    std::string client;
    int64_t since_unix_ms = 0;
  };
  struct Counts {
    uint64_t total = 0;
    std::map<std::string, uint64_t> by_stream;
    std::map<std::pair<std::string, std::string>, uint64_t> by_stream_protocol;
    std::vector<Session> sessions;  // those with a login, at most kMaxListedSessions
  };
  // Forgets expired viewers and counts the rest.
  Counts Count();

  // The active sessions of `login` on this node.
  size_t SessionsOf(std::string_view login);

 private:
  static constexpr size_t kShards = 16;
  struct Entry {
    std::string stream;
    std::string protocol;
    std::chrono::steady_clock::time_point expires;
    std::string login;  // empty: none
    net::IpAddress client;
    int64_t since_unix_ms = 0;
  };
  struct Shard {
    absl::Mutex mu;
    absl::flat_hash_map<uint64_t, Entry> viewers ABSL_GUARDED_BY(mu);
  };
  Shard& ShardOf(uint64_t key) { return shards_[key % kShards]; }
  // Whether viewer `key` is tracked, active at `now` and under `login`.
  bool Active(uint64_t key, std::string_view login, std::chrono::steady_clock::time_point now);
  // Drops the keys of `login` no longer active under it; returns how many are left.
  size_t PruneLocked(std::string_view login, std::vector<uint64_t>& keys,
                     std::chrono::steady_clock::time_point now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(logins_mu_);

  const Clock& clock_;
  // Sharded by viewer, so playlist requests on different workers rarely share a lock.
  std::array<Shard, kShards> shards_;
  std::atomic<size_t> tracked_{0};  // across shards; bounds the total at kMaxTracked
  absl::Mutex logins_mu_;
  // login → its viewers' keys (some possibly expired, pruned when the login is next
  // admitted and on every Count).
  absl::flat_hash_map<std::string, std::vector<uint64_t>> logins_ ABSL_GUARDED_BY(logins_mu_);
};

}  // namespace meshwork::streamer
