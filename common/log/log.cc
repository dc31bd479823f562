#include "common/log/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"

namespace meshwork::log {
namespace {

std::atomic<Level> min_level{Level::kInfo};
absl::Mutex emit_mu;

const char* LevelName(Level level) {
  switch (level) {
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kWarn:
      return "warn";
    case Level::kError:
      return "error";
  }
  return "info";
}

bool NeedsQuotes(std::string_view v) {
  if (v.empty()) return true;
  for (char c : v) {
    if (c == ' ' || c == '"' || c == '=' || c == '\n' || c == '\t') return true;
  }
  return false;
}

void AppendValue(std::string& out, std::string_view v) {
  if (!NeedsQuotes(v)) {
    out.append(v);
    return;
  }
  out.push_back('"');
  for (char c : v) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out.append("\\n");
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
}

}  // namespace

void SetMinLevel(Level level) { min_level.store(level); }

void Emit(Level level, std::string_view event, std::initializer_list<Field> fields) {
  if (level < min_level.load(std::memory_order_relaxed)) return;
  auto now = std::chrono::system_clock::now();
  std::time_t secs = std::chrono::system_clock::to_time_t(now);
  int millis = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm;
  gmtime_r(&secs, &tm);
  std::string line = absl::StrFormat(
      "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ level=%s event=", tm.tm_year + 1900, tm.tm_mon + 1,
      tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis, LevelName(level));
  AppendValue(line, event);
  for (const Field& f : fields) {
    line.push_back(' ');
    line.append(f.key);
    line.push_back('=');
    AppendValue(line, f.value);
  }
  line.push_back('\n');
  absl::MutexLock lock(&emit_mu);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

bool Throttle::Allow(int64_t now_ms, uint64_t* held_back) {
  int64_t next = next_ms_.load(std::memory_order_relaxed);
  // One caller wins the slot that opens at `next`; the others count as held back.
  if (now_ms < next ||
      !next_ms_.compare_exchange_strong(next, now_ms + interval_ms_, std::memory_order_relaxed)) {
    held_back_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  *held_back = held_back_.exchange(0, std::memory_order_relaxed);
  return true;
}

}  // namespace meshwork::log
