// One line per event, key=value (M-5):
//   2026-11-29T12:00:00.123Z level=info event=node_online node=edge-1 revision=42
// Values with spaces or quotes are quoted. Lines go to stderr; writes are serialized.
#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"

namespace meshwork::log {

enum class Level { kDebug, kInfo, kWarn, kError };

struct Field {
  template <typename T>
  Field(std::string_view k, const T& v) : key(k), value(Format(v)) {}
  std::string_view key;
  std::string value;

 private:
  static std::string Format(std::string_view v) { return std::string(v); }
  static std::string Format(const std::string& v) { return v; }
  static std::string Format(const char* v) { return std::string(v); }
  static std::string Format(bool v) { return v ? "true" : "false"; }
  template <typename T>
  static std::string Format(const T& v) {
    return absl::StrCat(v);
  }
};

void SetMinLevel(Level level);
void Emit(Level level, std::string_view event, std::initializer_list<Field> fields);

inline void Info(std::string_view event, std::initializer_list<Field> fields = {}) {
  Emit(Level::kInfo, event, fields);
}
inline void Warn(std::string_view event, std::initializer_list<Field> fields = {}) {
  Emit(Level::kWarn, event, fields);
}
inline void Error(std::string_view event, std::initializer_list<Field> fields = {}) {
  Emit(Level::kError, event, fields);
}
inline void Debug(std::string_view event, std::initializer_list<Field> fields = {}) {
  Emit(Level::kDebug, event, fields);
}

// At most one line per interval for an event that a client can cause at will (a request
// that makes a handler throw): the lines in between are counted, and the next line that is
// written reports how many were held back. Thread-safe (atomics; no lock).
class Throttle {
 public:
  explicit Throttle(int64_t interval_ms) : interval_ms_(interval_ms) {}
  // Whether a line may be written at `now_ms` (the caller's clock, milliseconds). When it may,
  // `*held_back` is the number of lines refused since the last one allowed.
  bool Allow(int64_t now_ms, uint64_t* held_back);

 private:
  const int64_t interval_ms_;
  std::atomic<int64_t> next_ms_{INT64_MIN};
  std::atomic<uint64_t> held_back_{0};
};

}  // namespace meshwork::log
