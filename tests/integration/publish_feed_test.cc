// S-23 publish feeds with real processes: ingest nodes that publish what they package to a
// Meshwork origin (seed 001's two-ingest set-up, a failover by kill -9), and an ingest node
// whose origin is down.
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <regex>
#include <string>

#include "tests/integration/media_harness.h"

namespace meshwork::testing {
namespace publish_feed_test {

// The X-Pipeline of the newest segment the origin lists for `stream` (v1, MPEG-TS form), and
// its msn; {"", -1} when none.
std::pair<std::string, int64_t> NewestPipeline(const Streamer& origin, const std::string& stream) {
  auto list = Http("GET", origin.http, "/" + stream + "/v1/index.m3u8");
  if (list.status != 200) return {"", -1};
  std::smatch m;
  std::string body = list.body;
  int64_t msn = -1;
  static const std::regex kTs("\n(\\d+)\\.ts");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), kTs); it != std::sregex_iterator();
       ++it) {
    msn = std::stoll((*it)[1]);
  }
  if (msn < 0) return {"", -1};
  auto segment = Http("GET", origin.http, "/" + stream + "/v1/" + std::to_string(msn) + ".ts");
  return {segment.headers["X-Pipeline"], msn};
}

TEST_CASE(
    "S-23 seed 001 with Meshwork nodes: two ingest nodes publish as eu-a and us-b to an "
    "origin, and kill -9 of the preferred one moves the origin to us-b") {
  auto dir = MakeTempDir("feed");
  auto central = StartCentral(dir);
  auto eu = StartIngestWithStream(central, "ingest-eu", "ch1");
  auto us = StartIngestWithStream(central, "ingest-us", "ch1");
  // The publish feeds reach the origin only at its internal address (its public name does
  // not resolve).
  auto origin =
      StartStreamer(central.grpc, "origin-1", "origin",
                    {"--hostname", "origin-1.public.invalid", "--internal_address", "127.0.0.1"});
  auto stream = Http("GET", central.http, "/central/api-v4/streams/ch1").Json();
  stream["pipelines"] = {"eu-a", "us-b"};
  stream["publish"] = {{{"to", "origin-1"}, {"pipeline", "eu-a"}, {"from", "ingest-eu"}},
                       {{"to", "origin-1"}, {"pipeline", "us-b"}, {"from", "ingest-us"}}};
  stream.erase("timeline_anchor");
  auto put = Http("PUT", central.http, "/central/api-v4/streams/ch1", stream.dump());
  INFO(put.body);
  REQUIRE(put.status == 200);
  // A bad target names its field and changes nothing.
  auto bad = stream;
  bad["publish"][0]["pipeline"] = "EU A";
  auto refused = Http("PUT", central.http, "/central/api-v4/streams/ch1", bad.dump());
  CHECK(refused.status == 400);
  CHECK(refused.body.find("publish[0].pipeline") != std::string::npos);

  // The same source into both (S-5: the same msns on both).
  auto push_eu = PushFile(SourceTs(60), eu.publish, "ch1");
  auto push_us = PushFile(SourceTs(60), us.publish, "ch1");
  REQUIRE(Eventually([&] { return NewestPipeline(origin, "ch1").first == "eu-a"; }, 20s));
  // Both pipelines' objects are at the origin; it serves the preferred one.
  auto [pipeline, msn] = NewestPipeline(origin, "ch1");
  CHECK(pipeline == "eu-a");
  // S-25: the feed carries the CMAF form only and the origin made this TS from it (FeedTs):
  // h264 + aac, a keyframe first, the same first PTS and duration as the ingest's own TS of
  // that msn, and the same EXTINF and PDT in both playlists.
  CHECK(MetricAt(origin.http, "meshwork_origin_ts_made_total", "result=\"ok\"") >= 1);
  {
    const std::string name = "/ch1/v1/" + std::to_string(msn) + ".ts";
    const std::string ts_dir = MakeTempDir("feed-ts");
    auto made = ProbeTs(ts_dir + "/origin.ts", Http("GET", origin.http, name).body);
    auto packaged = ProbeTs(ts_dir + "/ingest.ts", Http("GET", eu.http, name).body);
    INFO("origin: " << made.probe.dump() << "\ningest: " << packaged.probe.dump());
    CHECK(made.codecs == "h264,aac");
    CHECK(made.KeyFirst());
    CHECK(made.errors.empty());
    CHECK(std::abs(made.VideoStart() - packaged.VideoStart()) < 0.0001);
    CHECK(std::abs(made.Duration() - packaged.Duration()) < 0.05);
    CHECK(EntryOf(Http("GET", origin.http, "/ch1/v1/index.m3u8").body, std::to_string(msn)) ==
          EntryOf(Http("GET", eu.http, "/ch1/v1/index.m3u8").body, std::to_string(msn)));
  }
  auto status = Http("GET", eu.http, "/status").Json();
  INFO(status.dump());
  REQUIRE(status["publish_targets"].size() == 1);
  CHECK(status["publish_targets"][0]["to"] == "origin-1");
  CHECK(status["publish_targets"][0]["pipeline"] == "eu-a");
  CHECK(status["publish_targets"][0]["sent"].get<int>() > 0);
  // M-5: the same target is listed under the stream it carries.
  bool listed = false;
  for (const auto& s : status["streams"]) {
    if (s["name"] != "ch1") continue;
    listed = s["publish_targets"].size() == 1 && s["publish_targets"][0]["to"] == "origin-1" &&
             s["publish_targets"][0].contains("queued_bytes") && s["relay_upstream"].is_null();
  }
  CHECK(listed);

  // kill -9 of the preferred ingest node: later objects come from us-b.
  eu.process->Signal(SIGKILL);
  auto killed_at = std::chrono::steady_clock::now();
  std::chrono::milliseconds moved{0};
  REQUIRE(Eventually(
      [&] {
        auto [p, m] = NewestPipeline(origin, "ch1");
        return p == "us-b" && m > msn;
      },
      20s, &moved));
  std::printf("S-23 origin serves us-b %.1f s after kill -9 of the eu-a ingest node\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count());
  // The origin's playlist keeps going without a hole.
  auto list = Http("GET", origin.http, "/ch1/v1/index.m3u8");
  CHECK(list.status == 200);
  CHECK(list.body.find("#EXT-X-GAP") == std::string::npos);
}

TEST_CASE(
    "S-23 a failing origin target does not slow the ingest node: its viewers keep "
    "getting parts on time, the failures show in /status") {
  auto dir = MakeTempDir("feed-down");
  auto central = StartCentral(dir);
  auto ingest = StartIngestWithStream(central, "ingest-1", "ch1");
  // An origin that registered and then died: its address is known, nothing answers there.
  auto origin = StartStreamer(central.grpc, "origin-1", "origin");
  auto stream = Http("GET", central.http, "/central/api-v4/streams/ch1").Json();
  stream["publish"] = {{{"to", "origin-1"}, {"pipeline", "eu-a"}}};
  stream.erase("timeline_anchor");
  REQUIRE(Http("PUT", central.http, "/central/api-v4/streams/ch1", stream.dump()).status == 200);
  origin.process->Signal(SIGKILL);
  origin.process->Wait();
  auto push = PushFile(SourceTs(60), ingest.publish, "ch1");
  REQUIRE(Eventually(
      [&] { return !SegmentsOf(Http("GET", ingest.http, "/ch1/v1/index.ll.m3u8").body).empty(); },
      20s));
  // Blocking reloads for the next parts come back within a part target or so each, as on
  // a node with no target at all.
  double worst = 0;
  for (int i = 0; i < 8; ++i) {
    std::string hint = Hint(Http("GET", ingest.http, "/ch1/v1/index.ll.m3u8").body);
    REQUIRE(!hint.empty());
    auto dot = hint.find('.');
    std::string msn = hint.substr(0, dot);
    std::string part = hint.substr(dot + 1, hint.find('.', dot + 1) - dot - 1);
    auto start = std::chrono::steady_clock::now();
    auto held =
        Http("GET", ingest.http, "/ch1/v1/index.ll.m3u8?_HLS_msn=" + msn + "&_HLS_part=" + part);
    worst = std::max(
        worst, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    CHECK(held.status == 200);
  }
  std::printf("S-23 with its origin down, the ingest's slowest blocking reload: %.2f s\n", worst);
  CHECK(worst < 1.5);  // a part target is 0.5 s; the hold ends at the part's publish
  auto status = Http("GET", ingest.http, "/status").Json();
  INFO(status.dump());
  REQUIRE(status["publish_targets"].size() == 1);
  CHECK(status["publish_targets"][0]["sent"] == 0);
  CHECK(status["publish_targets"][0]["failed_attempts"].get<int>() > 0);
}

}  // namespace publish_feed_test
}  // namespace meshwork::testing
