// One worker's connection deadlines (R-3 timeouts) on a hashed timing wheel, instead of a
// timer armed for every read and write: setting a deadline stores a number, and a connection
// is put in a slot only when its deadline moves earlier than the slot it already holds, so a
// busy keep-alive connection costs about one slot entry per timeout period, not one timer
// operation per I/O.
//
// Contract: a deadline never fires early. It fires at the first Advance whose time is at or
// past it, so it is late by at most one tick plus however late Advance is called. A
// connection that is destroyed while its deadline is set simply never fires (the wheel holds
// weak references).
//
// Threading: not thread-safe. Each worker owns one wheel; Set, Clear and Advance run on that
// worker's thread only, and so does Timed::OnDeadline.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

namespace meshwork::http {

class DeadlineWheel {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  static constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

  // What a wheel times: a connection. Its two tick fields belong to the wheel.
  class Timed {
   public:
    virtual ~Timed() = default;
    // The deadline passed (on the wheel's thread). The deadline is already cleared.
    virtual void OnDeadline() = 0;
    // A weak reference to this object (taken only when a slot entry is made).
    virtual std::weak_ptr<Timed> WeakTimed() = 0;

   private:
    friend class DeadlineWheel;
    int64_t deadline_tick_ = kNever;  // fire at the first tick >= this
    int64_t slotted_tick_ = kNever;   // the earliest slot entry that is still current
  };

  // `origin` is tick 0; `tick` the granularity; `slots` the wheel's size (deadlines beyond
  // slots × tick wait for their round in the slot they hash to).
  DeadlineWheel(TimePoint origin, std::chrono::milliseconds tick, size_t slots = 1024);
  DeadlineWheel(const DeadlineWheel&) = delete;
  DeadlineWheel& operator=(const DeadlineWheel&) = delete;

  // `timed`'s deadline is now + `after` (replacing any earlier one).
  void Set(Timed& timed, TimePoint now, std::chrono::nanoseconds after);
  // No deadline for `timed` (it may hold a slot entry; it goes stale).
  static void Clear(Timed& timed) { timed.deadline_tick_ = kNever; }
  // Fires every deadline at or before `now` and returns how many fired. Call it at least
  // every `tick`; a later call catches up on the ticks in between.
  size_t Advance(TimePoint now);

  std::chrono::milliseconds tick() const { return tick_; }
  // Slot entries held (current and stale): for tests.
  size_t entries() const;

 private:
  struct Entry {
    std::weak_ptr<Timed> timed;
    int64_t tick;
  };
  int64_t TickOf(TimePoint t) const;
  void Place(Timed& timed, std::weak_ptr<Timed> weak, int64_t tick);

  const TimePoint origin_;
  const std::chrono::milliseconds tick_;
  std::vector<std::vector<Entry>> slots_;
  int64_t done_tick_;  // every slot up to this tick has been processed
};

}  // namespace meshwork::http
