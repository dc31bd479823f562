// C-10, C-3, R-4, R-5: three centrals on a three-member etcd cluster, three streamers that
// each know all three centrals, and an ffmpeg source. The leader is killed (-9) in the middle
// of 1 000 writes and a stream of routing requests, with hls.js playing from a node; then
// etcd members are killed one, then two.
#include <signal.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <future>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "tests/integration/etcd_harness.h"
#include "tests/integration/harness.h"
#include "tests/integration/media_harness.h"

namespace meshwork::testing {
namespace {

bool Alive(const Central& c) { return c.process && c.process->running(); }

// A client that, like meshctl or a player, tries the next central when one fails.
HttpResult AnyCentral(std::vector<Central>& centrals, size_t& next, const std::string& method,
                      const std::string& target, const std::string& body = "") {
  HttpResult last;
  for (size_t i = 0; i < centrals.size(); ++i) {
    Central& c = centrals[(next + i) % centrals.size()];
    if (!Alive(c)) continue;
    last = Http(method, c.http, target, body, {}, 3s);
    if (last.status != 0 && last.status != 409 && last.status != 503) {
      next = (next + i + 1) % centrals.size();
      return last;
    }
  }
  next = (next + 1) % centrals.size();
  return last;
}

TEST_CASE("C-10 three centrals on etcd: kill -9 of the leader loses no acknowledged write") {
  const std::string dir = MakeTempDir("ha");
  auto etcd = EtcdCluster::Start(3, dir + "/etcd");
  std::vector<Central> centrals;
  for (int i = 0; i < 3; ++i) {
    centrals.push_back(StartCentral(
        dir + "/c" + std::to_string(i), "127.0.0.1:0", "127.0.0.1:0",
        {"--etcd_endpoints=" + etcd->Endpoints(), "--instance_id=c" + std::to_string(i),
         "--leader_lease_s=3", "--offline_after_ms=3000"}));
  }
  // One leader among the three.
  int leader = -1;
  REQUIRE(Eventually(
      [&] {
        int leaders = 0;
        for (int i = 0; i < 3; ++i) {
          if (MetricAt(centrals[i].http, "meshwork_central_leader") == 1) {
            leader = i;
            ++leaders;
          }
        }
        return leaders == 1;
      },
      15s));
  // A write on one central is on the others.
  auto zone =
      Http("PUT", centrals[0].http, kApi + "/zones/local", R"({"routes": ["127.0.0.0/8"]})");
  INFO(zone.body);
  REQUIRE(zone.status == 201);
  for (auto& c : centrals) {
    REQUIRE(
        Eventually([&] { return Http("GET", c.http, kApi + "/zones/local").status == 200; }, 5s));
  }
  // Three streamers, each trying a different central first.
  std::vector<std::string> grpcs;
  for (auto& c : centrals) grpcs.push_back(c.grpc);
  std::vector<Streamer> nodes;
  const std::vector<std::string> ids = {"ingest-1", "edge-1", "edge-2"};
  for (int i = 0; i < 3; ++i) {
    std::vector<std::string> order;
    for (int k = 0; k < 3; ++k) order.push_back(grpcs[(i + k) % 3]);
    nodes.push_back(StartStreamer(absl::StrJoin(order, ","), ids[i], i == 0 ? "ingest" : "edge"));
  }
  for (const auto& id : ids) {
    REQUIRE(Eventually(
        [&] {
          return Http("PATCH", centrals[1].http, kApi + "/streamers/" + id, R"({"zone": "local"})")
                     .status == 200;
        },
        10s));
  }
  auto put = Http("PUT", centrals[2].http, kApi + "/streams/demo",
                  R"({"placement": {"streamers": ["ingest-1"]}, "inputs": ["publish://"]})");
  INFO(put.body);
  REQUIRE(put.status == 201);
  // An OTT group nothing feeds, on both edges: alerts 70 and 78 for the leader to raise.
  auto reserve = Http("PUT", centrals[2].http, kApi + "/streams/reserve",
                      R"({"placement": {"streamers": ["edge-1", "edge-2"]},
                          "inputs": ["publish://"], "ott": {"enabled": true, "group": "r"}})");
  INFO(reserve.body);
  REQUIRE(reserve.status == 201);
  auto push = PushFile(SourceTs(90), nodes[0].publish, "demo");
  REQUIRE(Eventually([&] { return Http("GET", nodes[0].http, "/demo/index.m3u8").status == 200; },
                     20s));
  // Every central routes to the ingest node, though it is attached to one of them only.
  for (auto& c : centrals) {
    REQUIRE(Eventually(
        [&] {
          auto r = Http("GET", c.http, "/demo/index.m3u8");
          return r.status == 302 && r.headers["Location"].find(nodes[0].http) != std::string::npos;
        },
        10s));
  }

  // hls.js plays from the ingest node through the leader's death.
  auto playing = std::async(std::launch::async, [&] {
    return PlayInBrowser("http://" + nodes[0].http + "/demo/index.m3u8", 20, "--timeout-s 60");
  });
  // Routing load: redirects from any central (the client tries the next on failure).
  std::atomic<bool> stop{false};
  std::atomic<int> routed{0}, unrouted{0};
  std::thread router([&] {
    size_t next = 0;
    while (!stop.load()) {
      auto r = AnyCentral(centrals, next, "GET", "/demo/index.m3u8");
      (r.status == 302 ? routed : unrouted)++;
    }
  });
  // 1 000 writes spread over the centrals; the leader dies after the 300th.
  std::set<std::string> acknowledged;
  size_t next = 0;
  std::future<double> new_leader;  // seconds from the kill to a survivor leading
  std::future<double> reattached;  // seconds from the kill to the dead one's streamer attached
  for (int i = 0; i < 1000; ++i) {
    const std::string name = "asset-" + std::to_string(i);
    for (int attempt = 0; attempt < 5; ++attempt) {
      auto r = AnyCentral(centrals, next, "PUT", kApi + "/vod/" + name, "{}");
      if (r.status == 201 || r.status == 200) {
        acknowledged.insert(name);
        break;
      }
    }
    if (i == 300) {
      // Streamer i tries central i first: nodes[leader] is attached to the leader.
      const double reconnects = MetricAt(nodes[leader].http, "meshwork_central_reconnects_total");
      centrals[leader].process->Signal(SIGKILL);
      centrals[leader].process->Wait();
      reattached = std::async(std::launch::async, [&nodes, leader, reconnects] {
        const auto killed = std::chrono::steady_clock::now();
        const std::string http = nodes[leader].http;
        bool back = Eventually(
            [&] {
              return MetricAt(http, "meshwork_central_reconnects_total") > reconnects &&
                     MetricAt(http, "meshwork_central_connected") == 1;
            },
            15s);
        return back ? std::chrono::duration<double>(std::chrono::steady_clock::now() - killed)
                          .count()
                    : -1.0;
      });
      new_leader = std::async(std::launch::async, [&centrals] {
        const auto killed = std::chrono::steady_clock::now();
        bool led = Eventually(
            [&] {
              for (auto& c : centrals) {
                if (Alive(c) && MetricAt(c.http, "meshwork_central_leader") == 1) return true;
              }
              return false;
            },
            15s);
        return led ? std::chrono::duration<double>(std::chrono::steady_clock::now() - killed)
                         .count()
                   : -1.0;
      });
    }
  }
  stop = true;
  router.join();
  const std::string dead = "c" + std::to_string(leader);
  CHECK(acknowledged.size() >= 990);

  // A new leader among the survivors, within the lease TTL (3 s) and one election round.
  const double new_leader_s = new_leader.get();
  CHECK(new_leader_s >= 0);
  CHECK(new_leader_s <= 3 + 1 + 1);
  // Every acknowledged write is on every survivor.
  for (auto& c : centrals) {
    if (!Alive(c)) continue;
    std::string missing;
    bool all = Eventually(
        [&] {
          auto list = Http("GET", c.http, kApi + "/vod").Json();
          if (!list.is_object() || !list["vod"].is_array()) {
            missing = "no list: " + list.dump().substr(0, 300);
            return false;
          }
          std::set<std::string> present;
          for (const auto& v : list["vod"]) {
            if (v.is_object() && v["name"].is_string()) {
              present.insert(v["name"].get<std::string>());
            } else {
              missing = "odd entry: " + v.dump().substr(0, 300);
            }
          }
          for (const auto& a : acknowledged) {
            if (!present.contains(a)) {
              missing = a + " (and maybe more) of " + std::to_string(acknowledged.size());
              return false;
            }
          }
          return true;
        },
        10s);
    INFO("missing on " << c.http << ": " << missing);
    CHECK(all);
  }
  // The streamer that used the dead central is attached to a survivor again within 5 s.
  const double reattached_s = reattached.get();
  CHECK(reattached_s >= 0);
  CHECK(reattached_s <= 5);
  for (auto& n : nodes) {
    REQUIRE(Eventually([&] { return MetricAt(n.http, "meshwork_central_connected") == 1; }, 5s));
  }
  // Alerts are still evaluated, and the new leader raises them (its alert gauges).
  for (auto& c : centrals) {
    if (!Alive(c)) continue;
    CHECK(Eventually(
        [&] {
          auto alerts = Http("GET", c.http, kApi + "/alerts").Json();
          return alerts.is_object() && alerts["alerts"].is_array() && !alerts["alerts"].empty();
        },
        10s));
  }
  CHECK(Eventually(
      [&] {
        for (auto& c : centrals) {
          if (Alive(c) && MetricAt(c.http, "meshwork_central_leader") == 1) {
            return MetricAt(c.http, "meshwork_alerts", "code=\"70\"") > 0;
          }
        }
        return false;
      },
      10s));
  auto played = playing.get();
  INFO(played.dump());
  for (const auto& e : played["errors"]) CHECK(e["fatal"] == false);
  CHECK(played["ok"] == true);
  CHECK(unrouted.load() == 0);
  WARN("killed leader " << dead << " at write 300: " << acknowledged.size()
                        << " writes acknowledged, all present on both survivors; " << routed.load()
                        << " redirects, " << unrouted.load()
                        << " failed after trying every central; a survivor led " << new_leader_s
                        << " s after the kill (lease TTL 3 s); its streamer was attached to a "
                        << "survivor " << reattached_s << " s after the kill");

  // One etcd member down: no effect. Two: writes refused (503), routing goes on.
  etcd->Kill(0);
  // Centrals whose etcd connection or watch used that member move to the next one; a client
  // that meets a 409 or 503 meanwhile retries, as with any conflict.
  CHECK(Eventually(
      [&] {
        int status = AnyCentral(centrals, next, "PUT", kApi + "/vod/after-one", "{}").status;
        return status == 201 || status == 200;
      },
      10s));
  etcd->Kill(1);
  HttpResult refused;
  for (auto& c : centrals) {
    if (Alive(c)) refused = Http("PUT", c.http, kApi + "/vod/after-two", "{}", {}, 20s);
  }
  INFO(refused.body);
  CHECK(refused.status == 503);
  CHECK(refused.body.find("etcd") != std::string::npos);
  for (auto& c : centrals) {
    if (!Alive(c)) continue;
    auto r = Http("GET", c.http, "/demo/index.m3u8");
    CHECK(r.status == 302);
  }
  CHECK(Http("GET", nodes[0].http, "/demo/index.m3u8").status == 200);
}

}  // namespace
}  // namespace meshwork::testing
