// A histogram observed from many threads without writes they share (P-2): each thread counts
// into a shard of its own, made on that thread's first Observe and kept for the histogram's
// life; a scrape (CollectHook::BeforeCollect, run by metrics::RenderText) adds what every
// shard gained since the last fold to the Prometheus histogram.
//
// Why: prometheus::Histogram::Observe takes a mutex and does two atomic read-modify-writes on
// lines every caller shares; on a path every viewer request takes (central's redirect
// decision) their cache lines bounce between the HTTP workers' cores.
//
// Threading: Observe from any thread (a thread's first call takes a lock; later calls write
// only that thread's shard, a load and a store per word, no locked instruction). BeforeCollect
// from any thread, concurrently with Observe: a fold sees each word whole, possibly an
// observation's bucket without its share of the sum or the reverse (the rest comes with the
// next fold). A shard lives as long as the histogram, its thread's exit notwithstanding: meant
// for a fixed set of threads (HTTP workers, gRPC threads), not for threads made per task.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/metrics/metrics.h"
#include "prometheus/family.h"
#include "prometheus/histogram.h"

namespace meshwork::metrics {

class ThreadHistogram final : public CollectHook {
 public:
  static constexpr size_t kMaxBuckets = 32;
  // Adds the histogram with `bounds` (at most kMaxBuckets) and no labels to `family`, which
  // must outlive this.
  ThreadHistogram(prometheus::Family<prometheus::Histogram>& family,
                  prometheus::Histogram::BucketBoundaries bounds);

  void Observe(double value);
  void BeforeCollect() override;

 private:
  struct alignas(64) Shard {
    std::array<std::atomic<uint64_t>, kMaxBuckets + 1> buckets{};  // the last: +Inf
    std::atomic<uint64_t> sum_ns{0};  // the values' sum in units of 1e-9
    // What the last fold took (under fold_mu_).
    std::array<uint64_t, kMaxBuckets + 1> folded{};
    uint64_t folded_ns = 0;
  };
  Shard& Mine();

  const prometheus::Histogram::BucketBoundaries bounds_;
  prometheus::Histogram* const target_;  // made with bounds_
  const uint64_t id_;  // process-unique: a thread's shard cache never confuses two histograms
  absl::Mutex shards_mu_;
  std::vector<std::unique_ptr<Shard>> shards_ ABSL_GUARDED_BY(shards_mu_);
  absl::Mutex fold_mu_;  // one fold at a time
};

}  // namespace meshwork::metrics
