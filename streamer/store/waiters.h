// Hold-until-publish (L-7, S-12, S-13): requests wait for an object that is due but not yet
// published. A waiter names (key, position) — the store's rendition or object, and how far it
// must be published — and fires once the store has published that far, or when its deadline
// passes, or when its key is removed.
//
// Contract:
// - A waiter's callback runs exactly once (while its executor runs handlers: one stopped for
//   good destroys the callbacks queued on it unrun), on the executor it was registered with, with
//   kPublished, kDeadline or kRemoved. Nothing blocks: completions are collected under the
//   internal mutex and posted to their executors after it is released, so callbacks never run
//   under any lock, nor inside Wait/Publish/Remove/Expire. One release's callbacks run in
//   registration order per executor, 16 per handler: each handler posts the next slice, so the
//   executor's reactor runs between slices (a worker releasing a thousand held reloads still
//   reads the requests they bring within one slice — P-13).
// - The number of waiters is capped (ResourceExhausted beyond max_waiters: the caller answers
//   503), never unbounded.
// - Cost: registering is O(log k) in the distinct positions waited for on the key; a publish
//   costs O(log k + released); removing a completed or expired waiter is O(1) (intrusive
//   lists). Deadlines sit in a hashed timer wheel of `tick`-wide slots: expiring n waiters is
//   O(n + slots passed), no asio timer per waiter.
// - Deadlines are time points of `clock->Monotonic()`. They fire at the first Expire() whose
//   now has reached them. Expire() is called by an internal sweeper (`sweep`: one asio timer
//   ticking every `tick` on the executor of a waiter, while any waiter is held; it stops when
//   none is and restarts with the next Wait), or by hand (tests with a FakeClock: Advance(),
//   then Expire(), then run the executors). A deadline fires at most about two ticks late.
//
// Thread-safe: every method may be called from any thread. The sweeper's timer lives on the
// executor it was started on; if that executor's io_context is stopped for good, deadlines
// wait for the next sweeper, which the next Wait starts once the stopped one's handlers are
// destroyed.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "boost/asio/any_io_executor.hpp"
#include "common/time/clock.h"
#include "streamer/store/position.h"

namespace meshwork::streamer {

class Waiters {
 public:
  enum class Outcome { kPublished, kDeadline, kRemoved };
  using Callback = std::function<void(Outcome)>;
  using TimePoint = std::chrono::steady_clock::time_point;  // of Clock::Monotonic()

  struct Options {
    size_t max_waiters = 20'000;
    const Clock* clock = &RealClock::Get();  // never null; outlives the Waiters
    std::chrono::milliseconds tick{10};      // deadline resolution (wheel slot, sweep period)
    bool sweep = true;                       // false: only explicit Expire() calls fire deadlines
  };

  explicit Waiters(size_t max_waiters);
  explicit Waiters(Options options);
  ~Waiters();  // completes every remaining waiter with kRemoved (posted to its executor)
  Waiters(const Waiters&) = delete;
  Waiters& operator=(const Waiters&) = delete;

  // Registers a waiter for `key` reaching `position`. ResourceExhausted when `max_waiters`
  // are already held (the callback is then dropped, never run).
  absl::Status Wait(const std::string& key, Position position,
                    boost::asio::any_io_executor executor, TimePoint deadline, Callback callback);

  // The key has published up to `published`: releases the waiters it satisfies.
  void Publish(const std::string& key, Position published);
  // The key is gone (stream removed): releases all its waiters with kRemoved.
  void Remove(const std::string& key);
  // Releases every waiter whose key starts with `prefix` with kRemoved.
  void RemovePrefix(const std::string& prefix);

  // Releases, with kDeadline, every waiter whose deadline is at or before the clock's now.
  // Returns how many were released.
  size_t Expire();

  size_t size() const;
  // Waiters inspected by Expire() so far: linear in the number expired (plus those of later
  // wheel laps passed over once per lap). For tests and metrics.
  uint64_t expiry_checks() const;

 private:
  struct State;
  class Sweeper;
  std::shared_ptr<State> state_;  // shared with the sweeper's handlers (weakly)
};

}  // namespace meshwork::streamer
