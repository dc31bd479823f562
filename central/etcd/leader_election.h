// Which central runs what must run once (C-10): the viewing-key schedule and the alerts'
// notifications. One central alone is always the leader (SoleLeader). Several on one etcd
// elect one with a lease: the first to create `key` (bound to its lease) leads while it
// keeps the lease alive; the others retry every `ttl/3` and take over once the key is gone
// (the leader stopped, or its lease ran out `ttl` after its last keep-alive).
//
// A leader that cannot renew its lease steps down by itself once it sees, after each etcd
// call returns (the clock read again), that two thirds of the TTL passed since the last
// renewal was sent — before any other central can win, unless one call blocked past the
// lease's end (etcd's request deadline is longer than a third of the TTL): then another
// leader may overlap this one until that call returns.
// The leader also compacts etcd's history (etcd keeps every revision unless told, and every
// node report is a new one each second: the backend quota fills and etcd then refuses all
// writes): every central samples the store's revision as its rounds see it, and the leader
// compacts to the newest sample at least `compact_retain` old — a central whose watch was
// cut for longer reads the store whole again (EtcdStore's reload). 0 turns it off.
// Thread: one of its own; IsLeader() is a lock-free read from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "central/etcd/etcd_client.h"
#include "common/sync/periodic_thread.h"
#include "common/time/clock.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"

namespace meshwork::central {

class Leadership {
 public:
  virtual ~Leadership() = default;
  virtual bool IsLeader() const = 0;
  // The leader's id as last seen ("" when unknown).
  virtual std::string Leader() const = 0;
};

class SoleLeader final : public Leadership {
 public:
  explicit SoleLeader(std::string id) : id_(std::move(id)) {}
  bool IsLeader() const override { return true; }
  std::string Leader() const override { return id_; }

 private:
  const std::string id_;
};

namespace etcd {

class LeaderElection final : public Leadership {
 public:
  // `metrics` may be null; it gets meshwork_central_leader (1 while this central leads).
  LeaderElection(std::shared_ptr<EtcdClient> client, std::string key, std::string id,
                 std::chrono::seconds ttl, const Clock& clock, prometheus::Registry* metrics,
                 std::chrono::seconds compact_retain = std::chrono::minutes(5));
  ~LeaderElection() override;  // stops; a leader deletes its key (revokes its lease)

  void Start();
  bool IsLeader() const override { return leader_.load(std::memory_order_acquire); }
  std::string Leader() const override;

 private:
  void Round();
  void SetLeader(bool leader, const std::string& who);
  // Records `revision` as seen at `now`; a leader then compacts to the newest sample at
  // least compact_retain_ old.
  void Compact(std::chrono::steady_clock::time_point now, int64_t revision);
  // A failed round's cause, logged at most once a minute.
  void LogFailure(const char* step, const absl::Status& status);

  const std::shared_ptr<EtcdClient> client_;
  const std::string key_;
  const std::string id_;
  const std::chrono::seconds ttl_;
  const Clock& clock_;
  prometheus::Gauge* gauge_ = nullptr;

  std::atomic<bool> leader_{false};
  int64_t lease_ = 0;                              // the election thread's own
  std::chrono::steady_clock::time_point renewed_;  // last successful keep-alive (same)
  const std::chrono::seconds compact_retain_;
  struct RevisionSeen {
    std::chrono::steady_clock::time_point at;
    int64_t revision;
  };
  std::deque<RevisionSeen> seen_;  // the election thread's own, oldest first
  int64_t compacted_ = 0;          // the same: the revision last compacted to
  std::chrono::steady_clock::time_point last_failure_log_{};

  mutable absl::Mutex mu_;
  std::string leader_id_ ABSL_GUARDED_BY(mu_);
  PeriodicThread thread_;  // Round() at once, then every TTL / 3
};

}  // namespace etcd
}  // namespace meshwork::central
