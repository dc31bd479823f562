// "2026-11-29T12:00:00.000Z" for a Unix time in milliseconds (UTC), as the API shows times.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>

#include "absl/strings/str_format.h"

namespace meshwork::central::ott {

inline std::string Rfc3339Millis(int64_t unix_ms) {
  int64_t secs = unix_ms / 1000;
  int64_t ms = unix_ms % 1000;
  if (ms < 0) {
    ms += 1000;
    secs -= 1;
  }
  std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm;
  gmtime_r(&t, &tm);
  return absl::StrFormat("%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                         tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
}

}  // namespace meshwork::central::ott
