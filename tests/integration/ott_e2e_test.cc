// OTT redundancy with real processes and a real player (O-3, O-3a, O-6, O-7, O-16, P-8):
// three ingest streamers fed the same ffmpeg source form group ch1; hls.js in Chromium plays
// from one node while it is killed, then from another while its source input is paused; a
// new viewer of the paused node is redirected; a backup at its session limit answers 429.
#include <catch2/catch.hpp>
#include <csignal>
#include <future>
#include <regex>

#include "tests/integration/media_harness.h"

namespace meshwork::testing {
namespace {

constexpr char kBrowser[] =
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 "
    "Safari/537.36";

int Variants(const std::string& master) {
  int n = 0;
  for (size_t at = master.find("#EXT-X-STREAM-INF"); at != std::string::npos;
       at = master.find("#EXT-X-STREAM-INF", at + 1)) {
    ++n;
  }
  return n;
}

std::string Host(const std::string& address) { return address; }  // "127.0.0.1:PORT"

TEST_CASE("O-3 O-3a O-6 O-16 P-8 hls.js moves to a backup when its node dies or its input stops") {
  auto dir = MakeTempDir("ott-e2e");
  auto central = StartCentral(dir);
  Streamer a = StartIngestWithStream(central, "node-a", "ch1");
  Streamer b = StartIngestWithStream(central, "node-b", "ch1");
  Streamer c = StartIngestWithStream(central, "node-c", "ch1");
  auto stream = Http("GET", central.http, "/central/api-v4/streams/ch1").Json();
  stream["ott"] = {{"enabled", true}, {"group", "ch1"}};
  auto put = Http("PUT", central.http, "/central/api-v4/streams/ch1", stream.dump());
  INFO(put.body);
  REQUIRE(put.status == 200);
  const std::string& source = SourceTs(120);
  auto push_a = PushFile(source, a.publish, "ch1");
  auto push_b = PushFile(source, b.publish, "ch1");
  auto push_c = PushFile(source, c.publish, "ch1");

  // The group forms: every member eligible, and a browser gets A's variant plus two backups.
  REQUIRE(Eventually(
      [&] {
        auto g = Http("GET", central.http, "/central/api-v4/ott-groups/ch1").Json();
        if (!g.is_object() || !g["members"].is_array() || g["members"].size() != 3) return false;
        for (const auto& m : g["members"]) {
          if (m["eligible"] != true) return false;
        }
        return true;
      },
      40s));
  REQUIRE(Eventually(
      [&] {
        auto m = Http("GET", a.http, "/ch1/index.m3u8", "", {{"User-Agent", kBrowser}});
        return m.status == 200 && Variants(m.body) == 3;
      },
      10s));
  // Players that do not switch get no backups (O-20).
  auto vlc =
      Http("GET", a.http, "/ch1/index.m3u8", "", {{"User-Agent", "VLC/3.0.18 LibVLC/3.0.18"}});
  CHECK(Variants(vlc.body) == 1);

  SECTION("kill -9 of the node under a playing viewer") {
    auto playing = std::async(std::launch::async, [&] {
      return PlayInBrowser("http://" + a.http + "/ch1/index.m3u8", 24, "--ott --timeout-s 80");
    });
    REQUIRE(Eventually(
        [&] {
          auto r = Http("GET", central.http, "/central/api-v4/streamers/node-a").Json();
          return r.is_object() && r["status"]["report"]["play_sessions"].get<int>() >= 1;
        },
        30s));
    // Let the player settle into steady playback on A: the kill mid-playback is under test.
    std::this_thread::sleep_for(6s);
    a.process->Signal(SIGKILL);
    a.process->Wait();
    auto result = playing.get();
    INFO(result.dump());
    CHECK(result["ok"] == true);
    for (const auto& e : result["errors"]) CHECK(e["fatal"] == false);
    auto hosts = result["frag_hosts"];
    REQUIRE(hosts.size() >= 2);
    CHECK(hosts.front() == Host(a.http));
    CHECK(hosts.back() != Host(a.http));
    WARN("P-8 (a) max stall after kill -9 of the serving node: " << result["max_stall_s"] << " s");
  }

  SECTION("the source input of the node stops under a playing viewer") {
    auto playing = std::async(std::launch::async, [&] {
      return PlayInBrowser("http://" + b.http + "/ch1/index.m3u8", 24, "--ott --timeout-s 80");
    });
    REQUIRE(Eventually(
        [&] {
          auto r = Http("GET", central.http, "/central/api-v4/streamers/node-b").Json();
          return r.is_object() && r["status"]["report"]["play_sessions"].get<int>() >= 1;
        },
        30s));
    std::this_thread::sleep_for(6s);  // steady playback on B before its input stops
    push_b->Signal(SIGKILL);
    push_b->Wait();
    auto result = playing.get();
    INFO(result.dump());
    CHECK(result["ok"] == true);
    for (const auto& e : result["errors"]) CHECK(e["fatal"] == false);
    auto hosts = result["frag_hosts"];
    REQUIRE(hosts.size() >= 2);
    CHECK(hosts.back() != Host(b.http));
    WARN("P-8 (b) max stall after the input of the serving node stopped: " << result["max_stall_s"]
                                                                           << " s");

    // O-3: a new viewer of B (not working now) is sent to a working member with a pass.
    auto start = std::chrono::steady_clock::now();
    auto opened = Http("GET", b.http, "/ch1/index.m3u8", "", {{"User-Agent", kBrowser}});
    double redirect_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    REQUIRE(opened.status == 302);
    std::string location = opened.headers["Location"];
    CHECK(location.find("pass=") != std::string::npos);
    CHECK(location.find(b.http) == std::string::npos);
    WARN("P-8 redirect of a new viewer answered in " << redirect_ms << " ms");

    // O-16: a backup at its session limit refuses viewers from other nodes with 429 and keeps
    // serving its own.
    std::smatch m;
    REQUIRE(
        std::regex_search(location, m, std::regex("^http://([^/]+)/ch1/index.m3u8\\?pass=(.+)$")));
    std::string target = m[1];
    std::string target_id = target == a.http ? "node-a" : target == c.http ? "node-c" : "node-b";
    REQUIRE(Http("PATCH", central.http, "/central/api-v4/streamers/" + target_id,
                 R"({"backup_session_limit": 0})")
                .status == 200);
    CHECK(Eventually(
        [&] {
          auto r = Http("GET", target, "/ch1/v1/index.m3u8?pass=" + m[2].str(), "",
                        {{"User-Agent", "refused-viewer"}});
          return r.status == 429 && !r.headers["Retry-After"].empty();
        },
        5s));
    CHECK(Http("GET", target, "/ch1/v1/index.m3u8", "", {{"User-Agent", kBrowser}}).status == 200);
    // A forged pass: 403 naming the reason.
    auto forged = Http("GET", target, "/ch1/v1/index.m3u8?pass=AAAA.BBBB");
    CHECK(forged.status == 403);
    CHECK(forged.body.find("pass") != std::string::npos);
  }
}

}  // namespace
}  // namespace meshwork::testing
