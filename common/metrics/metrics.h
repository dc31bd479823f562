// Prometheus metrics (M-4). Each binary owns one prometheus::Registry (no process-wide
// singleton) and serves it on its own HTTP listeners as `/metrics`; names are `meshwork_…`
// with units in the name.
#pragma once

#include <memory>
#include <string>

#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace meshwork::metrics {

// The registry in Prometheus text exposition format (version 0.0.4).
std::string RenderText(prometheus::Registry& registry);

inline constexpr char kTextContentType[] = "text/plain; version=0.0.4; charset=utf-8";

// Latency buckets in seconds from 100 µs to 10 s.
const prometheus::Histogram::BucketBoundaries& LatencyBuckets();

}  // namespace meshwork::metrics
