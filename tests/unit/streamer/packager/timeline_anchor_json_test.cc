// S-5: the stream's timeline anchor as the streamer reads it from the stream object central
// pushes — malformed or implausible values are ignored, never trusted nor fatal.
#include <catch2/catch.hpp>

#include "streamer/packager/stream_manager.h"
#include "streamer/packager/stream_pipeline.h"

namespace meshwork::streamer {
namespace {

using nlohmann::json;

constexpr int64_t kWall = 1'795'964'000'000;

TEST_CASE("S-5 the streamer reads the stream's anchor from central's stream object") {
  auto anchor = TimelineAnchorFromJson(
      "ch1", json{{"timeline_anchor", {{"t90k", 161'636'760'000'000}, {"wall_ms", kWall}}}});
  REQUIRE(anchor);
  CHECK(anchor->t90k == 161'636'760'000'000);
  CHECK(anchor->wall_ms == kWall);
  CHECK_FALSE(TimelineAnchorFromJson("ch1", json::object()));
  CHECK_FALSE(TimelineAnchorFromJson("ch1", json{{"timeline_anchor", nullptr}}));
}

TEST_CASE("S-5 a malformed or implausible anchor from the network is ignored") {
  for (const json& bad :
       {json("x"), json::array({1, 2}), json{{"t90k", 1}}, json{{"t90k", "1"}, {"wall_ms", kWall}},
        json{{"t90k", 1.5}, {"wall_ms", kWall}}, json{{"t90k", 1}, {"wall_ms", 12}},  // 1970
        json{{"t90k", -1}, {"wall_ms", kWall}},                                       // negative
        json{{"t90k", UINT64_MAX}, {"wall_ms", kWall}},  // wraps negative
        json{{"t90k", 1}, {"wall_ms", INT64_MAX}}}) {    // far future
    INFO(bad.dump());
    CHECK_FALSE(TimelineAnchorFromJson("ch1", json{{"timeline_anchor", bad}}));
  }
}

TEST_CASE("S-5 a later anchor from central reaches the pipeline without restarting it") {
  FakeClock clock;
  OriginStore store({}, clock);
  StreamManager manager(&store, clock);
  NodeConfig config;
  config.streams["ch1"] = json{{"inputs", {"publish://"}}};
  manager.Apply(config);
  auto pipeline = manager.Find("ch1");
  REQUIRE(pipeline);
  CHECK_FALSE(pipeline->timeline_anchor());
  config.streams["ch1"]["timeline_anchor"] = {{"t90k", 1}, {"wall_ms", kWall}};
  manager.Apply(config);
  CHECK(manager.Find("ch1") == pipeline);  // the same pipeline: its timeline goes on
  CHECK(pipeline->timeline_anchor() == TimelineAnchor{1, kWall});
  config.streams["ch1"]["timeline_anchor"] = "garbage";
  manager.Apply(config);
  CHECK(manager.Find("ch1") == pipeline);
  CHECK_FALSE(pipeline->timeline_anchor());
}

}  // namespace
}  // namespace meshwork::streamer
