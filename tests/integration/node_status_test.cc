// M-5: a streamer's /status shows its streams as an operator needs them: inputs (the active
// one, its bitrate and the age of its last frame), renditions, live edge age, viewers by
// protocol, and the node's load.
#include <catch2/catch.hpp>
#include <string>

#include "nlohmann/json.hpp"
#include "tests/integration/harness.h"
#include "tests/integration/media_harness.h"

namespace meshwork::testing {
namespace {

nlohmann::json StreamStatus(const Streamer& node, const std::string& name) {
  auto status = Http("GET", node.http, "/status").Json();
  if (!status.is_object() || !status["streams"].is_array()) return nullptr;
  for (const auto& s : status["streams"]) {
    if (s["name"] == name) return s;
  }
  return nullptr;
}

TEST_CASE("M-5 /status shows each stream's inputs, renditions, live edge and viewers") {
  const std::string dir = MakeTempDir("node-status");
  Central central = StartCentral(dir + "/db");
  Streamer ingest = StartIngestWithStream(central, "ingest-1", "demo");
  auto push = PushFile(SourceTs(40), ingest.publish, "demo");
  nlohmann::json demo;
  bool shown = Eventually(
      [&] {
        Http("GET", ingest.http, "/demo/index.m3u8");  // a viewer
        demo = StreamStatus(ingest, "demo");
        return demo.is_object() && demo["working"] == true && !demo["renditions"].empty() &&
               demo["inputs"].size() == 1 && demo["inputs"][0]["bitrate_kbit"].get<int>() > 0 &&
               demo["viewers"].contains("hls");
      },
      30s);
  INFO("the stream's /status entry: " << demo.dump() << "\nwhole /status: "
                                      << Http("GET", ingest.http, "/status").body);
  REQUIRE(shown);
  const auto& input = demo["inputs"][0];
  CHECK(input["url"] == "publish://");
  CHECK(input["active"] == true);
  CHECK(demo["active_input"] == "publish://");
  // The test source is about 1 Mbit/s; pushed in real time.
  CHECK(input["bitrate_kbit"].get<int>() > 100);
  CHECK(input["bitrate_kbit"].get<int>() < 20000);
  REQUIRE(input["last_frame_age_s"].is_number());
  CHECK(input["last_frame_age_s"].get<double>() < 5);
  CHECK(demo["live_window_age_s"].get<double>() < 10);
  CHECK(demo["viewers"]["hls"].get<int>() >= 1);
  CHECK(demo["play_sessions"].get<int>() >= 1);
  for (const auto& r : demo["renditions"]) {
    CHECK_FALSE(r["codecs"].get<std::string>().empty());
  }
  auto status = Http("GET", ingest.http, "/status").Json();
  REQUIRE(
      Eventually([&] { return Http("GET", ingest.http, "/status").Json().contains("load"); }, 10s));
  status = Http("GET", ingest.http, "/status").Json();
  CHECK(status["load"]["cpu_percent"].is_number());
  CHECK(status["load"]["out_kbit"].is_number());
}

TEST_CASE("S-18 play sessions are counted under the protocol the viewer's own route names") {
  const std::string dir = MakeTempDir("node-status-protocols");
  Central central = StartCentral(dir + "/db");
  Streamer ingest = StartIngestWithStream(central, "ingest-1", "demo");
  auto push = PushFile(SourceTs(40), ingest.publish, "demo");
  auto as = [](const std::string& agent) {
    return std::vector<std::pair<std::string, std::string>>{{"User-Agent", agent}};
  };
  REQUIRE(Eventually(
      [&] {
        return Http("GET", ingest.http, "/demo/index.mpd", "", as("dash-player")).status == 200;
      },
      30s));
  // One viewer per protocol, told apart by their players; one more that only fetched an init
  // segment (LL-HLS and DASH share it), which names no protocol and makes no session.
  REQUIRE(Http("GET", ingest.http, "/demo/index.m3u8", "", as("hls-player")).status == 200);
  REQUIRE(Http("GET", ingest.http, "/demo/index.ll.m3u8", "", as("ll-player")).status == 200);
  REQUIRE(Http("GET", ingest.http, "/demo/v1/init.mp4", "", as("ll-player")).status == 200);
  REQUIRE(Http("GET", ingest.http, "/demo/v1/init.mp4", "", as("init-only")).status == 200);
  nlohmann::json demo = StreamStatus(ingest, "demo");
  INFO(demo.dump());
  REQUIRE(demo.is_object());
  CHECK(demo["viewers"] == nlohmann::json({{"dash", 1}, {"hls", 1}, {"ll-hls", 1}}));
  CHECK(demo["play_sessions"] == 3);
  // A viewer that moves to another protocol is counted once, under the new one.
  REQUIRE(Http("GET", ingest.http, "/demo/index.mpd", "", as("hls-player")).status == 200);
  demo = StreamStatus(ingest, "demo");
  CHECK(demo["viewers"] == nlohmann::json({{"dash", 2}, {"ll-hls", 1}}));
}

}  // namespace
}  // namespace meshwork::testing
