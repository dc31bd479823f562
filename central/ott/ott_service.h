// Runs the OTT side of central (05-ott-redundancy) every second: the viewing-key schedule
// (O-7), the group evaluation (O-15, O-19), the views pushed to member nodes (O-6) and the
// alerts (O-18) with their metrics (M-2), and the steering pathways of steered streams
// (CS-1, steering_views.h) pushed with the group views. The API reads from it.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "central/cluster/node_registry.h"
#include "central/model/config_service.h"
#include "central/ott/alerts.h"
#include "central/ott/groups.h"
#include "central/ott/viewing_keys.h"
#include "common/sync/periodic_thread.h"
#include "common/time/clock.h"
#include "nlohmann/json.hpp"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"

namespace meshwork::central::ott {

class OttService {
 public:
  // All pointers must outlive the service; `metrics` may be null.
  OttService(ConfigService* config, NodeRegistry* registry, ViewingKeyManager* keys,
             const Clock& clock, GroupOptions options, prometheus::Registry* metrics);
  ~OttService();  // stops the timer

  // C-10: with several centrals, only the leader runs the key schedule, logs alerts as
  // they rise and clear and shows them as gauges (a central that is not the leader shows
  // none); every central evaluates the groups (for its own nodes' views and its API). Unset: this
  // central is the only one. Call before Start().
  void set_leader_check(std::function<bool()> is_leader) { is_leader_ = std::move(is_leader); }
  // CS-1: central's public base URL for players ("http://host:port"), the steering views'
  // server URI; empty (the default): no steering views. Any thread.
  void set_steering_base(std::string base);
  std::string steering_base() const;
  // Runs Tick() every `period` on a thread of its own until Stop() or destruction.
  void Start(std::chrono::milliseconds period);
  void Stop();
  // One round: key schedule, evaluation, views to the nodes, alerts and their gauges. Blocks
  // on the store when a key changes: not for HTTP workers or gRPC reactors.
  void Tick();

  // The groups as of now (evaluated on the call).
  GroupsSnapshot Evaluate() const;
  // GET /ott-key.
  nlohmann::json KeyBlock() const;
  // POST /ott-key/rotate (blocks on the store): the key block after the rotation.
  absl::StatusOr<nlohmann::json> RotateKey();
  // GET /alerts: the alerts of the last round.
  nlohmann::json AlertsJson() const;

 private:
  void PublishAlerts(const std::vector<Alert>& alerts) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A central that is not the leader shows no alert gauges (no count, no active series).
  void ClearAlertGaugesLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  ConfigService* config_;
  NodeRegistry* registry_;
  ViewingKeyManager* keys_;
  const Clock& clock_;
  const GroupOptions options_;
  std::function<bool()> is_leader_;  // set before Start(), then only read

  mutable absl::Mutex mu_;
  AlertTracker tracker_ ABSL_GUARDED_BY(mu_);
  std::vector<Alert> alerts_ ABSL_GUARDED_BY(mu_);
  std::string steering_base_ ABSL_GUARDED_BY(mu_);
  prometheus::Family<prometheus::Gauge>* alert_counts_ = nullptr;
  prometheus::Family<prometheus::Gauge>* alert_active_ = nullptr;
  std::map<int, prometheus::Gauge*> count_gauges_;
  std::map<std::string, prometheus::Gauge*> active_gauges_ ABSL_GUARDED_BY(mu_);  // by label key

  PeriodicThread timer_;
};

}  // namespace meshwork::central::ott
