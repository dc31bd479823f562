// M-2 on a streamer: the node's own alerts as `meshwork_alert_active{code,name,subject}` (1
// while active, the series removed when it clears), the gauge every Meshwork binary exports.
// Central raises the cluster's alerts (OTT, 70/78/79); a node knows its own load:
//   80 node-cpu-high       host CPU above the node's alert_thresholds.cpu_percent_error
//   81 node-network-high   outgoing traffic above network_percent_error of its link
//   82 archive-disk-full   the recorder hit ENOSPC (D-2) and has not written since
// The subject is the node id. Evaluated with each load report (once a second) from the
// shedder's view of load and thresholds and the recorder's state; Prometheus rules in
// deploy/prometheus/meshwork-alerts.yml page on them after a few minutes.
// Thread-compatible: one caller (the agent's report thread).
#pragma once

#include <map>
#include <string>

#include "prometheus/gauge.h"
#include "prometheus/registry.h"

namespace meshwork::streamer {

class NodeAlerts {
 public:
  static constexpr int kCpuHigh = 80;
  static constexpr int kNetworkHigh = 81;
  static constexpr int kArchiveDiskFull = 82;

  NodeAlerts(std::string node_id, prometheus::Registry* registry);

  struct Conditions {
    bool cpu_high = false;
    bool network_high = false;
    bool archive_disk_full = false;
  };
  void Update(const Conditions& now);
  // The codes active now, ascending.
  std::map<int, std::string> Active() const { return names_; }

 private:
  void Set(int code, const char* name, bool active);

  const std::string node_id_;
  prometheus::Family<prometheus::Gauge>* family_ = nullptr;
  std::map<int, prometheus::Gauge*> gauges_;
  std::map<int, std::string> names_;
};

}  // namespace meshwork::streamer
