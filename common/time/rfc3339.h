// "2026-11-29T12:00:00.000Z" for a Unix time in milliseconds (UTC), as the APIs show times.
// Thread-safe (gmtime_r).
#pragma once

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <string>

#include "absl/strings/str_format.h"

namespace meshwork {

// Times outside 1970-01-01T00:00:00.000Z … 9999-12-31T23:59:59.999Z (a node's report can
// carry any int64) are shown as the nearer end of that range.
inline std::string Rfc3339Millis(int64_t unix_ms) {
  unix_ms = std::clamp<int64_t>(unix_ms, 0, int64_t{253'402'300'799'999});
  std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm;
  gmtime_r(&t, &tm);
  return absl::StrFormat("%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                         tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                         static_cast<int>(unix_ms % 1000));
}

}  // namespace meshwork
