// Injectable time. Code that decides by time (offline detection, templates, holds, passes)
// takes a Clock so tests can move time by hand.
#pragma once

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
};

// The process clock. Thread-safe.
class RealClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::system_clock::now(); }
  std::chrono::steady_clock::time_point Monotonic() const override {
    return std::chrono::steady_clock::now();
  }
  static const RealClock& Get() {
    static const RealClock clock;
    return clock;
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
