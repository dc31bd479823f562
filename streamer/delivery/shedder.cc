#include "streamer/delivery/shedder.h"

namespace meshwork::streamer {

Shedder::Shedder(ShedThresholds thresholds, prometheus::Registry* registry)
    : thresholds_(thresholds) {
  if (!registry) return;
  auto& family = prometheus::BuildCounter()
                     .Name("meshwork_shed_requests_total")
                     .Help("Reads refused with 503 under pressure (L-16), by class")
                     .Register(*registry);
  live_counter_ = &family.Add({{"class", "live"}});
  dvr_counter_ = &family.Add({{"class", "dvr"}});
  family.Add({{"class", "publish"}});  // always 0: publishes are never shed
}

bool Shedder::Shed(RequestClass cls) {
  if (cls == RequestClass::kPublish) return false;
  double cpu = cpu_.load(std::memory_order_relaxed);
  int64_t in_flight = in_flight_.load(std::memory_order_relaxed);
  auto above = [](double value, double threshold) { return threshold > 0 && value > threshold; };
  bool shed;
  if (cls == RequestClass::kDvr) {
    shed = above(cpu, thresholds_.dvr_cpu_percent) ||
           above(static_cast<double>(in_flight), static_cast<double>(thresholds_.dvr_in_flight));
  } else {
    shed = above(cpu, thresholds_.live_cpu_percent) ||
           above(static_cast<double>(in_flight), static_cast<double>(thresholds_.live_in_flight));
  }
  if (!shed) return false;
  if (cls == RequestClass::kDvr) {
    shed_dvr_.fetch_add(1, std::memory_order_relaxed);
    if (dvr_counter_) dvr_counter_->Increment();
  } else {
    shed_live_.fetch_add(1, std::memory_order_relaxed);
    if (live_counter_) live_counter_->Increment();
  }
  return true;
}

uint64_t Shedder::shed(RequestClass cls) const {
  switch (cls) {
    case RequestClass::kLive:
      return shed_live_.load();
    case RequestClass::kDvr:
      return shed_dvr_.load();
    case RequestClass::kPublish:
      return 0;
  }
  return 0;
}

}  // namespace meshwork::streamer
