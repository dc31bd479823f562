// S-5: a new anchor in the stream object central pushes reaches the running pipeline (the
// parsing of anchors is tests/unit/streamer/config/stream_config_test.cc).
#include <catch2/catch.hpp>

#include "streamer/packager/stream_manager.h"
#include "streamer/packager/stream_pipeline.h"
#include "tests/unit/streamer/stream_configs.h"

namespace meshwork::streamer {
namespace {

using nlohmann::json;

constexpr int64_t kAnchorWall = 1'795'964'000'000;

TEST_CASE("S-5 a later anchor from central reaches the pipeline without restarting it") {
  FakeClock clock;
  OriginStore store({}, clock);
  StreamManager manager(&store, clock);
  NodeConfig config;
  json object{{"inputs", {"publish://"}}};
  config.streams = Configs({{"ch1", object}});
  manager.Apply(config);
  auto pipeline = manager.Find("ch1");
  REQUIRE(pipeline);
  CHECK_FALSE(pipeline->timeline_anchor());
  object["timeline_anchor"] = {{"t90k", 1}, {"wall_ms", kAnchorWall}};
  config.streams = Configs({{"ch1", object}});
  manager.Apply(config);
  CHECK(manager.Find("ch1") == pipeline);  // the same pipeline: its timeline goes on
  CHECK(pipeline->timeline_anchor() == TimelineAnchor{1, kAnchorWall});
  object["timeline_anchor"] = "garbage";
  config.streams = Configs({{"ch1", object}});
  manager.Apply(config);
  CHECK(manager.Find("ch1") == pipeline);
  CHECK_FALSE(pipeline->timeline_anchor());
}

}  // namespace
}  // namespace meshwork::streamer
