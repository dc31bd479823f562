// Prometheus metrics (M-4). Each binary owns one prometheus::Registry (no process-wide
// singleton) and serves it on its own HTTP listeners as `/metrics`; names are `meshwork_…`
// with units in the name.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace meshwork::metrics {

// The registry in Prometheus text exposition format (version 0.0.4). First runs the
// registry's collect hooks (below), so counts kept per thread are whole.
std::string RenderText(prometheus::Registry& registry);

// Something that counts outside the registry (per thread, without shared atomics) and adds
// its counts to the registry's metrics when asked. BeforeCollect may run on any thread,
// concurrently with the counting.
class CollectHook {
 public:
  virtual ~CollectHook() = default;
  virtual void BeforeCollect() = 0;
};

// Runs `hook` before every RenderText of `registry` while the hook lives (held weakly: its
// owner drops it to stop). Thread-safe.
void AddCollectHook(prometheus::Registry& registry, std::weak_ptr<CollectHook> hook);

inline constexpr char kTextContentType[] = "text/plain; version=0.0.4; charset=utf-8";

// Latency buckets in seconds from 100 µs to 10 s.
const prometheus::Histogram::BucketBoundaries& LatencyBuckets();

// One counter per value of one label whose values are known in advance. A hot path finds its
// counter by comparing a few short strings instead of calling Family::Add (which locks the
// family and hashes a label map on every call). Every listed value is exported from the start
// (at 0). Thread-safe once built (the list is read-only; counters are atomic).
class LabeledCounters {
 public:
  LabeledCounters() = default;  // counts nothing (no registry)
  LabeledCounters(prometheus::Family<prometheus::Counter>& family, std::string label,
                  std::initializer_list<std::string_view> values);
  // A value outside the list still counts, through Family::Add.
  void Increment(std::string_view value);

 private:
  prometheus::Family<prometheus::Counter>* family_ = nullptr;
  std::string label_;
  std::vector<std::pair<std::string, prometheus::Counter*>> counters_;
};

}  // namespace meshwork::metrics
