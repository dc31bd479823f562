#include "streamer/delivery/shedder.h"

#include <algorithm>

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

void Shedder::ApplySettings(const v1::StreamerSettings& settings) {
  double cpu = -1, network = -1;
  if (settings.has_alert_thresholds()) {
    const auto& t = settings.alert_thresholds();
    if (t.has_cpu_percent_error()) cpu = static_cast<double>(t.cpu_percent_error().value());
    if (t.has_network_percent_error()) {
      network = static_cast<double>(t.network_percent_error().value());
    }
  }
  uint64_t capacity = 0;
  if (settings.has_cdn() && settings.cdn().has_network_bandwidth_kbit()) {
    capacity = static_cast<uint64_t>(
        std::max<int64_t>(0, settings.cdn().network_bandwidth_kbit().value()));
  }
  node_cpu_error_.store(cpu, std::memory_order_relaxed);
  node_network_error_.store(network, std::memory_order_relaxed);
  capacity_kbit_.store(capacity, std::memory_order_relaxed);
}

namespace {

bool Above(double value, double threshold) { return threshold > 0 && value > threshold; }

}  // namespace

double Shedder::NetworkPercent() const {
  const uint64_t capacity = capacity_kbit_.load(std::memory_order_relaxed);
  if (capacity == 0) return -1;
  return static_cast<double>(out_kbit_.load(std::memory_order_relaxed)) * 100.0 /
         static_cast<double>(capacity);
}

bool Shedder::CpuAboveAlert() const {
  return Above(cpu_.load(std::memory_order_relaxed),
               node_cpu_error_.load(std::memory_order_relaxed));
}

bool Shedder::NetworkAboveAlert() const {
  return Above(NetworkPercent(), node_network_error_.load(std::memory_order_relaxed));
}

bool Shedder::Shed(RequestClass cls) {
  if (cls == RequestClass::kPublish) return false;
  const double cpu = cpu_.load(std::memory_order_relaxed);
  const auto in_flight = static_cast<double>(in_flight_.load(std::memory_order_relaxed));
  const double network = NetworkPercent();
  bool shed;
  if (cls == RequestClass::kDvr) {
    const double node_cpu = node_cpu_error_.load(std::memory_order_relaxed);
    shed = Above(cpu, node_cpu >= 0 ? node_cpu : thresholds_.dvr_cpu_percent) ||
           NetworkAboveAlert() || Above(in_flight, static_cast<double>(thresholds_.dvr_in_flight));
  } else {
    shed = Above(cpu, thresholds_.live_cpu_percent) || network >= 100 ||
           Above(in_flight, static_cast<double>(thresholds_.live_in_flight));
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
