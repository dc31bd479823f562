#include "common/metrics/thread_histogram.h"

#include <algorithm>

#include "absl/base/internal/raw_logging.h"
#include "absl/container/flat_hash_map.h"

namespace meshwork::metrics {
namespace {

std::atomic<uint64_t> next_id{1};

// Only the owning thread writes a shard's words.
void Bump(std::atomic<uint64_t>& word, uint64_t n) {
  word.store(word.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

}  // namespace

ThreadHistogram::ThreadHistogram(prometheus::Family<prometheus::Histogram>& family,
                                 prometheus::Histogram::BucketBoundaries bounds)
    : bounds_(std::move(bounds)),
      target_(&family.Add({}, bounds_)),
      id_(next_id.fetch_add(1, std::memory_order_relaxed)) {
  ABSL_RAW_CHECK(bounds_.size() <= kMaxBuckets, "more buckets than a ThreadHistogram holds");
}

ThreadHistogram::Shard& ThreadHistogram::Mine() {
  // This thread's shard of each histogram it observed, by the histogram's id (ids are never
  // reused, so an entry of a destroyed histogram is never looked up again).
  thread_local absl::flat_hash_map<uint64_t, Shard*> mine;
  thread_local uint64_t last_id = 0;
  thread_local Shard* last = nullptr;
  if (last_id == id_) return *last;
  Shard*& shard = mine[id_];
  if (shard == nullptr) {
    auto made = std::make_unique<Shard>();
    shard = made.get();
    absl::MutexLock lock(&shards_mu_);
    shards_.push_back(std::move(made));
  }
  last_id = id_;
  last = shard;
  return *shard;
}

void ThreadHistogram::Observe(double value) {
  Shard& shard = Mine();
  // Prometheus buckets are upper bounds (le): the first bound not below the value.
  size_t bucket = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  Bump(shard.buckets[bucket], 1);
  Bump(shard.sum_ns, static_cast<uint64_t>(std::max(0.0, value) * 1e9));
}

void ThreadHistogram::BeforeCollect() {
  absl::MutexLock fold(&fold_mu_);
  std::vector<Shard*> shards;
  {
    absl::MutexLock lock(&shards_mu_);
    for (const auto& s : shards_) shards.push_back(s.get());
  }
  std::vector<double> increments(bounds_.size() + 1, 0.0);
  double sum = 0;
  bool any = false;
  for (Shard* s : shards) {
    for (size_t b = 0; b <= bounds_.size(); ++b) {
      uint64_t now = s->buckets[b].load(std::memory_order_relaxed);
      increments[b] += static_cast<double>(now - s->folded[b]);
      any = any || now != s->folded[b];
      s->folded[b] = now;
    }
    uint64_t ns = s->sum_ns.load(std::memory_order_relaxed);
    sum += static_cast<double>(ns - s->folded_ns) / 1e9;
    any = any || ns != s->folded_ns;  // a sum whose bucket the last fold already took
    s->folded_ns = ns;
  }
  if (any) target_->ObserveMultiple(increments, sum);
}

}  // namespace meshwork::metrics
