// C-10: central's Store on a real etcd (Debian's etcd-server on loopback). The same contract
// suite as RocksDB's (tests/store_contract.h), then what only a shared store does: two
// stores on one etcd see each other's commits and reports, a stale write is refused whole,
// a dead writer's reports expire with its lease, and with etcd gone reads keep answering
// while writes fail Unavailable.
#include "central/etcd/etcd_store.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "central/etcd/leader_election.h"
#include "central/model/config_service.h"
#include "nlohmann/json.hpp"
#include "tests/integration/etcd_harness.h"
#include "tests/integration/media_harness.h"
#include "tests/integration/tcp_proxy.h"
#include "tests/store_contract.h"

namespace meshwork::testing {
namespace {

using central::Kind;
using central::Store;
namespace etcd = central::etcd;

std::unique_ptr<etcd::EtcdStore> OpenStore(const std::string& endpoints,
                                           etcd::EtcdStoreOptions options = {}) {
  etcd::EtcdOptions client_options;
  client_options.endpoints = etcd::ParseEndpoints(endpoints);
  client_options.request_timeout = std::chrono::milliseconds(5000);
  auto client = etcd::EtcdClient::Connect(client_options);
  REQUIRE(client.ok());
  auto store = etcd::EtcdStore::Open(std::shared_ptr<etcd::EtcdClient>(std::move(*client)),
                                     std::move(options));
  INFO(store.status().ToString());
  REQUIRE(store.ok());
  return std::move(*store);
}

// One single-member etcd per test; Open() is a new store on the same prefix (a reopen).
class EtcdBackend {
 public:
  EtcdBackend() : etcd_(EtcdCluster::Start(1, MakeTempDir("etcd-store"))) {}
  std::unique_ptr<Store> Open() { return OpenStore(etcd_->Endpoints()); }

 private:
  std::unique_ptr<EtcdCluster> etcd_;
};

MESHWORK_STORE_CONTRACT("C-10 etcd: ", EtcdBackend)

TEST_CASE("C-10 two centrals on one etcd see each other's commits, and a stale write is refused") {
  auto cluster = EtcdCluster::Start(1, MakeTempDir("etcd-two"));
  auto a = OpenStore(cluster->Endpoints());
  auto b = OpenStore(cluster->Endpoints());
  absl::Mutex mu;
  uint64_t heard = 0;
  b->SetChangeListener([&](uint64_t revision) {
    absl::MutexLock lock(&mu);
    heard = revision;
  });
  auto rev = a->Commit({{Kind::kZones, "eu", "z1"}, {Kind::kStreams, "news", "s1"}});
  REQUIRE(rev.ok());
  REQUIRE(*rev == 1);
  REQUIRE(Eventually(
      [&] {
        absl::MutexLock lock(&mu);
        return heard == 1;
      },
      5s));
  CHECK(b->revision() == 1);
  CHECK(*b->Get(Kind::kZones, "eu") == std::optional<std::string>("z1"));
  CHECK(b->Scan(Kind::kStreams)->size() == 1);

  // b writes on top; a then writes from revision 1, which b has left: refused, nothing written.
  REQUIRE(b->CommitIf({{Kind::kZones, "us", "z2"}}, 1).ok());
  auto stale = a->CommitIf({{Kind::kZones, "asia", "z3"}}, 1);
  if (stale.ok()) {
    FAIL("a write based on revision 1 succeeded at " << *stale);
  }
  CHECK(absl::IsAborted(stale.status()));
  INFO(stale.status().ToString());
  REQUIRE(Eventually([&] { return a->revision() == 2; }, 5s));
  CHECK(*a->Get(Kind::kZones, "asia") == std::nullopt);
  CHECK(*a->Get(Kind::kZones, "us") == std::optional<std::string>("z2"));
  // Without a base revision, a's commit lands on top of b's.
  auto next = a->Commit({{Kind::kZones, "asia", "z3"}});
  REQUIRE(next.ok());
  CHECK(*next == 3);
  REQUIRE(Eventually([&] { return b->revision() == 3; }, 5s));
}

TEST_CASE("R-10 a store that loses a commit race has read what beat it when it returns") {
  // Centrals starting together race for their first writes; the loser re-reads and retries,
  // which works only if its mirror already holds the winner's revision when it hears ABORTED.
  auto cluster = EtcdCluster::Start(1, MakeTempDir("etcd-race"));
  auto a = OpenStore(cluster->Endpoints());
  auto b = OpenStore(cluster->Endpoints());
  int lost = 0;
  for (int i = 0; i < 40; ++i) {
    auto won = b->Commit({{Kind::kZones, "b" + std::to_string(i), "z"}});
    REQUIRE(won.ok());
    // At once, from what a has seen so far: refused whenever a's mirror had not heard of b's.
    auto raced = a->CommitIf({{Kind::kZones, "a" + std::to_string(i), "z"}}, a->revision());
    if (raced.ok()) {
      REQUIRE(Eventually([&] { return b->revision() == *raced; }, 5s));
      continue;
    }
    REQUIRE(absl::IsAborted(raced.status()));
    ++lost;
    CHECK(a->revision() >= *won);  // caught up before the ABORTED came back
  }
  INFO("races lost: " << lost);
  CHECK(lost > 0);  // the race happened at least once, so the check above ran
}

TEST_CASE("R-10 C-10 a write to one central right after a write to another is taken, not a 409") {
  // An operator (or a script) writes through central A, then at once through central B: B's
  // mirror may not have heard of A's commit yet, so its commit loses the race in etcd. No
  // API write is conditional, so B must compute it again from what beat it and succeed.
  auto cluster = EtcdCluster::Start(1, MakeTempDir("etcd-writes"));
  auto store_a = OpenStore(cluster->Endpoints());
  auto store_b = OpenStore(cluster->Endpoints());
  auto a = central::ConfigService::Load(store_a.get());
  auto b = central::ConfigService::Load(store_b.get());
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  auto zone = [](int i, int office) {
    return nlohmann::json{
        {"routes", {"10." + std::to_string(i) + "." + std::to_string(office) + ".0/24"}}};
  };
  for (int i = 0; i < 30; ++i) {
    auto on_a = (*a)->PutObject(central::ObjectKind::kZone, "a" + std::to_string(i), zone(i, 1));
    INFO(on_a.status().ToString());
    REQUIRE(on_a.ok());
    auto on_b = (*b)->PutObject(central::ObjectKind::kZone, "b" + std::to_string(i), zone(i, 2));
    INFO(on_b.status().ToString());
    REQUIRE(on_b.ok());
  }
  // Both hold all sixty zones in the end. (Without the retry, some of B's writes come back
  // ABORTED: the race of the test above, lost in most runs.)
  REQUIRE(Eventually([&] { return (*a)->Current()->zones.size() == 60; }, 5s));
  CHECK((*b)->Current()->zones.size() == 60);
}

TEST_CASE("C-10 reports are shared between centrals and expire with their writer's lease") {
  auto cluster = EtcdCluster::Start(1, MakeTempDir("etcd-reports"));
  etcd::EtcdStoreOptions short_lease;
  short_lease.report_ttl = std::chrono::seconds(2);
  short_lease.report_flush = std::chrono::milliseconds(200);
  auto b = OpenStore(cluster->Endpoints());
  absl::Mutex mu;
  std::map<std::string, std::optional<std::string>> seen;
  b->SetReportListener([&](const std::string& node, const std::optional<std::string>& value) {
    absl::MutexLock lock(&mu);
    seen[node] = value;
  });
  auto seen_as = [&](const std::string& node, std::optional<std::string> want) {
    absl::MutexLock lock(&mu);
    auto it = seen.find(node);
    return it != seen.end() && it->second == want;
  };
  {
    auto a = OpenStore(cluster->Endpoints(), short_lease);
    REQUIRE(a->PutReport("edge-1", "load-1").ok());
    REQUIRE(a->PutReport("edge-2", "load-2").ok());
    REQUIRE(Eventually([&] { return seen_as("edge-1", "load-1"); }, 5s));
    REQUIRE(a->PutReport("edge-1", "load-1b").ok());
    REQUIRE(a->DeleteReport("edge-2").ok());
    REQUIRE(Eventually([&] { return seen_as("edge-1", "load-1b"); }, 5s));
    REQUIRE(Eventually([&] { return seen_as("edge-2", std::nullopt); }, 5s));
    auto rows = b->ScanReports();
    REQUIRE(rows.ok());
    CHECK(*rows == central::contract::Rows{{"edge-1", "load-1b"}});
    CHECK(b->revision() == 0);  // reports are not configuration
    // reports that together pass what one etcd request may carry (1.5 MiB) go in several,
    // and one no request can carry is dropped rather than holding back every other.
    const std::string big(600 << 10, 'r');
    REQUIRE(a->PutReport("huge", std::string(2 << 20, 'h')).ok());
    for (int i = 0; i < 4; ++i) REQUIRE(a->PutReport("big-" + std::to_string(i), big).ok());
    for (int i = 0; i < 4; ++i) {
      CHECK(Eventually([&] { return seen_as("big-" + std::to_string(i), big); }, 5s));
    }
    CHECK_FALSE(seen_as("huge", std::string(2 << 20, 'h')));
  }
  // a is gone without a word: its lease runs out (2 s) and its reports go with it.
  std::chrono::milliseconds took{0};
  REQUIRE(Eventually([&] { return seen_as("edge-1", std::nullopt); }, 10s, &took));
  WARN("a dead writer's report vanished after " << took.count() << " ms (lease TTL 2 s)");
  CHECK(b->ScanReports()->empty());
}

TEST_CASE("C-4 C-10 cut off from etcd, a central repeats live nodes' reports, not dead ones'") {
  auto cluster = EtcdCluster::Start(1, MakeTempDir("etcd-stale"));
  TcpProxy link(cluster->members()[0].endpoint());
  auto a = OpenStore(cluster->Endpoints());
  auto b = OpenStore(link.address());
  absl::Mutex mu;
  std::map<std::string, int> heard;
  b->SetReportListener([&](const std::string& node, const std::optional<std::string>& value) {
    absl::MutexLock lock(&mu);
    if (value) ++heard[node];
  });
  auto count = [&](const std::string& node) {
    absl::MutexLock lock(&mu);
    return heard[node];
  };
  // "dead" reported once, then died (a's lease keeps its report); "live" reports on.
  REQUIRE(a->PutReport("dead", "last words").ok());
  int n = 0;
  auto report_live = [&] { REQUIRE(a->PutReport("live", "load-" + std::to_string(++n)).ok()); };
  report_live();
  REQUIRE(Eventually([&] { return count("dead") == 1 && count("live") >= 1; }, 5s));
  // Longer than the freshness window (5 s) of live reports, each a change, at a node's pace.
  for (auto until = std::chrono::steady_clock::now() + 6s;
       std::chrono::steady_clock::now() < until;) {
    report_live();
    std::this_thread::sleep_for(200ms);
  }
  REQUIRE(Eventually([&] { return count("live") >= 4; }, 5s));  // flushed once a second
  const int dead_before = count("dead"), live_before = count("live");
  link.Cut();
  // b's watch fails: it repeats what it knew of other centrals' nodes, the live one only.
  CHECK(Eventually([&] { return count("live") >= live_before + 2; }, 10s));
  CHECK(count("dead") == dead_before);
  link.Restore();
}

TEST_CASE("C-10 with etcd gone reads answer from the last state and writes fail Unavailable") {
  auto cluster = EtcdCluster::Start(1, MakeTempDir("etcd-gone"));
  auto store = OpenStore(cluster->Endpoints());
  REQUIRE(store->Commit({{Kind::kStreams, "news", "s1"}}).ok());
  cluster->Kill(0);
  auto write = store->Commit({{Kind::kStreams, "sport", "s2"}});
  REQUIRE_FALSE(write.ok());
  CHECK(absl::IsUnavailable(write.status()));
  CHECK(write.status().message().find("etcd is unavailable") != std::string::npos);
  CHECK(store->revision() == 1);
  CHECK(*store->Get(Kind::kStreams, "news") == std::optional<std::string>("s1"));
  CHECK(*store->Get(Kind::kStreams, "sport") == std::nullopt);
}

TEST_CASE("C-10 with etcd authentication on, the store logs in, a wrong password is refused") {
  auto cluster = EtcdCluster::Start(1, MakeTempDir("etcd-auth"));
  const std::string ctl = "ETCDCTL_API=3 /usr/bin/etcdctl --endpoints=" + cluster->Endpoints();
  for (const std::string args :
       {"user add root:root-pw", "user add central:central-pw", "role add meshwork",
        "role grant-permission meshwork --prefix=true readwrite /meshwork/",
        "user grant-role central meshwork", "auth enable"}) {
    auto [rc, out] = RunCommand(ctl + " " + args + " 2>&1");
    INFO(args << ": " << out);
    REQUIRE(rc == 0);
  }
  auto open = [&](const std::string& password) {
    etcd::EtcdOptions options;
    options.endpoints = etcd::ParseEndpoints(cluster->Endpoints());
    options.user = "central";
    options.password = password;
    return etcd::EtcdClient::Connect(options);
  };
  auto refused = open("wrong");
  REQUIRE_FALSE(refused.ok());
  INFO(refused.status().ToString());
  CHECK(refused.status().message().find("authentication as central") != std::string::npos);

  auto client = open("central-pw");
  REQUIRE(client.ok());
  auto store = etcd::EtcdStore::Open(std::shared_ptr<etcd::EtcdClient>(std::move(*client)), {});
  INFO(store.status().ToString());
  REQUIRE(store.ok());
  auto rev = (*store)->Commit({{Kind::kZones, "eu", "z"}});
  INFO(rev.status().ToString());
  REQUIRE(rev.ok());
  CHECK(*rev == 1);
  // Without a login, etcd refuses to show the data.
  auto [rc, out] = RunCommand(ctl + " get --prefix /meshwork/ 2>&1");
  INFO(out);
  CHECK(rc != 0);
  CHECK(out.find("Error") != std::string::npos);
}

TEST_CASE("C-10 the leader compacts etcd's history older than its retention") {
  auto cluster = EtcdCluster::Start(1, MakeTempDir("etcd-leader-compact"));
  const std::string ctl = "ETCDCTL_API=3 /usr/bin/etcdctl --endpoints=" + cluster->Endpoints();
  auto client = [&] {
    etcd::EtcdOptions options;
    options.endpoints = etcd::ParseEndpoints(cluster->Endpoints());
    auto c = etcd::EtcdClient::Connect(options);
    REQUIRE(c.ok());
    return std::shared_ptr<etcd::EtcdClient>(std::move(*c));
  };
  auto store = OpenStore(cluster->Endpoints());
  REQUIRE(store->Commit({{Kind::kZones, "eu", "z1"}}).ok());
  auto revision_now = [&] {
    auto [rc, out] = RunCommand(ctl + " get /meshwork/config/revision -w json");
    REQUIRE(rc == 0);
    return nlohmann::json::parse(out)["header"]["revision"].get<int64_t>();
  };
  const int64_t first = revision_now();
  auto compacted = [&](int64_t revision) {
    auto old = RunCommand(ctl + " get /meshwork/config/revision --rev=" + std::to_string(revision) +
                          " 2>&1");
    return old.second.find("compacted") != std::string::npos;
  };
  CHECK_FALSE(compacted(first));
  // Two centrals' elections (one leads), keeping 2 s of history; writes go on meanwhile.
  central::etcd::LeaderElection a(client(), "/meshwork/leader", "a", std::chrono::seconds(3),
                                  RealClock::Get(), nullptr, std::chrono::seconds(2));
  central::etcd::LeaderElection b(client(), "/meshwork/leader", "b", std::chrono::seconds(3),
                                  RealClock::Get(), nullptr, std::chrono::seconds(2));
  a.Start();
  b.Start();
  REQUIRE(Eventually([&] { return a.IsLeader() != b.IsLeader(); }, 10s));
  int n = 0;
  REQUIRE(Eventually(
      [&] {
        REQUIRE(store->Commit({{Kind::kStreams, "s", std::to_string(++n)}}).ok());
        return compacted(first);
      },
      20s));
  // What is newer than the retention stays readable.
  CHECK_FALSE(compacted(revision_now()));
  CHECK(*store->Get(Kind::kZones, "eu") == std::optional<std::string>("z1"));
}

TEST_CASE("C-10 a store cut off while etcd compacts its history reloads whole and catches up") {
  auto cluster = EtcdCluster::Start(1, MakeTempDir("etcd-compact"));
  const std::string ctl = "ETCDCTL_API=3 /usr/bin/etcdctl --endpoints=" + cluster->Endpoints();
  TcpProxy link(cluster->members()[0].endpoint());
  auto a = OpenStore(cluster->Endpoints());
  auto b = OpenStore(link.address());  // b reaches etcd only through `link`
  absl::Mutex mu;
  uint64_t heard = 0;
  b->SetChangeListener([&](uint64_t revision) {
    absl::MutexLock lock(&mu);
    heard = revision;
  });
  REQUIRE(a->Commit({{Kind::kZones, "eu", "z1"}, {Kind::kStreams, "news", "s1"}}).ok());
  INFO("connections through the link: " << link.accepted());
  REQUIRE(Eventually([&] { return b->revision() == 1; }, 5s));
  CHECK(b->reloads() == 1);  // the read at Open

  link.Cut();
  // While b cannot hear anything: a deletes, adds and changes keys, then etcd compacts
  // everything up to now, so the revision b's watch resumes from no longer exists.
  REQUIRE(a->Commit({{Kind::kZones, "eu", std::nullopt}, {Kind::kZones, "us", "z2"}}).ok());
  REQUIRE(a->Commit({{Kind::kStreams, "news", "s1b"}}).ok());
  auto [rc, out] = RunCommand(ctl + " get /meshwork/config/revision -w json");
  REQUIRE(rc == 0);
  const int64_t now = nlohmann::json::parse(out)["header"]["revision"].get<int64_t>();
  auto compact = RunCommand(ctl + " compact " + std::to_string(now) + " 2>&1");
  INFO(compact.second);
  REQUIRE(compact.first == 0);
  auto old =
      RunCommand(ctl + " get /meshwork/config/revision --rev=" + std::to_string(now - 1) + " 2>&1");
  CHECK(old.second.find("compacted") != std::string::npos);  // history is really gone
  // Meanwhile b answers reads from what it last knew.
  CHECK(b->revision() == 1);
  CHECK(*b->Get(Kind::kZones, "eu") == std::optional<std::string>("z1"));

  link.Restore();
  std::chrono::milliseconds took{0};
  REQUIRE(Eventually([&] { return b->revision() == 3; }, 15s, &took));
  WARN("b caught up " << took.count() << " ms after the link came back");
  CHECK(b->reloads() == 2);  // the watch started over from a whole read, not from history
  CHECK(*b->Get(Kind::kZones, "eu") == std::nullopt);
  CHECK(*b->Get(Kind::kZones, "us") == std::optional<std::string>("z2"));
  CHECK(*b->Get(Kind::kStreams, "news") == std::optional<std::string>("s1b"));
  REQUIRE(Eventually(
      [&] {
        absl::MutexLock lock(&mu);
        return heard == 3;
      },
      5s));
  // And it follows new commits again through the restarted watch.
  REQUIRE(a->Commit({{Kind::kZones, "asia", "z3"}}).ok());
  REQUIRE(Eventually([&] { return b->revision() == 4; }, 5s));
  CHECK(b->reloads() == 2);
}

TEST_CASE(
    "C-10 over TLS with client certificates the store works, a wrong CA or no certificate "
    "is refused") {
  const std::string dir = MakeTempDir("etcd-tls");
  EtcdTls tls;
  tls.ca_file = MakeTestPki(dir, "meshwork-test", {"etcd", "central"});
  tls.cert_file = dir + "/etcd.pem";
  tls.key_file = dir + "/etcd.key";
  const std::string other_ca = MakeTestPki(dir, "someone-else", {});
  auto cluster = EtcdCluster::Start(1, dir, &tls);
  auto connect = [&](const std::string& ca, bool with_cert) {
    etcd::EtcdOptions options;
    options.endpoints = etcd::ParseEndpoints(cluster->Endpoints());
    options.request_timeout = std::chrono::milliseconds(3000);
    options.ca_file = ca;
    if (with_cert) {
      options.cert_file = dir + "/central.pem";
      options.key_file = dir + "/central.key";
    }
    return etcd::EtcdClient::Connect(options);
  };
  auto open = [&](const std::string& ca, bool with_cert) -> absl::Status {
    auto client = connect(ca, with_cert);
    if (!client.ok()) return client.status();
    auto store = etcd::EtcdStore::Open(std::shared_ptr<etcd::EtcdClient>(std::move(*client)), {});
    if (!store.ok()) return store.status();
    auto rev = (*store)->Commit({{Kind::kZones, "eu", "z"}});
    if (!rev.ok()) return rev.status();
    auto again = (*store)->Get(Kind::kZones, "eu");
    if (!again.ok()) return again.status();
    return *again == std::optional<std::string>("z") ? absl::OkStatus()
                                                     : absl::InternalError("read back differs");
  };
  auto good = open(tls.ca_file, true);
  INFO(good.ToString());
  CHECK(good.ok());
  auto wrong_ca = open(other_ca, true);  // etcd's certificate is not from the CA we trust
  INFO(wrong_ca.ToString());
  CHECK_FALSE(wrong_ca.ok());
  auto no_cert = open(tls.ca_file, false);  // etcd wants a client certificate
  INFO(no_cert.ToString());
  CHECK_FALSE(no_cert.ok());
  // Plain text to a TLS member gets nowhere either.
  etcd::EtcdOptions plain;
  plain.endpoints = etcd::ParseEndpoints(cluster->Endpoints());
  plain.request_timeout = std::chrono::milliseconds(2000);
  auto plain_client = etcd::EtcdClient::Connect(plain);
  if (plain_client.ok()) {
    etcdserverpb::RangeRequest probe;
    probe.set_key("/x");
    CHECK_FALSE((*plain_client)->Range(probe).ok());
  }
}

}  // namespace
}  // namespace meshwork::testing
