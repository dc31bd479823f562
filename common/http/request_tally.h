// Internal to the HTTP server: the per-request metrics of one listener, counted per worker
// thread and folded into the Prometheus registry when it is scraped.
//
// Why: every answer bumps a request counter, the latency histogram and two byte counters.
// As Prometheus objects shared by all workers these are atomic read-modify-writes (and a
// mutex, for the histogram) on cache lines every core fights over — on a small answer that
// cost about as much as the answer itself. Here each worker writes lines of its own; a
// scrape (metrics::RenderText runs BeforeCollect) adds what changed since the last one.
//
// Threading: Count*/Add* run on their worker's thread only (each worker index has one
// thread). Totals and BeforeCollect may run on any thread at any time.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "common/metrics/metrics.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/histogram.h"

namespace meshwork::http::server_internal {

class RequestTally final : public metrics::CollectHook {
 public:
  // The Prometheus targets (any may be null: that metric is not exported); `listener`
  // labels the request counters; `workers` threads count.
  RequestTally(prometheus::Family<prometheus::Counter>* requests, prometheus::Histogram* latency,
               prometheus::Counter* bytes_in, prometheus::Counter* bytes_out, std::string listener,
               size_t workers);

  // On worker `w`'s thread. `method` is the client's text: a method outside RFC 9110's and
  // PATCH is counted as "OTHER", so clients cannot grow the label set.
  void CountRequest(size_t w, std::string_view method, unsigned status, double seconds);
  void AddBytesIn(size_t w, uint64_t n) { Bump(workers_[w]->bytes_in, n); }
  void AddBytesOut(size_t w, uint64_t n) { Bump(workers_[w]->bytes_out, n); }

  // Any thread: the sums over the workers so far.
  uint64_t bytes_in() const;
  uint64_t bytes_out() const;

  // metrics::CollectHook: adds each tally's growth since the last fold to its target.
  void BeforeCollect() override;

 private:
  // Only the owning thread writes a tally: a load and a store, no locked instruction.
  static void Bump(std::atomic<uint64_t>& tally, uint64_t n) {
    tally.store(tally.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  struct RequestCount {
    std::atomic<uint64_t> count{0};
    uint64_t folded = 0;  // under fold_mu_
    prometheus::Counter* target = nullptr;
  };
  static constexpr size_t kMaxBuckets = 32;
  struct alignas(64) PerWorker {
    std::atomic<uint64_t> bytes_in{0};
    std::atomic<uint64_t> bytes_out{0};
    std::array<std::atomic<uint64_t>, kMaxBuckets + 1> buckets{};  // the last: +Inf
    std::atomic<uint64_t> latency_ns{0};
    // (method, status) → its count; only the owner touches the map. The counts themselves
    // are also listed in `counts` (guarded by list_mu) for the fold.
    absl::flat_hash_map<std::pair<std::string, unsigned>, RequestCount*> by_key;
    // The last key counted and its count: a storm repeats one (method, status) — no string
    // made and hashed per request then. Owner only.
    std::string last_method;
    unsigned last_status = 0;
    RequestCount* last = nullptr;
    absl::Mutex list_mu;
    std::vector<std::unique_ptr<RequestCount>> counts ABSL_GUARDED_BY(list_mu);
  };

  prometheus::Family<prometheus::Counter>* const requests_;
  prometheus::Histogram* const latency_;
  prometheus::Counter* const bytes_in_target_;
  prometheus::Counter* const bytes_out_target_;
  const std::string listener_;
  const std::vector<double> bounds_;
  std::vector<std::unique_ptr<PerWorker>> workers_;

  absl::Mutex fold_mu_;  // one fold at a time; guards the `folded` marks below
  std::vector<uint64_t> folded_in_ ABSL_GUARDED_BY(fold_mu_);
  std::vector<uint64_t> folded_out_ ABSL_GUARDED_BY(fold_mu_);
  std::vector<std::array<uint64_t, kMaxBuckets + 1>> folded_buckets_ ABSL_GUARDED_BY(fold_mu_);
  std::vector<uint64_t> folded_ns_ ABSL_GUARDED_BY(fold_mu_);
};

}  // namespace meshwork::http::server_internal
