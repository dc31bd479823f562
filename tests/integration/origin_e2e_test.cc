// Two real external packagers publishing one stream into an origin (L-1, L-11, L-12): two
// `ffmpeg -f hls -method PUT` processes fed the same source as pipelines a and b; pipeline
// a is killed mid-stream and hls.js in Chromium keeps playing from the origin.
#include <catch2/catch.hpp>
#include <csignal>
#include <future>
#include <regex>

#include "tests/integration/media_harness.h"

namespace meshwork::testing {
namespace {

// One packager: ffmpeg cutting 2 s HLS segments and PUTting each (and its playlist) to the
// origin's publish listener with its pipeline id.
std::unique_ptr<Process> Packager(const std::string& source, const std::string& publish,
                                  const std::string& pipeline, const std::string& log_dir) {
  std::string base = "http://" + publish + "/ch1/v1/";
  std::vector<std::string> argv = {"/usr/bin/ffmpeg",
                                   "-hide_banner",
                                   "-loglevel",
                                   "error",
                                   "-re",
                                   "-i",
                                   source,
                                   "-c",
                                   "copy",
                                   "-f",
                                   "hls",
                                   "-hls_time",
                                   "2",
                                   "-hls_list_size",
                                   "6",
                                   "-start_number",
                                   "0",
                                   "-method",
                                   "PUT",
                                   "-headers",
                                   "X-Pipeline: " + pipeline + "\r\n",
                                   "-hls_segment_filename",
                                   base + "%d.ts",
                                   base + "index.m3u8"};
  return Process::Start(argv, log_dir + "/ffmpeg-" + pipeline + ".log");
}

// The pipelines serving the origin's playlist entries right now: msn → X-Pipeline.
std::map<int64_t, std::string> ServedBy(const Streamer& node) {
  std::map<int64_t, std::string> out;
  auto playlist = Http("GET", node.http, "/ch1/v1/index.m3u8");
  if (playlist.status != 200) return out;
  static const std::regex kEntry("\n(\\d+)\\.ts\\?v=\\d+");
  for (auto it = std::sregex_iterator(playlist.body.begin(), playlist.body.end(), kEntry);
       it != std::sregex_iterator(); ++it) {
    int64_t msn = std::stoll((*it)[1]);
    auto r = Http("GET", node.http, "/ch1/v1/" + std::to_string(msn) + ".ts");
    if (r.status == 200) out[msn] = r.headers["X-Pipeline"];
  }
  return out;
}

TEST_CASE("L-11 L-12 hls.js keeps playing from the origin when one of two packagers dies") {
  auto dir = MakeTempDir("origin-e2e");
  auto central = StartCentral(dir);
  auto node = StartStreamer(central.grpc, "origin-1", "origin");
  nlohmann::json stream = {{"placement", {{"streamers", {"origin-1"}}}},
                           {"segment_ms", 2000},
                           {"live_window", 6},
                           {"pipelines", {"a", "b"}}};
  REQUIRE(Http("PUT", central.http, "/central/api-v4/streams/ch1", stream.dump()).status == 201);
  REQUIRE(Eventually(
      [&] {
        return Http("POST", node.publish, "/ch1/notifications", R"({"id":"up","type":"probe"})")
                   .status == 200;
      },
      10s));
  const std::string& source = SourceTs(60);
  auto a = Packager(source, node.publish, "a", dir);
  auto b = Packager(source, node.publish, "b", dir);
  // Both pipelines deliver; the preferred one (a) is served.
  REQUIRE(Eventually(
      [&] {
        auto served = ServedBy(node);
        return served.size() >= 3 && served.rbegin()->second == "a";
      },
      20s));

  auto playing = std::async(std::launch::async, [&] {
    return PlayInBrowser("http://" + node.http + "/ch1/index.m3u8", 24, "--timeout-s 60");
  });
  // Once hls.js has been playing a few segments, pipeline a dies mid-stream.
  int64_t killed_after = 0;
  REQUIRE(Eventually(
      [&] {
        auto served = ServedBy(node);
        if (served.size() < 5) return false;
        killed_after = served.rbegin()->first;
        return true;
      },
      20s));
  a->Signal(SIGKILL);
  a->Wait();
  // Later segments come from b.
  CHECK(Eventually(
      [&] {
        auto served = ServedBy(node);
        return !served.empty() && served.rbegin()->first > killed_after + 1 &&
               served.rbegin()->second == "b";
      },
      15s));

  auto result = playing.get();
  INFO(result.dump());
  CHECK(result["ok"] == true);
  CHECK(result["played_s"].get<double>() >= 24);
  for (const auto& e : result["errors"]) CHECK(e["fatal"] == false);
  // The longest stall hls.js saw across the switch (printed for the record).
  WARN("max stall across the packager kill: " << result["max_stall_s"].get<double>() << " s");
}

}  // namespace
}  // namespace meshwork::testing
