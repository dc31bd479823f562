#include "common/time/rfc3339.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>

namespace meshwork::rfc3339_test {
namespace {

TEST_CASE("M-5 API times are RFC 3339 in UTC, and any int64 a node reports shows as a valid one") {
  CHECK(Rfc3339Millis(1'764'417'600'123) == "2025-11-29T12:00:00.123Z");
  CHECK(Rfc3339Millis(0) == "1970-01-01T00:00:00.000Z");
  CHECK(Rfc3339Millis(-1) == "1970-01-01T00:00:00.000Z");
  CHECK(Rfc3339Millis(std::numeric_limits<int64_t>::min()) == "1970-01-01T00:00:00.000Z");
  CHECK(Rfc3339Millis(std::numeric_limits<int64_t>::max()) == "9999-12-31T23:59:59.999Z");
}

}  // namespace
}  // namespace meshwork::rfc3339_test
