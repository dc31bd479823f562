#include "central/etcd/etcd_store.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/log/log.h"

namespace meshwork::central::etcd {
namespace {

// etcd refuses a transaction of more operations than its --max-txn-ops (128 by default).
constexpr size_t kMaxTxnOps = 128;
constexpr size_t kMaxTxnReportBytes = 1 << 20;  // of report values in one transaction

uint64_t ParseCounter(std::string_view text) {
  uint64_t n = 0;
  return absl::SimpleAtoi(absl::string_view(text.data(), text.size()), &n) ? n : 0;
}

void AddPut(etcdserverpb::TxnRequest& txn, std::string key, std::string value, int64_t lease) {
  auto* put = txn.add_success()->mutable_request_put();
  put->set_key(std::move(key));
  put->set_value(std::move(value));
  put->set_lease(lease);
}

// A report that changed less recently than this before etcd went quiet is a dead node's
// (live nodes report every second, and each report differs: it carries the node's clock).
constexpr auto kFreshReport = std::chrono::seconds(5);

void AddDelete(etcdserverpb::TxnRequest& txn, std::string key) {
  txn.add_success()->mutable_request_delete_range()->set_key(std::move(key));
}

}  // namespace

EtcdStore::EtcdStore(std::shared_ptr<EtcdClient> client, EtcdStoreOptions options)
    : client_(std::move(client)), options_(std::move(options)) {}

absl::StatusOr<std::unique_ptr<EtcdStore>> EtcdStore::Open(std::shared_ptr<EtcdClient> client,
                                                           EtcdStoreOptions options) {
  options.prefix = NormalizedPrefix(options.prefix);
  std::unique_ptr<EtcdStore> store(new EtcdStore(std::move(client), std::move(options)));
  auto loaded = store->Reload();
  if (!loaded.ok()) return loaded.status();
  store->watcher_ = std::thread([s = store.get()] { s->WatchLoop(); });
  store->flusher_ = std::thread([s = store.get()] { s->FlushLoop(); });
  return store;
}

EtcdStore::~EtcdStore() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  client_->CancelWatches();
  if (watcher_.joinable()) watcher_.join();
  if (flusher_.joinable()) flusher_.join();
  if (absl::Status s = FlushReports(); !s.ok()) {
    log::Warn("etcd_report_flush_failed", {{"error", s.ToString()}});
  }
}

std::string EtcdStore::ConfigKey(Kind kind, std::string_view key) const {
  std::string out = options_.prefix + "config/";
  out.append(KindName(kind)).append("/").append(key);
  return out;
}

std::string EtcdStore::ReportKey(std::string_view node) const {
  return options_.prefix + "reports/" + std::string(node);
}

void EtcdStore::ApplyKeyLocked(const std::string& key, const std::optional<std::string>& value,
                               Changes& changes) {
  const std::string reports = options_.prefix + "reports/";
  if (key == RevisionKey()) {
    uint64_t next = value ? ParseCounter(*value) : 0;
    if (next != revision_) {
      revision_ = next;
      changes.revision_moved = true;
    }
  } else if (absl::StartsWith(key, options_.prefix + "config/")) {
    if (value) {
      config_[key] = *value;
    } else {
      config_.erase(key);
    }
  } else if (absl::StartsWith(key, reports)) {
    std::string node = key.substr(reports.size());
    auto it = reports_.find(node);
    bool same = value ? (it != reports_.end() && it->second == *value) : it == reports_.end();
    if (same) return;
    if (value) {
      reports_[node] = *value;
      report_changed_[node] = options_.clock->Monotonic();
    } else {
      reports_.erase(node);
      report_changed_.erase(node);
    }
    changes.reports[node] = value;
  }
}

absl::StatusOr<EtcdStore::Changes> EtcdStore::Reload() {
  etcdserverpb::RangeRequest request;
  request.set_key(options_.prefix);
  request.set_range_end(PrefixEnd(options_.prefix));
  auto response = client_->Range(request);
  if (!response.ok()) return response.status();
  Changes changes;
  absl::MutexLock lock(&mu_);
  std::map<std::string, std::string> old_reports;
  old_reports.swap(reports_);
  std::map<std::string, std::chrono::steady_clock::time_point> old_changed;
  old_changed.swap(report_changed_);
  config_.clear();
  uint64_t old_revision = revision_;
  revision_ = 0;
  for (const auto& kv : response->kvs()) ApplyKeyLocked(kv.key(), kv.value(), changes);
  changes.reports.clear();  // recomputed against what the listeners knew
  for (const auto& [node, value] : reports_) {
    auto it = old_reports.find(node);
    if (it == old_reports.end() || it->second != value) {
      changes.reports[node] = value;
    } else if (auto was = old_changed.find(node); was != old_changed.end()) {
      report_changed_[node] = was->second;  // unchanged: as old as it was
    }
  }
  for (const auto& [node, value] : old_reports) {
    if (!reports_.contains(node)) changes.reports[node] = std::nullopt;
  }
  const int64_t read_at = response->header().revision();
  // Own commits newer than this read (acknowledged while it was in flight) stay applied.
  for (auto it = ahead_.begin(); it != ahead_.end();) {
    if (it->second.revision <= read_at) {
      it = ahead_.erase(it);
    } else {
      Changes ignored;  // own writes: their callers know them
      ApplyKeyLocked(it->first, it->second.value, ignored);
      ++it;
    }
  }
  changes.revision_moved = revision_ != old_revision;
  changes.revision = revision_;
  watch_revision_ = read_at;
  ++reloads_;
  return changes;
}

uint64_t EtcdStore::reloads() const {
  absl::MutexLock lock(&mu_);
  return reloads_;
}

EtcdStore::Changes EtcdStore::Apply(const etcdserverpb::WatchResponse& response) {
  Changes changes;
  absl::MutexLock lock(&mu_);
  for (const auto& event : response.events()) {
    const int64_t at = event.kv().mod_revision();  // for a delete, the deletion's revision
    if (at <= watch_revision_) continue;           // delivered before (a restarted watch)
    auto ahead = ahead_.find(event.kv().key());
    if (ahead != ahead_.end() && at <= ahead->second.revision) continue;  // we wrote newer
    std::optional<std::string> value;
    if (event.type() == etcdserverpb::Event::PUT) value = event.kv().value();
    ApplyKeyLocked(event.kv().key(), value, changes);
  }
  for (const auto& event : response.events()) {
    watch_revision_ = std::max(watch_revision_, event.kv().mod_revision());
  }
  // The header of a response is the store's revision, not how far this watch has got: a
  // watch that is catching up, and its `created` answer, can lag it. Only a progress
  // notification (no events, sent to a watch that is in sync) vouches for it.
  if (response.events_size() == 0 && !response.created() && !response.canceled()) {
    watch_revision_ = std::max(watch_revision_, response.header().revision());
  }
  std::erase_if(ahead_, [&](const auto& kv) { return kv.second.revision <= watch_revision_; });
  changes.revision = revision_;
  return changes;
}

void EtcdStore::RepeatRemoteReports() {
  // Static stability: while etcd cannot tell us anything, the last reports of other
  // centrals' nodes are given again, so those nodes keep their last known state rather than
  // age out and stop being routed to.
  // Only reports that were still changing when etcd went quiet: a node that had died before
  // (its report left behind under a live central's lease) must not be brought back online
  // for the whole outage (C-4).
  const auto now = options_.clock->Monotonic();
  if (!quiet_since_) quiet_since_ = now;
  const auto fresh_after = *quiet_since_ - kFreshReport;
  Changes last;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [node, report] : reports_) {
      if (own_.contains(node)) continue;
      auto changed = report_changed_.find(node);
      if (changed == report_changed_.end() || changed->second < fresh_after) continue;
      last.reports[node] = report;
    }
  }
  Notify(last);
}

void EtcdStore::Notify(const Changes& changes) {
  // listener_mu_ (not mu_) is held through the calls so that replacing a listener waits for
  // a call in progress: its owner may be gone once the replacement returns.
  absl::MutexLock lock(&listener_mu_);
  if (report_listener_) {
    for (const auto& [node, value] : changes.reports) report_listener_(node, value);
  }
  if (changes.revision_moved && change_listener_) change_listener_(changes.revision);
}

bool EtcdStore::WaitStop(std::chrono::milliseconds d) {
  absl::MutexLock lock(&mu_);
  auto stopping = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stop_; };
  mu_.AwaitWithTimeout(absl::Condition(&stopping), absl::FromChrono(d));
  return stop_;
}

void EtcdStore::WatchLoop() {
  std::chrono::milliseconds backoff{200};
  bool reload = false;
  while (true) {
    if (reload) {
      auto changes = Reload();
      if (!changes.ok()) {
        log::Warn("etcd_reload_failed", {{"error", changes.status().ToString()}});
        RepeatRemoteReports();
        if (WaitStop(backoff)) return;
        backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
        continue;
      }
      log::Info("etcd_reloaded", {{"revision", changes->revision}});
      quiet_since_.reset();
      Notify(*changes);
      reload = false;
    }
    int64_t from;
    {
      absl::MutexLock lock(&mu_);
      if (stop_) return;
      from = watch_revision_ + 1;
    }
    absl::Status ended = client_->Watch(
        options_.prefix, PrefixEnd(options_.prefix), from,
        [&](const etcdserverpb::WatchResponse& response) {
          if (response.compact_revision() > 0 || response.canceled()) {
            // Our start was compacted away (or etcd gave up on the watch): read it all again.
            log::Warn("etcd_watch_restart", {{"compact_revision", response.compact_revision()},
                                             {"reason", response.cancel_reason()}});
            reload = true;
            return false;
          }
          Notify(Apply(response));
          backoff = std::chrono::milliseconds(200);
          quiet_since_.reset();
          return true;
        });
    {
      absl::MutexLock lock(&mu_);
      if (stop_) return;
    }
    if (!reload && absl::IsResourceExhausted(ended)) {
      // The catch-up from `from` is more than one answer may carry (a central cut off while
      // the others wrote reports): resuming there would fail the same way for ever. Read it
      // all again, from now.
      log::Warn("etcd_watch_restart", {{"from", from}, {"reason", ended.ToString()}});
      reload = true;
    }
    if (!reload) {
      log::Warn("etcd_watch_failed", {{"error", ended.ToString()}});
      RepeatRemoteReports();
      if (WaitStop(backoff)) return;
      backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
    }
  }
}

absl::StatusOr<uint64_t> EtcdStore::CommitIf(const std::vector<Mutation>& mutations,
                                             std::optional<uint64_t> if_revision) {
  if (mutations.size() + 1 > kMaxTxnOps) {
    return absl::InvalidArgumentError(absl::StrCat("one commit may change at most ", kMaxTxnOps - 1,
                                                   " keys, not ", mutations.size()));
  }
  absl::MutexLock commit(&commit_mu_);
  uint64_t base;
  {
    absl::MutexLock lock(&mu_);
    base = revision_;
  }
  if (if_revision && *if_revision != base) {
    return absl::AbortedError(absl::StrCat("the configuration is at revision ", base, ", not ",
                                           *if_revision, ": read it again and retry"));
  }
  etcdserverpb::TxnRequest txn;
  auto* compare = txn.add_compare();
  compare->set_key(RevisionKey());
  compare->set_result(etcdserverpb::Compare::EQUAL);
  if (base == 0) {
    compare->set_target(etcdserverpb::Compare::VERSION);  // the counter does not exist yet
    compare->set_version(0);
  } else {
    compare->set_target(etcdserverpb::Compare::VALUE);
    compare->set_value(absl::StrCat(base));
  }
  AddPut(txn, RevisionKey(), absl::StrCat(base + 1), 0);
  for (const Mutation& m : mutations) {
    if (m.value) {
      AddPut(txn, ConfigKey(m.kind, m.key), *m.value, 0);
    } else {
      AddDelete(txn, ConfigKey(m.kind, m.key));
    }
  }
  txn.add_failure()->mutable_request_range()->set_key(RevisionKey());
  auto response = client_->Txn(txn);
  if (!response.ok()) return response.status();
  if (!response->succeeded()) {
    uint64_t now = 0;
    if (response->responses_size() > 0 && response->responses(0).response_range().kvs_size() > 0) {
      now = ParseCounter(response->responses(0).response_range().kvs(0).value());
    }
    // the caller's retry must see what beat it, so wait (bounded) until the watch has
    // brought the mirror to that revision; then its re-read is current.
    {
      absl::MutexLock lock(&mu_);
      auto caught_up = [this, now]()
                           ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return revision_ >= now; };
      mu_.AwaitWithTimeout(absl::Condition(&caught_up), absl::Seconds(3));
    }
    return absl::AbortedError(absl::StrCat("another central changed the configuration (revision ",
                                           now, ", this one had ", base,
                                           "): read it again and retry"));
  }
  absl::MutexLock lock(&mu_);
  // The watch may have applied this transaction already (and later ones after it).
  const int64_t at = response->header().revision();
  if (watch_revision_ < at) {
    Changes ignored;  // the caller knows what it wrote
    auto apply = [&](const std::string& key, const std::optional<std::string>& value) {
      ApplyKeyLocked(key, value, ignored);
      ahead_[key] = AheadWrite{at, value};
    };
    apply(RevisionKey(), absl::StrCat(base + 1));
    for (const Mutation& m : mutations) apply(ConfigKey(m.kind, m.key), m.value);
  }
  return base + 1;
}

absl::StatusOr<std::optional<std::string>> EtcdStore::Get(Kind kind, std::string_view key) {
  absl::MutexLock lock(&mu_);
  auto it = config_.find(ConfigKey(kind, key));
  if (it == config_.end()) return std::optional<std::string>();
  return std::optional<std::string>(it->second);
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> EtcdStore::Scan(Kind kind) {
  const std::string prefix = ConfigKey(kind, "");
  std::vector<std::pair<std::string, std::string>> out;
  absl::MutexLock lock(&mu_);
  for (auto it = config_.lower_bound(prefix); it != config_.end(); ++it) {
    if (!absl::StartsWith(it->first, prefix)) break;
    out.emplace_back(it->first.substr(prefix.size()), it->second);
  }
  return out;
}

uint64_t EtcdStore::revision() const {
  absl::MutexLock lock(&mu_);
  return revision_;
}

absl::Status EtcdStore::PutReport(std::string_view node_id, std::string_view report) {
  absl::MutexLock lock(&mu_);
  reports_[std::string(node_id)] = std::string(report);
  own_[std::string(node_id)] = std::string(report);
  pending_[std::string(node_id)] = std::string(report);
  return absl::OkStatus();
}

absl::Status EtcdStore::DeleteReport(std::string_view node_id) {
  absl::MutexLock lock(&mu_);
  reports_.erase(std::string(node_id));
  own_.erase(std::string(node_id));
  pending_[std::string(node_id)] = std::nullopt;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> EtcdStore::ScanReports() {
  absl::MutexLock lock(&mu_);
  return std::vector<std::pair<std::string, std::string>>(reports_.begin(), reports_.end());
}

void EtcdStore::SetChangeListener(ChangeListener listener) {
  absl::MutexLock lock(&listener_mu_);
  change_listener_ = std::move(listener);
}

void EtcdStore::SetReportListener(ReportListener listener) {
  absl::MutexLock lock(&listener_mu_);
  report_listener_ = std::move(listener);
}

absl::Status EtcdStore::FlushReports() {
  absl::MutexLock flushing(&flush_mu_);
  std::map<std::string, std::optional<std::string>> pending;
  int64_t lease;
  {
    absl::MutexLock lock(&mu_);
    pending.swap(pending_);
    lease = lease_;
  }
  if (pending.empty()) return absl::OkStatus();
  if (lease == 0) {
    auto granted = client_->GrantLease(options_.report_ttl);
    if (!granted.ok()) {
      absl::MutexLock lock(&mu_);
      // Back in the queue, unless a newer report of the node arrived meanwhile.
      for (auto& [node, value] : pending) pending_.try_emplace(node, std::move(value));
      return granted.status();
    }
    lease = *granted;
    absl::MutexLock lock(&mu_);
    lease_ = lease;
  }
  // Batches of at most kMaxTxnOps operations and kMaxTxnReportBytes of values (etcd refuses a
  // request over its --max-request-bytes, 1.5 MiB by default); only a batch that failed goes
  // back in the queue, and a value no batch can carry is dropped (logged), never retried.
  etcdserverpb::TxnRequest txn;
  size_t txn_bytes = 0;
  std::vector<std::string> batch;  // the nodes in `txn`
  std::vector<std::string> failed;
  absl::Status status;
  auto send = [&] {
    if (txn.success_size() == 0) return;
    auto response = client_->Txn(txn);
    if (!response.ok()) {
      if (status.ok()) status = response.status();
      failed.insert(failed.end(), batch.begin(), batch.end());
    }
    txn.Clear();
    txn_bytes = 0;
    batch.clear();
  };
  for (const auto& [node, value] : pending) {
    const size_t bytes = value ? value->size() : 0;
    if (bytes > kMaxTxnReportBytes) {
      static log::Throttle not_shared_log(10'000);
      uint64_t held_back = 0;
      if (!not_shared_log.Allow(UnixMillis(options_.clock->Now()), &held_back)) continue;
      log::Warn("report_not_shared", {{"node", node},
                                      {"held_back", held_back},
                                      {"bytes", bytes},
                                      {"max_bytes", kMaxTxnReportBytes},
                                      {"reason", "larger than one etcd request may carry"}});
      continue;
    }
    if (txn_bytes + bytes > kMaxTxnReportBytes) send();
    if (value) {
      AddPut(txn, ReportKey(node), *value, lease);
    } else {
      AddDelete(txn, ReportKey(node));
    }
    txn_bytes += bytes;
    batch.push_back(node);
    if (static_cast<size_t>(txn.success_size()) >= kMaxTxnOps) send();
  }
  send();
  if (!failed.empty()) {
    absl::MutexLock lock(&mu_);
    // Back in the queue, unless a newer report of the node arrived meanwhile.
    for (const auto& node : failed) pending_.try_emplace(node, std::move(pending[node]));
  }
  return status;
}

void EtcdStore::FlushLoop() {
  auto last_keepalive = options_.clock->Monotonic();
  while (!WaitStop(options_.report_flush)) {
    int64_t lease;
    {
      absl::MutexLock lock(&mu_);
      lease = lease_;
    }
    const auto now = options_.clock->Monotonic();
    if (lease != 0 && now - last_keepalive >= options_.report_ttl / 3) {
      absl::Status alive = client_->KeepAlive(lease);
      if (alive.ok()) {
        last_keepalive = now;
      } else if (absl::IsNotFound(alive)) {
        // The lease expired (etcd was away too long): a new one, and every report again.
        log::Warn("etcd_report_lease_lost", {{"lease", lease}});
        absl::MutexLock lock(&mu_);
        lease_ = 0;
        for (const auto& [node, report] : own_) pending_[node] = report;
      }
    }
    if (absl::Status s = FlushReports(); !s.ok()) {
      log::Warn("etcd_report_flush_failed", {{"error", s.ToString()}});
    }
  }
}

}  // namespace meshwork::central::etcd
