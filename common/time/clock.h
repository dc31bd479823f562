// Injectable time. Code that decides by time (offline detection, templates, holds, passes)
// takes a Clock so tests can move time by hand.
#pragma once

#include <time.h>

#include <chrono>

#include "absl/synchronization/mutex.h"

namespace meshwork {

class Clock {
 public:
  using Duration = std::chrono::nanoseconds;
  using TimePoint = std::chrono::time_point<std::chrono::system_clock, Duration>;
  virtual ~Clock() = default;
  // Wall-clock time (for timestamps that leave the process).
  virtual TimePoint Now() const = 0;
  // Monotonic time (for ages and deadlines).
  virtual std::chrono::steady_clock::time_point Monotonic() const = 0;
  // The same two clocks as of the kernel's last tick: behind the precise reading by at most
  // one tick (a few milliseconds), never ahead of it, at a tenth of its cost. For what counts
  // in seconds on every request — the HTTP Date, idle deadlines, viewer ages — and never for
  // a duration that is measured (latencies) or a decision at millisecond grain. The defaults
  // read the precise clocks.
  virtual TimePoint CoarseNow() const { return Now(); }
  virtual std::chrono::steady_clock::time_point CoarseMonotonic() const { return Monotonic(); }
};

// The process clock. Thread-safe.
class RealClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::system_clock::now(); }
  std::chrono::steady_clock::time_point Monotonic() const override {
    return std::chrono::steady_clock::now();
  }
  TimePoint CoarseNow() const override { return TimePoint(Read(CLOCK_REALTIME_COARSE)); }
  std::chrono::steady_clock::time_point CoarseMonotonic() const override {
    // libstdc++'s steady_clock is CLOCK_MONOTONIC; its coarse reading is on the same scale.
    return std::chrono::steady_clock::time_point(
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            Read(CLOCK_MONOTONIC_COARSE)));
  }
  static const RealClock& Get() {
    static const RealClock clock;
    return clock;
  }

 private:
  static Duration Read(clockid_t id) {
    timespec ts;
    clock_gettime(id, &ts);  // cannot fail for these two ids on Linux
    return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
  }
};

// A clock that moves only when told. Thread-safe.
class FakeClock final : public Clock {
 public:
  TimePoint Now() const override {
    absl::MutexLock lock(&mu_);
    return TimePoint(std::chrono::seconds(1'700'000'000)) + elapsed_;
  }
  std::chrono::steady_clock::time_point Monotonic() const override {
    absl::MutexLock lock(&mu_);
    return std::chrono::steady_clock::time_point(std::chrono::hours(1)) + elapsed_;
  }
  void Advance(Duration d) {
    absl::MutexLock lock(&mu_);
    elapsed_ += d;
  }

 private:
  mutable absl::Mutex mu_;
  Duration elapsed_ ABSL_GUARDED_BY(mu_){0};
};

inline int64_t UnixMillis(Clock::TimePoint t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

}  // namespace meshwork
