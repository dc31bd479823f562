#include "central/ott/ott_service.h"

#include "absl/strings/str_cat.h"
#include "central/ott/steering_views.h"
#include "common/log/log.h"

namespace meshwork::central::ott {

OttService::OttService(ConfigService* config, NodeRegistry* registry, ViewingKeyManager* keys,
                       const Clock& clock, GroupOptions options, prometheus::Registry* metrics)
    : config_(config),
      registry_(registry),
      keys_(keys),
      clock_(clock),
      options_(options),
      tracker_(clock) {
  if (metrics) {
    alert_counts_ = &prometheus::BuildGauge()
                         .Name("meshwork_alerts")
                         .Help("Active alerts by code (M-2, O-18)")
                         .Register(*metrics);
    for (int code : kOttAlertCodes) {
      count_gauges_[code] = &alert_counts_->Add({{"code", absl::StrCat(code)}});
    }
    alert_active_ = &prometheus::BuildGauge()
                         .Name("meshwork_alert_active")
                         .Help("1 for each active alert (M-2)")
                         .Register(*metrics);
  }
}

OttService::~OttService() { Stop(); }

void OttService::Start(std::chrono::milliseconds period) {
  timer_.Start(period, [this] { Tick(); });
}

void OttService::Stop() { timer_.Stop(); }

void OttService::set_steering_base(std::string base) {
  absl::MutexLock lock(&mu_);
  steering_base_ = std::move(base);
}

std::string OttService::steering_base() const {
  absl::MutexLock lock(&mu_);
  return steering_base_;
}

GroupsSnapshot OttService::Evaluate() const {
  return EvaluateGroups(*config_->Current(), registry_->OttNodeStates(), UnixMillis(clock_.Now()),
                        options_);
}

void OttService::Tick() {
  const bool leader = !is_leader_ || is_leader_();
  if (keys_ && leader) {
    absl::Status status = keys_->Tick();
    if (!status.ok()) log::Warn("viewing_key_tick_failed", {{"error", status.ToString()}});
  }
  auto config = config_->Current();
  auto nodes = registry_->OttNodeStates();
  GroupsSnapshot groups = EvaluateGroups(*config, nodes, UnixMillis(clock_.Now()), options_);
  auto views = NodeViews(groups);
  AddSteeringViews(*config, nodes, steering_base(), views);  // CS-1
  registry_->SetOttViews(std::move(views));
  absl::MutexLock lock(&mu_);
  std::vector<Alert> alerts = tracker_.Update(groups, nodes);
  if (leader) {
    PublishAlerts(alerts);
  } else {
    ClearAlertGaugesLocked();  // the leader's /metrics has them; a follower's would go stale
  }
  alerts_ = std::move(alerts);
}

void OttService::ClearAlertGaugesLocked() {
  if (!alert_counts_) return;
  for (auto& [code, gauge] : count_gauges_) gauge->Set(0);
  for (auto& [key, gauge] : active_gauges_) alert_active_->Remove(gauge);
  active_gauges_.clear();
}

void OttService::PublishAlerts(const std::vector<Alert>& alerts) {
  // Log transitions (raised / cleared), by code and subject.
  std::map<std::string, const Alert*> now_active;
  for (const auto& a : alerts) now_active[absl::StrCat(a.code, " ", a.Subject())] = &a;
  std::map<std::string, const Alert*> before;
  for (const auto& a : alerts_) before[absl::StrCat(a.code, " ", a.Subject())] = &a;
  for (const auto& [key, a] : now_active) {
    if (!before.contains(key)) {
      log::Warn(
          "alert_raised",
          {{"code", a->code}, {"name", a->name}, {"subject", a->Subject()}, {"reason", a->reason}});
    }
  }
  for (const auto& [key, a] : before) {
    if (!now_active.contains(key)) {
      log::Info("alert_cleared", {{"code", a->code}, {"name", a->name}, {"subject", a->Subject()}});
    }
  }
  if (!alert_counts_) return;
  std::map<int, double> counts;
  for (const auto& a : alerts) counts[a.code] += 1;
  for (auto& [code, gauge] : count_gauges_) gauge->Set(counts[code]);
  for (const auto& [key, a] : now_active) {
    if (active_gauges_.contains(key)) continue;
    auto& gauge = alert_active_->Add(
        {{"code", absl::StrCat(a->code)}, {"name", a->name}, {"subject", a->Subject()}});
    gauge.Set(1);
    active_gauges_[key] = &gauge;
  }
  for (auto it = active_gauges_.begin(); it != active_gauges_.end();) {
    if (now_active.contains(it->first)) {
      ++it;
      continue;
    }
    alert_active_->Remove(it->second);
    it = active_gauges_.erase(it);
  }
}

nlohmann::json OttService::KeyBlock() const {
  auto config = config_->Current();
  const ViewingKeyRecord* key = CurrentViewingKey(*config);
  KeyHolding holding =
      CountKeyHolders(*config, registry_->OttNodeStates(), key ? key->id : std::string());
  return KeyBlockJson(*config, holding.holding, holding.total);
}

absl::StatusOr<nlohmann::json> OttService::RotateKey() {
  if (!keys_) return absl::FailedPreconditionError("viewing keys are not managed here");
  auto config = keys_->Rotate();
  if (!config.ok()) return config.status();
  const ViewingKeyRecord* key = CurrentViewingKey(**config);
  log::Info("viewing_key_rotated", {{"key_id", key ? key->id : std::string()}});
  KeyHolding holding =
      CountKeyHolders(**config, registry_->OttNodeStates(), key ? key->id : std::string());
  return KeyBlockJson(**config, holding.holding, holding.total);
}

nlohmann::json OttService::AlertsJson() const {
  absl::MutexLock lock(&mu_);
  return ott::AlertsJson(alerts_);
}

}  // namespace meshwork::central::ott
