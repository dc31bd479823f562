// R-9: black holes — packets dropped, not refused — where a clean failure (a refused
// connection, a dead process) would have been noticed at once (black_hole.h). The player
// cases are beside their clean failures: ott_e2e_test.cc (the node under an hls.js viewer)
// and relay_test.cc (an edge's upstream).

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "tests/integration/black_hole.h"
#include "tests/integration/etcd_harness.h"
#include "tests/integration/harness.h"
#include "tests/integration/media_harness.h"

namespace meshwork::testing {
namespace {

TEST_CASE("R-9 one etcd member black-holed: central's writes continue") {
  std::string why;
  INFO(why);
  REQUIRE(EnterOwnNetwork(&why));
  const std::string dir = MakeTempDir("blackhole-etcd");
  auto etcd = EtcdCluster::Start(3, dir + "/etcd");
  Central central = StartCentral(dir + "/c0", "127.0.0.1:0", "127.0.0.1:0",
                                 {"--etcd_endpoints=" + etcd->Endpoints(), "--instance_id=c0"});
  int zones = 0;  // each zone its own routes: two zones may not share a prefix
  auto put = [&](const std::string& zone) {
    return Http("PUT", central.http, kApi + "/zones/" + zone,
                R"({"routes": ["10.)" + std::to_string(++zones) + R"(.0.0/16"]})", {}, 10s)
        .status;
  };
  REQUIRE(put("before") == 201);
  // The first endpoint central's client uses, silent from now on: its connection, the
  // watch on it and the member's raft traffic all stall instead of failing.
  BlackHole(etcd->members()[0].client_port);
  BlackHole(etcd->members()[0].peer_port);
  const auto holed = std::chrono::steady_clock::now();
  std::chrono::milliseconds first_write{0};
  REQUIRE(Eventually([&] { return put("during-a") == 201; }, 30s, &first_write));
  INFO("first write after the black hole took " << first_write.count() << " ms");
  // Then writes go on at their usual pace, each acknowledged and readable.
  for (const std::string zone : {"during-b", "during-c", "during-d"}) {
    const auto started = std::chrono::steady_clock::now();
    CHECK(put(zone) == 201);
    CHECK(std::chrono::steady_clock::now() - started < 5s);
  }
  for (const std::string zone : {"before", "during-a", "during-b", "during-c", "during-d"}) {
    CHECK(Http("GET", central.http, kApi + "/zones/" + zone).status == 200);
  }
  // The two members left are a quorum: no write is lost or refused for want of one.
  CHECK(std::chrono::steady_clock::now() - holed < 60s);
}

// The newest complete segment an LL-HLS media playlist lists, or -1.
int64_t NewestSegment(const std::string& playlist) {
  int64_t newest = -1;
  size_t at = 0;
  while ((at = playlist.find(".m4s", at)) != std::string::npos) {
    size_t begin = playlist.rfind('\n', at);
    std::string name = playlist.substr(begin + 1, at - begin - 1);
    if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos) {
      newest = std::max<int64_t>(newest, std::stoll(name));
    }
    at += 4;
  }
  return newest;
}

TEST_CASE("R-9 a publish target black-holed: the ingest node's packaging and viewers go on") {
  std::string why;
  INFO(why);
  REQUIRE(EnterOwnNetwork(&why));
  const std::string dir = MakeTempDir("blackhole-target");
  Central central = StartCentral(dir + "/db");
  Streamer ingest = StartStreamer(central.grpc, "ingest-1", "ingest");
  Streamer origin = StartStreamer(central.grpc, "origin-1", "origin");
  auto put = Http("PUT", central.http, kApi + "/streams/feed",
                  R"({"placement": {"streamers": ["ingest-1"]}, "inputs": ["publish://"],
                      "publish": [{"to": "origin-1", "pipeline": "main"}]})");
  INFO(put.body);
  REQUIRE(put.status == 201);
  REQUIRE(Eventually(
      [&] {
        const nlohmann::json status = Http("GET", ingest.http, "/status").Json();
        if (!status.contains("streams")) return false;
        for (const auto& s : status["streams"]) {
          if (s["name"] == "feed") return true;
        }
        return false;
      },
      10s));
  auto push = PushFile(SourceTs(60), ingest.publish, "feed");
  REQUIRE(Eventually(
      [&] { return Http("GET", origin.http, "/feed/v1/index.ll.m3u8").status == 200; }, 20s));

  // The origin's publish listener goes silent: the ingest node's PUTs to it stall.
  BlackHole(PortOf(origin.publish));
  const int64_t first = NewestSegment(Http("GET", ingest.http, "/feed/v1/index.ll.m3u8").body);
  REQUIRE(first >= 0);
  // Eight seconds (four 2 s segments) of a viewer reloading every half second at the ingest
  // node: every answer prompt, the live edge moving on as if the target were there.
  int64_t newest = first;
  std::chrono::milliseconds slowest{0};
  const auto until = std::chrono::steady_clock::now() + 8s;
  while (std::chrono::steady_clock::now() < until) {
    const auto asked = std::chrono::steady_clock::now();
    auto r = Http("GET", ingest.http, "/feed/v1/index.ll.m3u8", "", {}, 5s);
    slowest = std::max(slowest, std::chrono::duration_cast<std::chrono::milliseconds>(
                                    std::chrono::steady_clock::now() - asked));
    REQUIRE(r.status == 200);
    newest = std::max(newest, NewestSegment(r.body));
    std::this_thread::sleep_for(500ms);  // a player's reload pace
  }
  INFO("segments " << first << " → " << newest << ", slowest playlist " << slowest.count()
                   << " ms");
  CHECK(newest - first >= 3);
  CHECK(slowest < 1s);
  // The target shows the stall where an operator looks.
  auto targets = Http("GET", ingest.http, "/status").Json()["publish_targets"];
  INFO(targets.dump());
  CHECK(targets.dump().find("origin-1") != std::string::npos);
}

}  // namespace
}  // namespace meshwork::testing
