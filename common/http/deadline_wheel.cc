#include "common/http/deadline_wheel.h"

#include <cstdlib>

namespace meshwork::http {

DeadlineWheel::DeadlineWheel(TimePoint origin, std::chrono::milliseconds tick, size_t slots)
    : origin_(origin), tick_(tick), slots_(slots), done_tick_(0) {
  if (tick_.count() <= 0 || slots == 0) std::abort();  // a programming error
}

int64_t DeadlineWheel::TickOf(TimePoint t) const {
  if (t <= origin_) return 0;
  return (t - origin_) / tick_;
}

void DeadlineWheel::Set(Timed& timed, TimePoint now, std::chrono::nanoseconds after) {
  // The tick that contains `now` may be almost over: one more tick, and the rounding up,
  // keep the deadline from firing before `now + after`.
  auto ticks = (after + tick_ - std::chrono::nanoseconds(1)) / tick_;
  int64_t due = TickOf(now) + static_cast<int64_t>(std::max<int64_t>(ticks, 0)) + 1;
  due = std::max(due, done_tick_ + 1);
  timed.deadline_tick_ = due;
  if (timed.slotted_tick_ <= due) return;  // an entry at or before it will look again
  Place(timed, timed.WeakTimed(), due);
}

void DeadlineWheel::Place(Timed& timed, std::weak_ptr<Timed> weak, int64_t tick) {
  timed.slotted_tick_ = tick;
  slots_[static_cast<size_t>(tick) % slots_.size()].push_back(Entry{std::move(weak), tick});
}

size_t DeadlineWheel::Advance(TimePoint now) {
  int64_t target = TickOf(now);
  // A long stall: at most one pass over the whole wheel does the catching up.
  int64_t first = std::max(done_tick_ + 1, target - static_cast<int64_t>(slots_.size()) + 1);
  std::vector<std::shared_ptr<Timed>> fire;
  for (int64_t t = first; t <= target; ++t) {
    auto& slot = slots_[static_cast<size_t>(t) % slots_.size()];
    size_t kept = 0;
    for (size_t i = 0; i < slot.size(); ++i) {
      Entry& e = slot[i];
      if (e.tick > target) {  // a later round
        if (kept != i) slot[kept] = std::move(e);
        ++kept;
        continue;
      }
      auto timed = e.timed.lock();
      if (!timed || timed->slotted_tick_ != e.tick) continue;  // gone, or superseded
      timed->slotted_tick_ = kNever;
      if (timed->deadline_tick_ == kNever) continue;
      if (timed->deadline_tick_ <= target) {
        timed->deadline_tick_ = kNever;
        fire.push_back(std::move(timed));
      } else {
        Place(*timed, timed, timed->deadline_tick_);  // moved later since: look again then
      }
    }
    // Entries Place appended to this very slot (a deadline whole rounds later) were walked
    // too, and kept: everything kept now sits below `kept`.
    slot.resize(kept);
  }
  done_tick_ = std::max(done_tick_, target);
  // Outside the slot walk: OnDeadline may set new deadlines.
  for (auto& timed : fire) timed->OnDeadline();
  return fire.size();
}

size_t DeadlineWheel::entries() const {
  size_t n = 0;
  for (const auto& slot : slots_) n += slot.size();
  return n;
}

}  // namespace meshwork::http
