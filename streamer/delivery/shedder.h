// Priority and shedding (L-15, L-16, D-7). Reads are classed from the template in memory
// (live edge or DVR); under pressure the node sheds DVR reads first, then live reads, never
// publishes. Pressure is:
//   - the node's CPU (sampled once a second) against the node's `alert_thresholds` from
//     central (`cpu_percent_error`), or the flag's DVR threshold while central sets none;
//   - its outgoing network load against the same thresholds (`network_percent_error` of the
//     node's `cdn.network_bandwidth_kbit`): above it DVR reads are shed, and at the link's
//     capacity (100 %) live reads too — a saturated link serves every viewer worse;
//   - the number of reads in flight (held or being decided) against two thresholds: above
//     the first DVR reads are shed, above the second live reads too.
// A threshold of 0 is off. CPU sheds live reads only when an operator asks for it
// (`live_cpu_percent`), since a busy host still serves memory-resident live objects well.
// Shed reads get 503 with `Cache-Control: max-age=5` and `Retry-After: 5` (ShedResponse).
// Thread-safe (atomics).
#pragma once

#include <atomic>
#include <cstdint>

#include "meshwork/v1/types.pb.h"
#include "prometheus/counter.h"
#include "prometheus/registry.h"
#include "streamer/store/origin_rules.h"

namespace meshwork::streamer {

struct ShedThresholds {
  double dvr_cpu_percent = 90;
  double live_cpu_percent = 0;
  int64_t dvr_in_flight = 5'000;
  int64_t live_in_flight = 15'000;
};

class Shedder {
 public:
  explicit Shedder(ShedThresholds thresholds, prometheus::Registry* registry = nullptr);

  // The host's load, sampled once a second.
  void SetLoad(double cpu_percent, uint64_t out_kbit) {
    cpu_.store(cpu_percent, std::memory_order_relaxed);
    out_kbit_.store(out_kbit, std::memory_order_relaxed);
  }
  // The node's settings from central: its alert thresholds and link capacity.
  void ApplySettings(const v1::StreamerSettings& settings);
  // True when a request of `cls` is to be refused now (counted per class).
  bool Shed(RequestClass cls);

  // Counts a read in flight for as long as the token lives.
  class Token {
   public:
    explicit Token(Shedder* s) : s_(s) { s_->in_flight_.fetch_add(1, std::memory_order_relaxed); }
    ~Token() { s_->in_flight_.fetch_sub(1, std::memory_order_relaxed); }
    Token(const Token&) = delete;
    Token& operator=(const Token&) = delete;

   private:
    Shedder* s_;
  };
  int64_t in_flight() const { return in_flight_.load(std::memory_order_relaxed); }
  // The node's alert thresholds from central against the last sampled load (the node's own
  // alerts 80 and 81, M-2); false while central sets no threshold.
  bool CpuAboveAlert() const;
  bool NetworkAboveAlert() const;
  uint64_t shed(RequestClass cls) const;

 private:
  // Outgoing load in % of the node's link; negative while its capacity is unknown.
  double NetworkPercent() const;

  const ShedThresholds thresholds_;
  std::atomic<double> cpu_{0};
  std::atomic<uint64_t> out_kbit_{0};
  // From the node's settings; negative: not set.
  std::atomic<double> node_cpu_error_{-1};
  std::atomic<double> node_network_error_{-1};
  std::atomic<uint64_t> capacity_kbit_{0};
  std::atomic<int64_t> in_flight_{0};
  std::atomic<uint64_t> shed_live_{0}, shed_dvr_{0};
  prometheus::Counter* live_counter_ = nullptr;
  prometheus::Counter* dvr_counter_ = nullptr;
};

}  // namespace meshwork::streamer
