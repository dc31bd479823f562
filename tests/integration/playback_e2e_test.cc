// Real players: hls.js in headless Chromium (tests/e2e/play.mjs, from its own origin) plays
// what a streamer packages from an ffmpeg push (S-8, S-22), and keeps playing across a
// source cut (S-7).
#include <catch2/catch.hpp>
#include <thread>

#include "tests/integration/media_harness.h"

namespace meshwork::testing {
namespace {

struct PlayResult {
  bool ok = false;
  nlohmann::json json;
};

PlayResult Play(const std::string& url, int seconds, const std::string& extra = "") {
  PlayResult result;
  result.json = PlayInBrowser(url, seconds, extra);
  result.ok = result.json.is_object() && result.json["exit_code"] == 0 && result.json["ok"] == true;
  return result;
}

TEST_CASE("S-8 S-22 hls.js in Chromium plays the stream for 10 s from another origin") {
  auto dir = MakeTempDir("e2e-hls");
  auto central = StartCentral(dir);
  auto node = StartIngestWithStream(central, "ingest-1", "live/ch1");
  auto push = PushFile(SourceTs(60), node.publish, "live/ch1");
  REQUIRE(Eventually([&] { return HasSegments(node, "live/ch1", 3); }, 20s));
  auto result = Play("http://" + node.http + "/live/ch1/index.m3u8", 10);
  INFO(result.json.dump());
  CHECK(result.ok);
  CHECK(result.json["played_s"].get<double>() >= 10);
  // No player error, except hls.js's own jump to the first buffered frame before playback
  // starts (non-fatal `bufferSeekOverHole` "from 0"), which a loaded machine can make it take.
  for (const auto& e : result.json["errors"]) {
    bool startup_jump = e["fatal"] == false && e["details"] == "bufferSeekOverHole" &&
                        e.value("message", "").find("seeking from 0 ") != std::string::npos;
    if (!startup_jump) FAIL_CHECK("hls.js error: " << e.dump());
  }
  // The node counted the viewer (S-18).
  CHECK(Eventually(
      [&] {
        auto r = Http("GET", central.http, "/central/api-v4/streamers/ingest-1").Json();
        return r["status"]["report"]["play_sessions"].get<int>() >= 1;
      },
      3s));
}

TEST_CASE("S-7 hls.js keeps playing after the source is cut for 5 s") {
  auto dir = MakeTempDir("e2e-cut");
  auto central = StartCentral(dir);
  auto node = StartIngestWithStream(central, "ingest-1", "cut");
  // 12 s of source, a 5 s gap, then a new encoder run (timestamps start over).
  auto first = PushFile(SourceTs(60), node.publish, "cut", {"-t", "12"});
  REQUIRE(Eventually([&] { return HasSegments(node, "cut", 3); }, 20s));
  std::unique_ptr<Process> second;
  std::thread source([&] {
    first->Wait();
    std::this_thread::sleep_for(5s);  // the cut itself is the thing under test
    second = PushFile(SourceTs(60), node.publish, "cut");
  });
  // Long enough to span the end of the first run, the gap and the resumption.
  auto result = Play("http://" + node.http + "/cut/index.m3u8", 22, "--timeout-s 60");
  source.join();
  INFO(result.json.dump());
  CHECK(result.ok);
  for (const auto& e : result.json["errors"]) CHECK(e["fatal"] == false);
}

}  // namespace
}  // namespace meshwork::testing
