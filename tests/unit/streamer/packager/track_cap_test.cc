// an input listing many video tracks makes at most kMaxVideoTracks (8) renditions; the
// rest are ignored, so a source cannot multiply a node's segment buffers (and the audio muxed
// into each) by hundreds.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "streamer/packager/stream_manager.h"
#include "streamer/packager/stream_pipeline.h"
#include "streamer/store/origin_store.h"
#include "tests/unit/streamer/stream_configs.h"
#include "tests/unit/temp_dir.h"

namespace meshwork::streamer::track_cap_test {
namespace {

using nlohmann::json;

// `count` video streams of one tiny test picture, 3 s in 1 s GOPs, no audio: MPEG-TS bytes.
std::string ManyVideoTracks(const TempDir& dir, int count) {
  std::string out = (dir.path() / "many.ts").string();
  std::string cmd =
      "ffmpeg -hide_banner -loglevel error -y -f lavfi -i testsrc2=size=64x64:rate=10 -t 3 ";
  for (int i = 0; i < count; ++i) cmd += "-map 0:v ";
  cmd += "-c:v libx264 -preset ultrafast -g 10 -f mpegts " + out;
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::ifstream in(out, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_CASE("R-3 an input with more than 8 video tracks makes 8 renditions and ignores the rest") {
  TempDir dir("meshwork-track-cap");
  const std::string ts = ManyVideoTracks(dir, 12);
  FakeClock clock;
  OriginStore store({}, clock);
  StreamManager manager(&store, clock);
  NodeConfig config;
  config.streams = Configs({{"many", json{{"inputs", {"publish://"}}, {"segment_ms", 1000}}}});
  store.Apply(config.streams);
  manager.Apply(config);
  auto pipeline = manager.Find("many");
  REQUIRE(pipeline);
  auto session = pipeline->BeginPush(false);
  REQUIRE(session.ok());
  CHECK(pipeline->FeedPush(*session,
                           std::span(reinterpret_cast<const uint8_t*>(ts.data()), ts.size())));
  pipeline->EndPush(*session);
  std::set<std::string> names;
  for (const auto& window : store.Windows("many")) names.insert(window->info.name);
  CHECK(names == std::set<std::string>{"v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8"});
}

// 3 s of a tiny picture and a tone, MPEG-TS with the given PIDs for video and audio.
std::string VideoAndAudio(const TempDir& dir, int video_pid, int audio_pid) {
  std::string out = (dir.path() / ("av" + std::to_string(video_pid) + ".ts")).string();
  std::string cmd =
      "ffmpeg -hide_banner -loglevel error -y -f lavfi -i testsrc2=size=64x64:rate=10 -f lavfi "
      "-i sine=sample_rate=48000 -t 3 -map 0:v -map 1:a -c:v libx264 -preset ultrafast -g 10 "
      "-c:a aac -streamid 0:" +
      std::to_string(video_pid) + " -streamid 1:" + std::to_string(audio_pid) + " -f mpegts " + out;
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::ifstream in(out, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_CASE("S-3 a new publisher's tracks on other PIDs map onto the same renditions") {
  TempDir dir("meshwork-new-pids");
  FakeClock clock;
  OriginStore store({}, clock);
  StreamManager manager(&store, clock);
  NodeConfig config;
  config.streams = Configs({{"pids", json{{"inputs", {"publish://"}}, {"segment_ms", 1000}}}});
  store.Apply(config.streams);
  manager.Apply(config);
  auto pipeline = manager.Find("pids");
  REQUIRE(pipeline);
  auto push = [&](const std::string& ts) {
    auto session = pipeline->BeginPush(false);
    REQUIRE(session.ok());
    CHECK(pipeline->FeedPush(*session,
                             std::span(reinterpret_cast<const uint8_t*>(ts.data()), ts.size())));
    pipeline->EndPush(*session);
  };
  push(VideoAndAudio(dir, 0x100, 0x101));
  auto a1 = store.Window("pids", "a1");
  REQUIRE(a1);
  const int64_t a1_before = a1->segments.back()->msn;
  // The next publisher (an encoder set up otherwise) puts both tracks on other PIDs.
  push(VideoAndAudio(dir, 0x200, 0x201));
  std::set<std::string> names;
  for (const auto& window : store.Windows("pids")) names.insert(window->info.name);
  CHECK(names == std::set<std::string>{"v1", "a1"});
  // Its audio is carried: a1 goes on (it was the first publisher's PID's alone before).
  a1 = store.Window("pids", "a1");
  REQUIRE(a1);
  CHECK(a1->segments.back()->msn > a1_before);
}

}  // namespace
}  // namespace meshwork::streamer::track_cap_test
