#include <catch2/catch.hpp>

#include "common/log/log.h"

namespace meshwork::throttle_test {
namespace {

TEST_CASE("M-5 a throttled event writes one line per interval and counts the lines held back") {
  log::Throttle throttle(1000);
  uint64_t held = 99;
  REQUIRE(throttle.Allow(5'000, &held));
  CHECK(held == 0);
  for (int i = 0; i < 7; ++i) CHECK_FALSE(throttle.Allow(5'000 + 100 * i, &held));
  CHECK_FALSE(throttle.Allow(5'999, &held));
  REQUIRE(throttle.Allow(6'000, &held));
  CHECK(held == 8);  // the 8 refused since the last line
  CHECK_FALSE(throttle.Allow(6'500, &held));
  REQUIRE(throttle.Allow(60'000, &held));
  CHECK(held == 1);
}

}  // namespace
}  // namespace meshwork::throttle_test
