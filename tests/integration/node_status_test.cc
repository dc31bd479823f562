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

TEST_CASE("S-18 S-17 play sessions are counted under the protocol the viewer's own route names") {
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
  // segment (LL-HLS and DASH share it): an LL-HLS player has a session from its playlist
  // before it asks for one, so a CMAF object without a session is a DASH player's (one moved
  // here by a BaseURL fetches segments only, S-17), counted as a DASH viewer.
  REQUIRE(Http("GET", ingest.http, "/demo/index.m3u8", "", as("hls-player")).status == 200);
  REQUIRE(Http("GET", ingest.http, "/demo/index.ll.m3u8", "", as("ll-player")).status == 200);
  REQUIRE(Http("GET", ingest.http, "/demo/v1/init.mp4", "", as("ll-player")).status == 200);
  REQUIRE(Http("GET", ingest.http, "/demo/v1/init.mp4", "", as("init-only")).status == 200);
  nlohmann::json demo = StreamStatus(ingest, "demo");
  INFO(demo.dump());
  REQUIRE(demo.is_object());
  CHECK(demo["viewers"] == nlohmann::json({{"dash", 2}, {"hls", 1}, {"ll-hls", 1}}));
  CHECK(demo["play_sessions"] == 4);
  // A viewer that moves to another protocol is counted once, under the new one; the LL-HLS
  // viewer's init segment left it an LL-HLS viewer.
  REQUIRE(Http("GET", ingest.http, "/demo/index.mpd", "", as("hls-player")).status == 200);
  demo = StreamStatus(ingest, "demo");
  CHECK(demo["viewers"] == nlohmann::json({{"dash", 3}, {"ll-hls", 1}}));
}

TEST_CASE(
    "L-16 D-7 over HTTP: past the node's alert threshold archive reads get 503 "
    "max-age=5 Retry-After 5 while live reads are served, playlists shed as live reads") {
  const std::string dir = MakeTempDir("shedding");
  Central central = StartCentral(dir + "/db");
  Streamer ingest = StartIngestWithStream(central, "ingest-1", "demo");
  auto push = PushFile(SourceTs(40), ingest.publish, "demo");
  REQUIRE(
      Eventually([&] { return Http("GET", ingest.http, "/demo/index.m3u8").status == 200; }, 30s));
  const std::string archive = "/demo/index-1796205600-60.m3u8";
  // No threshold from central: the flag's 90 % host CPU, above this test's load (other tests
  // running beside it may pass it for a moment).
  CHECK(Eventually([&] { return Http("GET", ingest.http, archive).status != 503; }, 20s));
  // The operator lowers the node's CPU alert threshold to 1 %: archive reads go first.
  auto patch = Http("PATCH", central.http, kApi + "/streamers/ingest-1",
                    R"({"alert_thresholds": {"cpu_percent_error": 1}})");
  INFO(patch.body);
  REQUIRE(patch.status == 200);
  HttpResult shed;
  REQUIRE(Eventually(
      [&] {
        shed = Http("GET", ingest.http, archive);
        return shed.status == 503;
      },
      15s));
  CHECK(shed.headers["Cache-Control"] == "max-age=5");
  CHECK(shed.headers["Retry-After"] == "5");
  CHECK(shed.body.find("shedding archive reads") != std::string::npos);
  // Live reads meanwhile: the playlist and its newest segment.
  auto playlist = Http("GET", ingest.http, "/demo/v1/index.m3u8");
  REQUIRE(playlist.status == 200);
  auto last = playlist.body.rfind(".ts");
  REQUIRE(last != std::string::npos);
  auto line = playlist.body.rfind('\n', last);
  CHECK(Http("GET", ingest.http, "/demo/v1/" + playlist.body.substr(line + 1, last + 3 - line - 1))
            .status == 200);
  // Threshold lifted: archive reads are answered again.
  REQUIRE(Http("PATCH", central.http, kApi + "/streamers/ingest-1",
               R"({"alert_thresholds": {"cpu_percent_error": null}})")
              .status == 200);
  CHECK(Eventually([&] { return Http("GET", ingest.http, archive).status != 503; }, 15s));

  // A node told to shed live reads above 1 % CPU sheds its playlists too (class 2).
  Streamer busy =
      StartIngestWithStream(central, "ingest-2", "busy", {"publish://"}, {"--shed-live-cpu=1"});
  auto push_busy = PushFile(SourceTs(40), busy.publish, "busy");
  HttpResult shed_playlist;
  REQUIRE(Eventually(
      [&] {
        shed_playlist = Http("GET", busy.http, "/busy/index.m3u8");
        return shed_playlist.status == 503;
      },
      20s));
  CHECK(shed_playlist.headers["Cache-Control"] == "max-age=5");
  CHECK(shed_playlist.headers["Retry-After"] == "5");
}

}  // namespace
}  // namespace meshwork::testing
