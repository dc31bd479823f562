// The one stream model: a stream object from central, parsed once into the StreamConfig that
// every streamer module reads (defaults shared with central, each member, anchors, revisions).
#include "streamer/config/stream_config.h"

#include <catch2/catch.hpp>

#include "central/model/object_codecs.h"
#include "streamer/agent/node_config.h"

namespace meshwork::streamer {
namespace {

using nlohmann::json;

constexpr int64_t kWall = 1'795'964'000'000;

TEST_CASE("one stream model: absent members take the defaults central resolves with") {
  auto c = ParseStreamConfig("ch1", json::object());
  CHECK(c->name == "ch1");
  CHECK(c->inputs == std::vector<std::string>{"publish://"});
  CHECK(c->segment_ms == 2000);
  CHECK(c->part_ms == 500);
  CHECK(c->live_window == 6);
  CHECK(c->input_timeout_ms == 3000);
  CHECK(c->cors == "*");
  CHECK_FALSE(c->tmpl.known());
  CHECK(c->tmpl.segment_ms == 2000);
  CHECK(c->tmpl.part_ms == 500);
  CHECK(c->tmpl.retry_deadline_ms == 2000);
  CHECK(c->tmpl.grace_ms == 200);
  CHECK(c->version == 1);
  CHECK(c->pipelines.empty());
  CHECK(c->masks.empty());
  CHECK_FALSE(c->ott.enabled);
  CHECK(c->ott.stale_after_ms == 4000);  // O-3a: two segment durations
  CHECK_FALSE(c->dvr);
  CHECK_FALSE(c->timeline_anchor);
  CHECK_FALSE(c->PublishNeedsToken(""));
  CHECK(c->PublishTokenFor("eu-a").empty());
}

TEST_CASE("one stream model: central's resolved object and the streamer's defaults agree") {
  // Central validates a bare stream and fills every member; parsing that object must give
  // what the streamer assumes for a bare one (one set of defaults, common/stream/defaults.h).
  auto resolved = central::ValidateStream(json::object(), "ch1");
  REQUIRE(resolved.ok());
  auto from_central = ParseStreamConfig("ch1", *resolved);
  auto bare = ParseStreamConfig("ch1", json::object());
  CHECK(*from_central == *bare);
}

TEST_CASE("one stream model: every member of a stream object is read") {
  json object = json::parse(R"({
    "inputs": ["udp://239.0.0.1:5000", "publish://"],
    "segment_ms": 4000, "part_ms": 1000, "live_window": 8, "input_timeout_ms": 1500,
    "cors": "https://player.example.net",
    "template": {"availability_start": 1700000000000, "segment_ms": 4000, "part_ms": 1000,
                 "retry_deadline_ms": 6000, "grace_ms": 300},
    "pipelines": ["eu-a", "us-b"],
    "masks": [{"id": "m1", "pipeline": "us-b", "region": null, "from_msn": 10, "to_msn": 20}],
    "version": 3,
    "range_versions": [{"from_msn": 1, "to_msn": 9, "pipeline": null, "region": "eu",
                        "version": 4}],
    "ott": {"enabled": true, "group": "news", "backup": "not_offered", "stale_after_ms": 9000},
    "dvr": {"root": "/var/lib/meshwork/dvr", "depth_s": 600, "protocols": ["fmp4"],
            "max_bytes": 1048576, "fsync": true, "edges": true},
    "publish_tokens": ["s3cret"],
    "pipeline_tokens": {"eu-a": ["a-token", "a-next"]},
    "publish": [{"to": "origin-1", "pipeline": "eu-a", "from": "ingest-1"},
                {"to": "origin-2", "pipeline": "us-b"}],
    "timeline_anchor": {"t90k": 90000, "wall_ms": 1795964000000}
  })");
  auto c = ParseStreamConfig("news", object);
  CHECK(c->inputs == std::vector<std::string>{"udp://239.0.0.1:5000", "publish://"});
  CHECK(c->segment_ms == 4000);
  CHECK(c->part_ms == 1000);
  CHECK(c->live_window == 8);
  CHECK(c->input_timeout_ms == 1500);
  CHECK(c->cors == "https://player.example.net");
  CHECK(c->tmpl.availability_start_ms == 1'700'000'000'000);
  CHECK(c->tmpl.retry_deadline_ms == 6000);
  CHECK(c->tmpl.grace_ms == 300);
  CHECK(c->pipelines == std::vector<std::string>{"eu-a", "us-b"});
  REQUIRE(c->masks.size() == 1);
  CHECK(c->masks[0] == MsnRange{"us-b", std::nullopt, 10, 20});
  CHECK(c->version == 3);
  REQUIRE(c->range_versions.size() == 1);
  CHECK(c->range_versions[0] == RangeVersion{MsnRange{std::nullopt, "eu", 1, 9}, 4});
  CHECK(c->ott == OttConfig{true, "news", false, 9000});
  REQUIRE(c->dvr);
  CHECK(c->dvr->root == "/var/lib/meshwork/dvr");
  CHECK(c->dvr->depth_s == 600);
  CHECK_FALSE(c->dvr->ts);
  CHECK(c->dvr->fmp4);
  CHECK(c->dvr->max_bytes == 1'048'576);
  CHECK(c->dvr->fsync);
  CHECK(c->dvr->edges);
  CHECK(c->PublishNeedsToken(""));
  CHECK(c->PublishTokenFor("eu-a") == "a-token");
  CHECK(c->PublishTokenFor("us-b") == "s3cret");
  REQUIRE(c->publish.size() == 2);
  CHECK(c->publish[0] == PublishTargetConfig{"origin-1", "eu-a", "ingest-1"});
  CHECK(c->publish[1] == PublishTargetConfig{"origin-2", "us-b", ""});
  CHECK(c->timeline_anchor == TimelineAnchor{90000, kWall});
}

TEST_CASE("one stream model: the template's lengths are the stream's, whichever gives them") {
  auto c = ParseStreamConfig("s", {{"template", {{"segment_ms", 6000}, {"part_ms", 2000}}}});
  CHECK(c->segment_ms == 6000);
  CHECK(c->tmpl.segment_ms == 6000);
  CHECK(c->part_ms == 2000);
  CHECK(c->tmpl.part_ms == 2000);
  CHECK(c->tmpl.retry_deadline_ms == 6000);
  CHECK(c->ott.stale_after_ms == 12'000);
}

TEST_CASE("one stream model: a member of the wrong type takes its default, never throws") {
  auto c = ParseStreamConfig("s", {{"segment_ms", "4000"},
                                   {"inputs", "udp://x"},
                                   {"live_window", 2.5},
                                   {"ott", {{"enabled", "yes"}, {"group", 7}}},
                                   {"dvr", {{"root", "relative/dir"}}},
                                   {"publish_tokens", {1, "t"}},
                                   {"publish", {{{"to", "o"}}}},
                                   {"masks", {"m"}}});
  CHECK(c->segment_ms == 2000);
  CHECK(c->inputs == std::vector<std::string>{"publish://"});
  CHECK(c->live_window == 6);
  CHECK_FALSE(c->ott.enabled);
  CHECK_FALSE(c->dvr);
  CHECK(c->publish_tokens == std::vector<std::string>{"t"});
  CHECK(c->publish.empty());
  REQUIRE(c->masks.size() == 1);
  CHECK(c->masks[0] == MsnRange{});
  CHECK(*ParseStreamConfig("s", json("not an object")) == *ParseStreamConfig("s", json::object()));
}

TEST_CASE("S-5 the streamer reads the stream's anchor from central's stream object") {
  auto anchor =
      ParseStreamConfig(
          "ch1", json{{"timeline_anchor", {{"t90k", 161'636'760'000'000}, {"wall_ms", kWall}}}})
          ->timeline_anchor;
  REQUIRE(anchor);
  CHECK(anchor->t90k == 161'636'760'000'000);
  CHECK(anchor->wall_ms == kWall);
  CHECK_FALSE(ParseStreamConfig("ch1", json::object())->timeline_anchor);
  CHECK_FALSE(ParseStreamConfig("ch1", json{{"timeline_anchor", nullptr}})->timeline_anchor);
}

TEST_CASE("S-5 a malformed or implausible anchor from the network is ignored") {
  for (const json& bad :
       {json("x"), json::array({1, 2}), json{{"t90k", 1}}, json{{"t90k", "1"}, {"wall_ms", kWall}},
        json{{"t90k", 1.5}, {"wall_ms", kWall}}, json{{"t90k", 1}, {"wall_ms", 12}},  // 1970
        json{{"t90k", -1}, {"wall_ms", kWall}},                                       // negative
        json{{"t90k", UINT64_MAX}, {"wall_ms", kWall}},  // wraps negative
        json{{"t90k", 1}, {"wall_ms", INT64_MAX}}}) {    // far future
    INFO(bad.dump());
    CHECK_FALSE(ParseStreamConfig("ch1", json{{"timeline_anchor", bad}})->timeline_anchor);
  }
}

v1::ConfigUpdate StreamsUpdate(uint64_t revision, bool full, const json& ch1) {
  v1::ConfigUpdate update;
  update.set_revision(revision);
  update.set_full(full);
  auto* s = update.mutable_streams()->add_streams();
  s->set_name("ch1");
  s->set_config_json(ch1.dump());
  return update;
}

TEST_CASE("one stream model: parsed once per revision, shared until the stream section changes") {
  NodeConfig empty;
  auto first = ApplyUpdate(empty, StreamsUpdate(1, true, {{"segment_ms", 2000}}));
  REQUIRE(first->streams.count("ch1"));
  const auto ch1 = first->streams.at("ch1");
  // A delta without a streams section (here: node settings) keeps the very same config.
  v1::ConfigUpdate settings_only;
  settings_only.set_revision(2);
  settings_only.mutable_node();
  auto second = ApplyUpdate(*first, settings_only);
  CHECK(second->streams.at("ch1") == ch1);
  // A new revision of the stream: a new value; a mask leaves the packaging as it was, new
  // inputs do not.
  auto masked = ApplyUpdate(
      *second, StreamsUpdate(3, false, {{"segment_ms", 2000}, {"masks", {{{"pipeline", "b"}}}}}));
  CHECK(masked->streams.at("ch1") != ch1);
  CHECK(masked->streams.at("ch1")->masks.size() == 1);
  CHECK(ch1->masks.empty());  // the old value is untouched (immutable, shared)
  CHECK(masked->streams.at("ch1")->SamePackaging(*ch1));
  auto moved = ApplyUpdate(
      *masked, StreamsUpdate(4, false, {{"segment_ms", 2000}, {"inputs", {"udp://x:1"}}}));
  CHECK_FALSE(moved->streams.at("ch1")->SamePackaging(*ch1));
}

}  // namespace
}  // namespace meshwork::streamer
