// Priority and shedding (L-15, L-16). Reads are classed from the template in memory (live
// edge or DVR); under pressure the node sheds DVR reads first, then live reads, never
// publishes. Pressure is the node's CPU (sampled once a second) and the number of reads in
// flight (held or being decided), each against two thresholds: above the first DVR reads
// are shed, above the second live reads too. A threshold of 0 is off. By default CPU sheds
// DVR reads only: live viewers are refused on CPU only when an operator asks for it, since a
// busy host still serves memory-resident live objects well. Thread-safe (atomics).
#pragma once

#include <atomic>
#include <cstdint>

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

  void SetCpuPercent(double cpu) { cpu_.store(cpu, std::memory_order_relaxed); }
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
  uint64_t shed(RequestClass cls) const;

 private:
  const ShedThresholds thresholds_;
  std::atomic<double> cpu_{0};
  std::atomic<int64_t> in_flight_{0};
  std::atomic<uint64_t> shed_live_{0}, shed_dvr_{0};
  prometheus::Counter* live_counter_ = nullptr;
  prometheus::Counter* dvr_counter_ = nullptr;
};

}  // namespace meshwork::streamer
