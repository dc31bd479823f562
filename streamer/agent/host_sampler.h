// Whole-host load for reports (C-2): CPU % from /proc/stat and network kbit/s from
// /proc/net/dev, each averaged over the time since the previous Sample(). Single-threaded:
// owned by the agent's report loop.
#pragma once

#include <chrono>
#include <cstdint>

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

 private:
  struct Counters {
    uint64_t cpu_busy = 0, cpu_total = 0;
    uint64_t rx_bytes = 0, tx_bytes = 0;
    std::chrono::steady_clock::time_point at;
  };
  static Counters Read();
  Counters last_;
};

}  // namespace meshwork::streamer
