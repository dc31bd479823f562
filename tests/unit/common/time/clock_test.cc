#include "common/time/clock.h"

#include <catch2/catch.hpp>
#include <chrono>

namespace meshwork::clock_test {
namespace {

using std::chrono::milliseconds;

// The coarse readings serve the idle deadlines and the HTTP Date of every answer: they
// must be the precise clocks' time, a tick late at most — never ahead (a deadline set from
// them would then fire late) and never stale by more than a tick.
TEST_CASE(
    "R-3 RealClock's coarse monotonic reading trails the precise one by under a tick, "
    "never leads, and the coarse wall clock is the wall clock's") {
  const RealClock& clock = RealClock::Get();
  // A tick is 1–10 ms; the rest is room for the thread being descheduled between two reads
  // on a loaded machine. A clock on another scale (seconds since boot against the epoch) or
  // one not advancing fails by far more.
  constexpr auto kLag = milliseconds(250);
  for (int i = 0; i < 2000; ++i) {
    const auto coarse_mono = clock.CoarseMonotonic();
    const auto mono = clock.Monotonic();
    REQUIRE(coarse_mono <= mono);
    REQUIRE(mono - coarse_mono < kLag);
    // The wall clock may be stepped between two reads (NTP): only its scale is checked.
    const auto coarse_wall = clock.CoarseNow();
    const auto wall = clock.Now();
    REQUIRE(std::chrono::abs(wall - coarse_wall) < kLag);
  }
}

TEST_CASE("R-3 a FakeClock's coarse readings are its precise ones") {
  FakeClock clock;
  clock.Advance(milliseconds(1234));
  CHECK(clock.CoarseMonotonic() == clock.Monotonic());
  CHECK(clock.CoarseNow() == clock.Now());
}

}  // namespace
}  // namespace meshwork::clock_test
