#include "streamer/delivery/node_alerts.h"

#include "common/log/log.h"

namespace meshwork::streamer {

NodeAlerts::NodeAlerts(std::string node_id, prometheus::Registry* registry)
    : node_id_(std::move(node_id)) {
  if (!registry) return;
  family_ = &prometheus::BuildGauge()
                 .Name("meshwork_alert_active")
                 .Help("1 for each active alert (M-2): this node's own, codes 80-82")
                 .Register(*registry);
}

void NodeAlerts::Set(int code, const char* name, bool active) {
  const bool was = names_.contains(code);
  if (active == was) return;
  if (active) {
    names_[code] = name;
    log::Warn("alert_raised", {{"code", code}, {"name", name}, {"subject", node_id_}});
    if (family_) {
      auto& gauge =
          family_->Add({{"code", std::to_string(code)}, {"name", name}, {"subject", node_id_}});
      gauge.Set(1);
      gauges_[code] = &gauge;
    }
    return;
  }
  names_.erase(code);
  log::Info("alert_cleared", {{"code", code}, {"name", name}, {"subject", node_id_}});
  if (auto it = gauges_.find(code); it != gauges_.end()) {
    family_->Remove(it->second);
    gauges_.erase(it);
  }
}

void NodeAlerts::Update(const Conditions& now) {
  Set(kCpuHigh, "node-cpu-high", now.cpu_high);
  Set(kNetworkHigh, "node-network-high", now.network_high);
  Set(kArchiveDiskFull, "archive-disk-full", now.archive_disk_full);
}

}  // namespace meshwork::streamer
