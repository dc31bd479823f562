// S-5: central keeps each stream's timeline anchor (the first proposal, or a newer timeline),
// durably, read-only through the REST API, and pushes it with the stream to every node.
#include "central/cluster/anchor_keeper.h"

#include <catch2/catch.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "central/cluster/config_push.h"
#include "central/model/stream_anchor.h"
#include "central/store/store.h"
#include "nlohmann/json.hpp"
#include "tests/unit/temp_dir.h"

namespace meshwork::central {
namespace {

using nlohmann::json;

constexpr TimelineAnchor kFirst{153'000'000'000'000, 1'700'000'000'000};

struct AnchorFixture {
  TempDir dir;
  FakeClock clock;
  std::unique_ptr<Store> store;
  std::unique_ptr<ConfigService> service;
  std::vector<std::function<void()>> posted;  // the blocking pool, run by hand
  std::unique_ptr<AnchorKeeper> keeper;

  AnchorFixture() {
    Reopen();
    json stream = {{"placement", {{"streamers", {"ingest-a", "ingest-b"}}}}};
    REQUIRE(service->PutObject(ObjectKind::kStream, "ch1", stream).ok());
  }
  void Reopen() {
    keeper.reset();
    service.reset();
    store.reset();
    auto opened = OpenRocksDbStore(dir.path());
    REQUIRE(opened.ok());
    store = std::move(*opened);
    auto loaded = ConfigService::Load(store.get());
    REQUIRE(loaded.ok());
    service = std::move(*loaded);
    keeper = std::make_unique<AnchorKeeper>(
        service.get(), [this](std::function<void()> task) { posted.push_back(std::move(task)); },
        clock);
  }
  ~AnchorFixture() {
    keeper.reset();
    service.reset();
    store.reset();
  }
  void Report(const std::string& node, const std::string& stream, TimelineAnchor anchor) {
    v1::LoadReport report;
    auto* s = report.add_streams();
    s->set_name(stream);
    s->mutable_timeline_anchor()->set_t90k(anchor.t90k);
    s->mutable_timeline_anchor()->set_wall_unix_ms(anchor.wall_ms);
    keeper->OnReport(node, report);
  }
  void RunPosted() {
    auto tasks = std::move(posted);
    posted.clear();
    for (auto& t : tasks) t();
  }
  std::optional<TimelineAnchor> Kept(const std::string& stream = "ch1") {
    return StreamTimelineAnchor(service->Current()->streams.at(stream).object);
  }
};

std::optional<TimelineAnchor> Pushed(const ClusterConfig& config, const std::string& node,
                                     uint64_t since) {
  auto update = BuildConfigUpdate(config, node, since);
  if (!update.has_streams()) return std::nullopt;
  for (const auto& s : update.streams().streams()) {
    if (s.name() == "ch1") return StreamTimelineAnchor(json::parse(s.config_json()));
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("S-5 central keeps the first anchor of a stream and pushes it to every node") {
  AnchorFixture f;
  uint64_t before = f.service->Current()->revision;
  CHECK_FALSE(f.Kept());
  f.Report("ingest-a", "ch1", kFirst);
  f.Report("ingest-a", "ch1", kFirst);  // the next report, before the write ran: one write
  REQUIRE(f.posted.size() == 1);
  f.RunPosted();
  CHECK(f.Kept() == kFirst);
  auto config = f.service->Current();
  CHECK(config->revision == before + 1);
  // Every node of the stream gets it with the stream section (a delta since `before`).
  CHECK(Pushed(*config, "ingest-a", before) == kFirst);
  CHECK(Pushed(*config, "ingest-b", before) == kFirst);
  CHECK(Pushed(*config, "ingest-b", 0) == kFirst);

  // B proposed its own a little later (same timeline, 400 ms apart): the first is kept.
  f.Report("ingest-b", "ch1", {kFirst.t90k + 90 * 7000, kFirst.wall_ms + 7400});
  CHECK(f.posted.empty());
  // A's own echo changes nothing either.
  f.Report("ingest-a", "ch1", kFirst);
  CHECK(f.posted.empty());
  CHECK(f.service->Current()->revision == before + 1);

  SECTION("a central restart keeps it") {
    f.Reopen();
    CHECK(f.Kept() == kFirst);
  }
  SECTION("a user's PUT or PATCH of the stream does not wipe or forge it") {
    json body = f.service->Current()->streams.at("ch1").object;
    body["live_window"] = 8;
    body["timeline_anchor"] = nullptr;
    REQUIRE(f.service->PutObject(ObjectKind::kStream, "ch1", body).ok());
    CHECK(f.Kept() == kFirst);
    json patch = {{"timeline_anchor", TimelineAnchorJson(TimelineAnchor{1, kFirst.wall_ms})}};
    REQUIRE(f.service->PatchObject(ObjectKind::kStream, "ch1", patch).ok());
    CHECK(f.Kept() == kFirst);
    CHECK(f.service->Current()->streams.at("ch1").object["live_window"] == 8);
  }
  SECTION("a newer timeline replaces it; an older one never flips it back") {
    TimelineAnchor newer{kFirst.t90k + 90 * 60'000, kFirst.wall_ms + 120'000};  // 60 s off
    f.clock.Advance(std::chrono::seconds(2));  // one write a second per stream
    f.Report("ingest-b", "ch1", newer);
    f.RunPosted();
    CHECK(f.Kept() == newer);
    f.Report("ingest-a", "ch1", kFirst);  // A still on the old timeline
    CHECK(f.posted.empty());
    CHECK(f.Kept() == newer);
  }
}

TEST_CASE(
    "S-5 R-3 an anchor a day off central's clock is ignored, and a stream's anchor is "
    "written at most once a second") {
  AnchorFixture f;
  const int64_t day_ms = 24 * 3600 * 1000;
  f.Report("ingest-a", "ch1", {kFirst.t90k, kFirst.wall_ms + day_ms + 1000});  // year 2200 too
  f.Report("ingest-a", "ch1", {kFirst.t90k, kFirst.wall_ms - day_ms - 1000});
  CHECK(f.posted.empty());
  f.Report("ingest-a", "ch1", kFirst);
  REQUIRE(f.posted.size() == 1);
  f.RunPosted();
  // A node proposing a new timeline in every report: one write a second at most.
  for (int i = 1; i <= 10; ++i) {
    f.clock.Advance(std::chrono::milliseconds(100));
    f.Report("ingest-a", "ch1", {kFirst.t90k + 90 * 1000 * i, kFirst.wall_ms + 60'000 * i});
    f.RunPosted();
  }
  // 1 s after the first write: the one at 1.0 s went through, the nine before it did not.
  CHECK(f.Kept() == TimelineAnchor{kFirst.t90k + 90 * 1000 * 10, kFirst.wall_ms + 600'000});
  const uint64_t revision = f.service->Current()->revision;
  f.clock.Advance(std::chrono::milliseconds(100));
  f.Report("ingest-a", "ch1", {kFirst.t90k + 90 * 1000 * 11, kFirst.wall_ms + 660'000});
  CHECK(f.posted.empty());
  CHECK(f.service->Current()->revision == revision);
}

TEST_CASE("S-5 central ignores anchors from nodes the stream is not on, and nonsense") {
  AnchorFixture f;
  f.Report("ingest-c", "ch1", kFirst);                  // not placed there
  f.Report("ingest-a", "nope", kFirst);                 // no such stream
  f.Report("ingest-a", "ch1", {kFirst.t90k, 12});       // 1970
  f.Report("ingest-a", "ch1", {-5, kFirst.wall_ms});    // negative timeline
  f.Report("ingest-a", "ch1", {INT64_MAX, INT64_MAX});  // overflow bait
  v1::LoadReport no_anchor;
  no_anchor.add_streams()->set_name("ch1");
  f.keeper->OnReport("ingest-a", no_anchor);
  CHECK(f.posted.empty());
  CHECK_FALSE(f.Kept());
}

TEST_CASE("S-5 the stream object's timeline_anchor is validated for shape") {
  json out;
  CHECK(ResolveTimelineAnchor(json::object(), out).ok());
  CHECK(out["timeline_anchor"].is_null());
  CHECK(ResolveTimelineAnchor({{"timeline_anchor", TimelineAnchorJson(kFirst)}}, out).ok());
  CHECK(StreamTimelineAnchor(out) == kFirst);
  for (const json& bad :
       {json("x"), json{{"t90k", 1}}, json{{"t90k", 1.5}, {"wall_ms", kFirst.wall_ms}},
        json{{"t90k", 1}, {"wall_ms", 5}},
        json{{"t90k", 1}, {"wall_ms", kFirst.wall_ms}, {"z", 1}}}) {
    INFO(bad.dump());
    CHECK_FALSE(ResolveTimelineAnchor({{"timeline_anchor", bad}}, out).ok());
  }
}

TEST_CASE("S-5 ShouldReplaceAnchor: first wins, same timeline kept, only newer timelines replace") {
  CHECK(ShouldReplaceAnchor(std::nullopt, kFirst));
  CHECK_FALSE(ShouldReplaceAnchor(kFirst, kFirst));
  CHECK_FALSE(ShouldReplaceAnchor(
      kFirst, {kFirst.t90k + 90 * 1000, kFirst.wall_ms + 1000 + kAnchorToleranceMs}));
  CHECK(ShouldReplaceAnchor(kFirst, {kFirst.t90k, kFirst.wall_ms + kAnchorToleranceMs + 1}));
  CHECK_FALSE(ShouldReplaceAnchor(kFirst, {kFirst.t90k, kFirst.wall_ms - kAnchorToleranceMs - 1}));
}

}  // namespace meshwork::central
