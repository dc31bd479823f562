#include "central/etcd/leader_election.h"

#include "common/log/log.h"

namespace meshwork::central::etcd {

LeaderElection::LeaderElection(std::shared_ptr<EtcdClient> client, std::string key, std::string id,
                               std::chrono::seconds ttl, const Clock& clock,
                               prometheus::Registry* metrics, std::chrono::seconds compact_retain)
    : client_(std::move(client)),
      key_(std::move(key)),
      id_(std::move(id)),
      ttl_(std::max(ttl, std::chrono::seconds(2))),
      clock_(clock),
      compact_retain_(compact_retain) {
  if (metrics) {
    gauge_ = &prometheus::BuildGauge()
                  .Name("meshwork_central_leader")
                  .Help("1 while this central is the elected leader (C-10)")
                  .Register(*metrics)
                  .Add({});
  }
}

LeaderElection::~LeaderElection() {
  thread_.Stop();
  // Hand over at once rather than after the TTL: the key goes with the lease.
  if (lease_ != 0) {
    if (absl::Status s = client_->RevokeLease(lease_); !s.ok()) {
      log::Warn("leader_lease_revoke_failed", {{"error", s.ToString()}});
    }
  }
  SetLeader(false, "");
}

void LeaderElection::Start() {
  thread_.Start(
      std::chrono::duration_cast<std::chrono::milliseconds>(ttl_) / 3, [this] { Round(); },
      PeriodicThread::First::kAtOnce);
}

std::string LeaderElection::Leader() const {
  absl::MutexLock lock(&mu_);
  return leader_id_;
}

void LeaderElection::SetLeader(bool leader, const std::string& who) {
  bool was = leader_.exchange(leader, std::memory_order_acq_rel);
  std::string before;
  {
    absl::MutexLock lock(&mu_);
    before = leader_id_;
    leader_id_ = who;
  }
  if (gauge_) gauge_->Set(leader ? 1 : 0);
  if (was != leader) {
    log::Info(leader ? "leader_elected" : "leader_lost", {{"id", id_}, {"leader", who}});
  } else if (before != who && !who.empty()) {
    log::Info("leader_seen", {{"leader", who}});
  }
}

void LeaderElection::Round() {
  // When this round's requests were sent: a lease renewed now was renewed no earlier. The
  // step-down checks read the clock again: each etcd call may block for its whole deadline.
  const auto now = clock_.Monotonic();
  auto since_renewed = [this] { return clock_.Monotonic() - renewed_; };
  if (lease_ != 0) {
    absl::Status alive = client_->KeepAlive(lease_);
    if (alive.ok()) {
      renewed_ = now;
    } else if (absl::IsNotFound(alive)) {
      lease_ = 0;
      SetLeader(false, "");
    } else if (since_renewed() > ttl_ * 2 / 3) {
      // Cannot renew: step down before the lease can run out and another central win.
      if (IsLeader()) SetLeader(false, "");
      return;
    }
  }
  if (lease_ == 0) {
    auto granted = client_->GrantLease(ttl_);
    if (!granted.ok()) {
      LogFailure("lease grant", granted.status());
      if (IsLeader()) SetLeader(false, "");
      return;
    }
    lease_ = *granted;
    renewed_ = now;
  }
  // Create the key if nobody holds it; otherwise read who does.
  etcdserverpb::TxnRequest txn;
  auto* compare = txn.add_compare();
  compare->set_key(key_);
  compare->set_target(etcdserverpb::Compare::CREATE);
  compare->set_result(etcdserverpb::Compare::EQUAL);
  compare->set_create_revision(0);
  auto* put = txn.add_success()->mutable_request_put();
  put->set_key(key_);
  put->set_value(id_);
  put->set_lease(lease_);
  txn.add_failure()->mutable_request_range()->set_key(key_);
  auto response = client_->Txn(txn);
  if (!response.ok()) {
    LogFailure("claim", response.status());
    if (IsLeader() && since_renewed() > ttl_ * 2 / 3) SetLeader(false, "");
    return;
  }
  if (response->succeeded()) {
    SetLeader(true, id_);
  } else {
    std::string holder;
    int64_t holder_lease = 0;
    if (response->responses_size() > 0 && response->responses(0).response_range().kvs_size() > 0) {
      const auto& kv = response->responses(0).response_range().kvs(0);
      holder = kv.value();
      holder_lease = kv.lease();
    }
    SetLeader(holder == id_ && holder_lease == lease_, holder);
  }
  Compact(clock_.Monotonic(), response->header().revision());
}

void LeaderElection::Compact(std::chrono::steady_clock::time_point now, int64_t revision) {
  if (compact_retain_.count() <= 0 || revision <= 0) return;
  // Ten samples over the retention are enough: the history kept is retain…1.1 × retain.
  const auto every =
      std::max<std::chrono::steady_clock::duration>(std::chrono::seconds(1), compact_retain_ / 10);
  if (seen_.empty() || now - seen_.back().at >= every) seen_.push_back({now, revision});
  int64_t target = 0;
  while (!seen_.empty() && now - seen_.front().at >= compact_retain_) {
    target = seen_.front().revision;
    seen_.pop_front();
  }
  if (!IsLeader() || target <= compacted_) return;
  absl::Status s = client_->Compact(target);
  if (s.ok() || absl::IsOutOfRange(s)) {  // OutOfRange: compacted that far already
    compacted_ = target;
    log::Debug("etcd_compacted", {{"revision", target}});
  } else {
    LogFailure("compact", s);
  }
}

void LeaderElection::LogFailure(const char* step, const absl::Status& status) {
  const auto now = clock_.Monotonic();
  if (last_failure_log_ != std::chrono::steady_clock::time_point{} &&
      now - last_failure_log_ < std::chrono::minutes(1)) {
    return;
  }
  last_failure_log_ = now;
  log::Warn("leader_round_failed", {{"key", key_}, {"step", step}, {"error", status.ToString()}});
}

}  // namespace meshwork::central::etcd
