// Publish listener paths and headers (L-1, L-10, R-3).
#include "streamer/delivery/publish_request.h"

#include <catch2/catch.hpp>

#include "common/status/status_map.h"

namespace meshwork::streamer {
namespace {

TEST_CASE("L-1 publish paths name objects, manifests, notifications and push") {
  auto t = ParsePublishPath("/live/ch1/v1/42.ts");
  REQUIRE(t.ok());
  CHECK(t->kind == PublishTarget::kObject);
  CHECK(t->stream == "live/ch1");
  CHECK(t->rendition == "v1");
  CHECK((t->key == ObjectKey{ObjectKey::kTs, 42, -1}));
  t = ParsePublishPath("/ch/v2/init.mp4");
  REQUIRE(t.ok());
  CHECK(t->key.kind == ObjectKey::kInit);
  t = ParsePublishPath("/ch/v2/7.m4s");
  REQUIRE(t.ok());
  CHECK((t->key == ObjectKey{ObjectKey::kM4s, 7, -1}));
  t = ParsePublishPath("/ch/v2/7.3.m4s");
  REQUIRE(t.ok());
  CHECK((t->key == ObjectKey{ObjectKey::kPart, 7, 3}));
  t = ParsePublishPath("/ch/v2/index.m3u8");
  REQUIRE(t.ok());
  CHECK(t->kind == PublishTarget::kManifest);
  t = ParsePublishPath("/a/b/notifications");
  REQUIRE(t.ok());
  CHECK(t->kind == PublishTarget::kNotifications);
  CHECK(t->stream == "a/b");
  t = ParsePublishPath("/a/publish");
  REQUIRE(t.ok());
  CHECK(t->kind == PublishTarget::kPush);
}

TEST_CASE("R-3 bad publish paths are refused naming the path") {
  for (const char* bad : {"", "nope", "/", "/ch", "/ch/v1/../1.ts", "/ch//1.ts", "/ch/v1/x.ts",
                          "/ch/v1/-1.ts", "/ch/v1/1.ts%00", "/ch/v1/1.2.3.m4s", "/ch/v1/1.mp4",
                          "/ch/v1/99999999999999999999.ts", "/ch/v1/1.100001.m4s", "/ch/ä/1.ts"}) {
    INFO(bad);
    auto t = ParsePublishPath(bad);
    REQUIRE_FALSE(t.ok());
    CHECK(t.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(FieldOf(t.status()) == "path");
  }
  CHECK_FALSE(ParsePublishPath("/" + std::string(1100, 'a') + "/v/1.ts").ok());
}

TEST_CASE("L-1 X-Pipeline is required, X-Region and X-Defects are checked") {
  auto h = ParsePublishHeaders("eu-a", "eu.west_1", "short, missing-frames,timestamp-gap");
  REQUIRE(h.ok());
  CHECK(h->pipeline == "eu-a");
  CHECK(h->region == "eu.west_1");
  CHECK(h->defects == (kDefectShort | kDefectMissingFrames | kDefectTimestampGap));
  CHECK(ParsePublishHeaders("a", std::nullopt, std::nullopt)->defects == 0);
  CHECK(ParsePublishHeaders("a", std::nullopt, "")->defects == 0);
  struct Bad {
    std::optional<std::string_view> pipeline, region, defects;
    const char* field;
  };
  for (const auto& b : std::vector<Bad>{{std::nullopt, std::nullopt, std::nullopt, "X-Pipeline"},
                                        {"EU", std::nullopt, std::nullopt, "X-Pipeline"},
                                        {"", std::nullopt, std::nullopt, "X-Pipeline"},
                                        {std::string_view("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
                                         std::nullopt, std::nullopt, "X-Pipeline"},
                                        // M-3: the node's own pipelines.
                                        {"local", std::nullopt, std::nullopt, "X-Pipeline"},
                                        {"relay", std::nullopt, std::nullopt, "X-Pipeline"},
                                        {"a", "", std::nullopt, "X-Region"},
                                        {"a", "eu west", std::nullopt, "X-Region"},
                                        {"a", std::nullopt, "short, broken", "X-Defects"}}) {
    auto r = ParsePublishHeaders(b.pipeline, b.region, b.defects);
    REQUIRE_FALSE(r.ok());
    CHECK(FieldOf(r.status()) == b.field);
  }
}

}  // namespace
}  // namespace meshwork::streamer
