// Routes every streamer listener answers: /whoami (the client address and scheme as this
// node resolves them, T-2), /status (identity and configuration revision) and /metrics.
#pragma once

#include <functional>
#include <string>

#include "common/http/router.h"
#include "common/sync/snapshot.h"
#include "prometheus/registry.h"
#include "streamer/agent/node_config.h"

namespace meshwork::streamer {

struct NodeIdentity {
  std::string node_id;
  std::string hostname;
  std::string role;
  std::string version;
};

// `config`, `metrics` must outlive the router; `connected` tells whether central is reachable;
// `more_status` (optional) adds members to /status (relayed streams, publish targets).
void AddNodeRoutes(http::Router& router, const NodeIdentity& identity,
                   const Snapshot<NodeConfig>* config, prometheus::Registry* metrics,
                   std::function<bool()> connected,
                   std::function<void(nlohmann::json&)> more_status = nullptr);

}  // namespace meshwork::streamer
