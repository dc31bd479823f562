#include "common/metrics/metrics.h"

#include "prometheus/text_serializer.h"

namespace meshwork::metrics {

std::string RenderText(prometheus::Registry& registry) {
  return prometheus::TextSerializer().Serialize(registry.Collect());
}

const prometheus::Histogram::BucketBoundaries& LatencyBuckets() {
  static const prometheus::Histogram::BucketBoundaries buckets = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
      0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};
  return buckets;
}

LabeledCounters::LabeledCounters(prometheus::Family<prometheus::Counter>& family, std::string label,
                                 std::initializer_list<std::string_view> values)
    : family_(&family), label_(std::move(label)) {
  for (std::string_view v : values) {
    counters_.emplace_back(std::string(v), &family.Add({{label_, std::string(v)}}));
  }
}

void LabeledCounters::Increment(std::string_view value) {
  if (!family_) return;
  for (auto& [known, counter] : counters_) {
    if (known == value) return counter->Increment();
  }
  family_->Add({{label_, std::string(value)}}).Increment();
}

}  // namespace meshwork::metrics
