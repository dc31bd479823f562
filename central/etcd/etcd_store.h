// Central's Store on etcd (C-10): several centrals share one configuration.
//
// Layout under `prefix` (default "/meshwork/"):
//   config/revision          the configuration revision, a decimal counter
//   config/{kind}/{key}      one stored object
//   reports/{node}           the latest load report of a node, on the writer's lease
//
// The configuration revision is a counter of its own rather than etcd's revision: etcd's
// moves with every report and lease, while the Store contract (and the streamers' deltas)
// want one step per configuration commit. Each Commit is one etcd transaction that checks
// the counter still holds the revision this instance based its write on, then bumps it
// and applies the mutations; a lost race is Aborted and nothing is written.
//
// Reads are served from a full in-memory mirror of the configuration (it is small), kept by
// one watch on the whole prefix from the revision the mirror was read at; a watch that
// falls behind a compaction reloads the mirror whole. So Get/Scan/revision never wait on
// etcd, and keep answering from the last state while etcd is unreachable; writes then fail
// Unavailable (HTTP 503).
//
// Reports are not written where PutReport is called: a flusher thread writes the newest
// report of each node every `report_flush` on a lease of `report_ttl` that it keeps alive,
// so the reports of a central that dies vanish with its lease. Reports from every writer
// reach the report listener, so each central routes on every node's load. While the watch
// is down (etcd unreachable) the last reports of other centrals' nodes are given to the
// listener again at each retry of the watch (at least once a second): those nodes keep
// their last known state (static stability) instead of ageing out.
//
// Threads: the watch thread (calls the change and report listeners, holding only the lock
// that makes replacing a listener wait for its call in progress) and
// the flusher. Both stop in the destructor, which flushes what is pending and leaves the
// lease to expire on its own (meanwhile the other centrals keep the reports; a restarted
// central hears of other centrals' nodes from their next reports, its own nodes reattach).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "central/etcd/etcd_client.h"
#include "central/store/store.h"
#include "common/time/clock.h"

namespace meshwork::central::etcd {

struct EtcdStoreOptions {
  std::string prefix = "/meshwork/";
  std::chrono::seconds report_ttl{10};
  std::chrono::milliseconds report_flush{1000};
  // The keep-alive schedule's time (Monotonic); must outlive the store.
  const Clock* clock = &RealClock::Get();
};

class EtcdStore final : public Store {
 public:
  // Reads the whole configuration, then starts watching. `client` is shared with other users
  // (the leader election) and must outlive nothing in particular: the store holds it.
  static absl::StatusOr<std::unique_ptr<EtcdStore>> Open(std::shared_ptr<EtcdClient> client,
                                                         EtcdStoreOptions options);
  ~EtcdStore() override;

  absl::StatusOr<uint64_t> CommitIf(const std::vector<Mutation>& mutations,
                                    std::optional<uint64_t> if_revision) override;
  absl::StatusOr<std::optional<std::string>> Get(Kind kind, std::string_view key) override;
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> Scan(Kind kind) override;
  uint64_t revision() const override;
  absl::Status PutReport(std::string_view node_id, std::string_view report) override;
  absl::Status DeleteReport(std::string_view node_id) override;
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ScanReports() override;
  void SetChangeListener(ChangeListener listener) override;
  void SetReportListener(ReportListener listener) override;

  // Writes what PutReport/DeleteReport left pending now (the flusher does it periodically).
  absl::Status FlushReports();
  // Whole reads of the prefix so far: 1 after Open, +1 each time the watch had to start over
  // (its start revision was compacted away, or etcd cancelled it).
  uint64_t reloads() const;

 private:
  EtcdStore(std::shared_ptr<EtcdClient> client, EtcdStoreOptions options);

  struct Changes {
    bool revision_moved = false;
    uint64_t revision = 0;
    std::map<std::string, std::optional<std::string>> reports;
  };
  // Reads every key under the prefix into the mirror (at one etcd revision).
  absl::StatusOr<Changes> Reload();
  // Applies watch events newer than the mirror; returns what the listeners must hear.
  Changes Apply(const etcdserverpb::WatchResponse& response);
  // Applies one key's new value (nullopt: deleted) to the mirror.
  void ApplyKeyLocked(const std::string& key, const std::optional<std::string>& value,
                      Changes& changes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Notify(const Changes& changes);
  // Static stability (see the .cc); marks the start of a quiet spell on its first call.
  void RepeatRemoteReports();
  void WatchLoop();
  void FlushLoop();
  bool WaitStop(std::chrono::milliseconds d);

  std::string RevisionKey() const { return options_.prefix + "config/revision"; }
  std::string ConfigKey(Kind kind, std::string_view key) const;
  std::string ReportKey(std::string_view node) const;

  const std::shared_ptr<EtcdClient> client_;
  const EtcdStoreOptions options_;

  absl::Mutex commit_mu_;  // one local commit at a time (taken before mu_)
  mutable absl::Mutex mu_;
  std::map<std::string, std::string> config_ ABSL_GUARDED_BY(mu_);  // full key → value
  uint64_t revision_ ABSL_GUARDED_BY(mu_) = 0;                      // the configuration counter
  // etcd revision up to which the watch (or the last whole read) has delivered every event:
  // the next watch starts after it.
  int64_t watch_revision_ ABSL_GUARDED_BY(mu_) = 0;
  // This store's own commits, applied to the mirror as soon as etcd acknowledged them, before
  // the watch brings them back: key → (etcd revision of the commit, value; nullopt deleted).
  // An event for such a key at or below that revision is older news and is skipped; entries
  // go once the watch has passed their revision.
  struct AheadWrite {
    int64_t revision;
    std::optional<std::string> value;
  };
  std::map<std::string, AheadWrite> ahead_ ABSL_GUARDED_BY(mu_);
  uint64_t reloads_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, std::string> reports_ ABSL_GUARDED_BY(mu_);  // node → report
  // When each report in reports_ last changed (a live node's changes every second: its
  // clock is in it). RepeatRemoteReports gives again only those fresh when etcd went quiet.
  std::map<std::string, std::chrono::steady_clock::time_point> report_changed_ ABSL_GUARDED_BY(mu_);
  // The watch thread's own: when the current run of failures began (unset while it works).
  std::optional<std::chrono::steady_clock::time_point> quiet_since_;
  // Reports to write (nullopt: to delete), newest per node.
  std::map<std::string, std::optional<std::string>> pending_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> own_ ABSL_GUARDED_BY(mu_);  // reports this store wrote
  int64_t lease_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  absl::Mutex listener_mu_;  // held while a listener runs (see Notify)
  ChangeListener change_listener_ ABSL_GUARDED_BY(listener_mu_);
  ReportListener report_listener_ ABSL_GUARDED_BY(listener_mu_);

  absl::Mutex flush_mu_;  // one flush at a time
  std::thread watcher_;
  std::thread flusher_;
};

}  // namespace meshwork::central::etcd
