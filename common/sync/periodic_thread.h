// PeriodicThread: one thread that calls a function every `period` until stopped.
//
// Stop() (and the destructor) wakes the thread at once, however long the period, and joins
// it; a call in progress finishes first. The function runs only on the thread, never under
// the thread's own lock, so it may take the owner's locks. Start() once; Stop() is idempotent
// and may be called without Start(). The owner stops the thread before destroying anything the
// function uses (declare the PeriodicThread last, or call Stop() first in the destructor).
#pragma once

#include <chrono>
#include <functional>
#include <thread>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace meshwork {

class PeriodicThread {
 public:
  enum class First { kAfterPeriod, kAtOnce };

  PeriodicThread() = default;
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;
  ~PeriodicThread() { Stop(); }

  // Starts the thread: `fn` runs after each `period` (and once at once with kAtOnce).
  void Start(std::chrono::milliseconds period, std::function<void()> fn,
             First first = First::kAfterPeriod) {
    thread_ = std::thread([this, period, fn = std::move(fn), first] {
      if (first == First::kAtOnce) fn();
      while (WaitPeriod(period)) fn();
    });
  }

  void Stop() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    if (thread_.joinable()) thread_.join();
  }

 private:
  // False once stopped; true after a whole period without a stop.
  bool WaitPeriod(std::chrono::milliseconds period) {
    absl::MutexLock lock(&mu_);
    auto stopped = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_; };
    return !mu_.AwaitWithTimeout(absl::Condition(&stopped), absl::FromChrono(period));
  }

  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace meshwork
