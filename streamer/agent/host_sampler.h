// Whole-host load for reports (C-2): CPU % from /proc/stat and network kbit/s from
// /proc/net/dev, each averaged over the time since the previous Sample(). Sample() belongs to
// the agent's report loop; Last() may be read from any thread (/status).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "absl/synchronization/mutex.h"

namespace meshwork::streamer {

class HostSampler {
 public:
  struct Load {
    double cpu_percent = 0;
    uint64_t in_kbit = 0;
    uint64_t out_kbit = 0;
  };
  HostSampler();
  Load Sample();
  // The latest Sample()'s result; nothing before the first.
  std::optional<Load> Last() const;

 private:
  struct Counters {
    uint64_t cpu_busy = 0, cpu_total = 0;
    uint64_t rx_bytes = 0, tx_bytes = 0;
    std::chrono::steady_clock::time_point at;
  };
  static Counters Read();
  Counters last_;
  mutable absl::Mutex mu_;
  std::optional<Load> latest_ ABSL_GUARDED_BY(mu_);
};

}  // namespace meshwork::streamer
