// Hold-until-publish (L-7, S-12, S-13): requests wait for an object that is due but not yet
// published. A waiter names (stream, rendition, msn, part) and fires once the store has
// published that far, or when its deadline passes.
//
// Nobody blocks: a waiter is a completion handler, the executor it must run on (its
// connection's worker) and a deadline timer on that executor. Publish() posts each ready
// waiter's completion to its own executor. The number of waiters is capped per node
// (ResourceExhausted beyond it: the caller answers 503), never unbounded.
// Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "boost/asio/any_io_executor.hpp"
#include "streamer/store/position.h"

namespace meshwork::streamer {

class Waiters {
 public:
  enum class Outcome { kPublished, kDeadline, kRemoved };
  using Callback = std::function<void(Outcome)>;

  explicit Waiters(size_t max_waiters) : max_waiters_(max_waiters) {}
  ~Waiters();  // completes every remaining waiter with kRemoved

  // Registers a waiter; `callback` runs exactly once, on `executor`.
  // ResourceExhausted when `max_waiters` are already held.
  absl::Status Wait(const std::string& key, Position position,
                    boost::asio::any_io_executor executor,
                    std::chrono::steady_clock::time_point deadline, Callback callback);

  // The rendition `key` has published up to `published`: releases the waiters it satisfies.
  void Publish(const std::string& key, Position published);
  // The rendition is gone (stream removed): releases all its waiters with kRemoved.
  void Remove(const std::string& key);
  // Releases every waiter whose key starts with `prefix` with kRemoved.
  void RemovePrefix(const std::string& prefix);

  size_t size() const { return count_.load(); }

 private:
  struct Waiter;
  void Complete(const std::shared_ptr<Waiter>& waiter, Outcome outcome);

  const size_t max_waiters_;
  std::atomic<size_t> count_{0};
  absl::Mutex mu_;
  std::map<std::string, std::vector<std::shared_ptr<Waiter>>> by_key_ ABSL_GUARDED_BY(mu_);
};

}  // namespace meshwork::streamer
