// Whole-host load for reports (C-2): CPU % from /proc/stat and network kbit/s from
// /proc/net/dev, each averaged over the time since the previous Sample(). Sample() belongs to
// the agent's report loop; Last() may be read from any thread (/status).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/synchronization/mutex.h"

namespace meshwork::streamer {

class HostSampler {
 public:
  struct Load {
    double cpu_percent = 0;
    uint64_t in_kbit = 0;
    uint64_t out_kbit = 0;
  };
  // What /proc says at one moment: CPU jiffies, and bytes per network interface.
  struct Counters {
    uint64_t cpu_busy = 0, cpu_total = 0;
    std::map<std::string, std::pair<uint64_t, uint64_t>> interfaces;  // name → (rx, tx)
    std::chrono::steady_clock::time_point at;
  };
  HostSampler();
  Load Sample();
  // The latest Sample()'s result; nothing before the first.
  std::optional<Load> Last() const;

  // The texts of /proc/stat and /proc/net/dev read at `at` (loopback left out). CPU counts the
  // first eight fields of the "cpu" line (guest time is inside user and nice already).
  static Counters Parse(std::string_view proc_stat, std::string_view proc_net_dev,
                        std::chrono::steady_clock::time_point at);
  // The load between two readings. An interface counts only when it is in both and its
  // counters did not go back (one that went away, came new or was reset adds nothing: a
  // vanished veth must not read as exabits); CPU counters that went back read as 0 %.
  static Load Between(const Counters& before, const Counters& after);

 private:
  static Counters Read();
  Counters last_;
  mutable absl::Mutex mu_;
  std::optional<Load> latest_ ABSL_GUARDED_BY(mu_);
};

}  // namespace meshwork::streamer
