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

// The registry in Prometheus text exposition format (version 0.0.4).
std::string RenderText(prometheus::Registry& registry);

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
