// M-2/M-4: the streamer's audience gauges, refreshed with each load report (about once a
// second): `meshwork_viewers{stream,protocol}` (S-18 play sessions; a series disappears when
// its last viewer leaves) and `meshwork_held_requests` (blocking playlist and preload-hint
// requests waiting for a publish, P-4). Called from the agent's report thread only.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"
#include "streamer/delivery/play_sessions.h"

namespace meshwork::streamer {

class NodeMetrics {
 public:
  explicit NodeMetrics(prometheus::Registry* registry);  // null: records nothing
  void Update(const PlaySessions::Counts& counts, size_t held_requests);

 private:
  prometheus::Family<prometheus::Gauge>* viewers_ = nullptr;
  prometheus::Gauge* held_ = nullptr;
  std::map<std::pair<std::string, std::string>, prometheus::Gauge*> series_;
};

}  // namespace meshwork::streamer
