// C-9: a stream placed by {"count", "zone"} gets the nodes with the most unused network budget,
// and a node offline for replace_after_s is replaced (by the leader only).
#include "central/cluster/placer.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "common/status/status_map.h"
#include "nlohmann/json.hpp"
#include "tests/unit/json_literal.h"
#include "tests/unit/temp_dir.h"

namespace meshwork::central {
namespace {

using nlohmann::json;
using testing::J;
using Names = std::vector<std::string>;

struct PlacerFixture {
  TempDir dir;
  FakeClock clock;
  std::unique_ptr<Store> store;
  std::unique_ptr<ConfigService> service;
  NodeStates nodes;  // what the registry would say
  bool leader = true;
  std::unique_ptr<Placer> placer;

  PlacerFixture() {
    auto opened = OpenRocksDbStore(dir.path());
    REQUIRE(opened.ok());
    store = std::move(*opened);
    auto loaded = ConfigService::Load(store.get());
    REQUIRE(loaded.ok());
    service = std::move(*loaded);
    placer = std::make_unique<Placer>(
        service.get(), [this] { return nodes; }, clock, nullptr);
    placer->set_leader_check([this] { return leader; });
    service->SetStreamFiller(
        [this](const ClusterConfig& c, const std::string& n, json& s) { placer->Fill(c, n, s); });
    REQUIRE(service->PutObject(ObjectKind::kZone, "z1", J(R"({"routes": ["10.1.0.0/16"]})")).ok());
    REQUIRE(service->PutObject(ObjectKind::kZone, "z2", J(R"({"routes": ["10.2.0.0/16"]})")).ok());
  }
  ~PlacerFixture() {
    service->SetStreamFiller(nullptr);
    placer.reset();
  }
  void Node(const std::string& id, const std::string& role, const std::string& zone,
            json budget_kbit) {
    json body = {{"hostname", id + ".example.net"},
                 {"role", role},
                 {"zone", zone},
                 {"cdn", {{"network_bandwidth_kbit", budget_kbit}}}};
    REQUIRE(service->PutStreamer(id, body).ok());
    nodes[id].online = true;
  }
  Names Placed(const std::string& stream) {
    auto config = service->Current();
    Names out;
    for (const auto& id : config->streams.at(stream).object["placement"]["streamers"]) {
      out.push_back(id.get<std::string>());
    }
    return out;
  }
};

TEST_CASE("C-9 a count placement takes the nodes of its zone with the most unused budget") {
  PlacerFixture f;
  f.Node("a", "ingest", "z1", 100'000);
  f.Node("b", "ingest", "z1", 50'000);
  f.Node("c", "origin", "z1", 200'000);
  f.Node("d", "edge", "z1", nullptr);    // edges are never placed by count
  f.Node("e", "ingest", "z2", nullptr);  // another zone
  auto put = f.service->PutObject(
      ObjectKind::kStream, "s1",
      J(R"({"placement": {"count": 2, "zone": "z1", "bitrate_kbit": 60000}})"));
  REQUIRE(put.ok());
  // The PUT answers with the nodes already chosen: c (200 000 unused), then a (100 000); b's
  // 50 000 cannot take a 60 000 kbit/s stream.
  CHECK(put->object["placement"] == J(R"({"count": 2, "zone": "z1", "replace_after_s": 60,
                                          "bitrate_kbit": 60000, "streamers": ["c", "a"]})"));
  // The second stream sees what the first uses: c has 140 000 left, a 40 000 and b 50 000 (both
  // short of 60 000), so it gets one node of the two it asks for.
  REQUIRE(f.service
              ->PutObject(ObjectKind::kStream, "s2",
                          J(R"({"placement": {"count": 2, "zone": "z1", "bitrate_kbit": 60000}})"))
              .ok());
  CHECK(f.Placed("s2") == Names{"c"});
  // A node that comes online later fills the placement on the leader's next round.
  f.Node("f", "ingest", "z1", 500'000);
  CHECK(f.placer->Tick() == Names{"s2"});
  CHECK(f.Placed("s2") == Names{"c", "f"});
  CHECK(f.placer->Tick().empty());  // nothing left to change
  // Any zone when the zone is null: the unlimited node of z2 comes first.
  REQUIRE(
      f.service->PutObject(ObjectKind::kStream, "s3", J(R"({"placement": {"count": 1}})")).ok());
  CHECK(f.Placed("s3") == Names{"e"});
}

TEST_CASE("C-9 the need counts the reported bitrate once per output, over the declared one") {
  PlacerFixture f;
  json stream = J(R"({"placement": {"count": 1, "bitrate_kbit": 1000, "streamers": ["a"]},
                      "publish": [{"to": "http://o1/x", "pipeline": "p1"},
                                  {"to": "http://o2/x", "pipeline": "p1"}]})");
  NodeStates nodes;
  CHECK(PlacementNeedKbit("s", stream, nodes) == 3000);  // declared × (1 + 2 targets)
  auto& state = nodes["a"];
  state.has_report = true;
  auto* reported = state.report.add_streams();
  reported->set_name("s");
  reported->add_renditions()->set_bitrate_kbit(2500);
  reported->add_renditions()->set_bitrate_kbit(1500);
  CHECK(PlacementNeedKbit("s", stream, nodes) == 12000);  // (2 500 + 1 500) × 3
}

TEST_CASE(
    "C-9 R-3 only the stream's own nodes speak for its bitrate, and no report past 100 "
    "Gbit/s") {
  json stream = J(R"({"placement": {"count": 1, "bitrate_kbit": 1000, "streamers": ["a"]}})");
  NodeStates nodes;
  auto report = [&](const std::string& node, std::vector<uint64_t> kbits) {
    auto& state = nodes[node];
    state.has_report = true;
    auto* reported = state.report.add_streams();
    reported->set_name("s");
    for (uint64_t k : kbits) reported->add_renditions()->set_bitrate_kbit(k);
  };
  // A node the stream is not placed on (a made-up id, say) reports an absurd figure: ignored.
  report("ghost", {uint64_t{1} << 62, uint64_t{1} << 62});
  CHECK(PlacementNeedKbit("s", stream, nodes) == 1000);  // the declared figure
  // Its own node's absurd renditions add up to at most 100 Gbit/s, with no overflow.
  report("a", {uint64_t{1} << 62, ~uint64_t{0}, 5});
  CHECK(PlacementNeedKbit("s", stream, nodes) == kMaxStreamKbit);
}

TEST_CASE(
    "C-9 a node offline for replace_after_s is replaced, not before, and only by the leader") {
  PlacerFixture f;
  f.Node("a", "ingest", "z1", 300'000);
  f.Node("b", "ingest", "z1", 200'000);
  f.Node("c", "ingest", "z1", 100'000);
  REQUIRE(f.service
              ->PutObject(ObjectKind::kStream, "s1",
                          J(R"({"placement": {"count": 2, "zone": "z1", "replace_after_s": 5}})"))
              .ok());
  REQUIRE(f.Placed("s1") == Names{"a", "b"});

  f.nodes["a"].online = false;
  CHECK(f.placer->Tick().empty());  // first seen offline now
  f.clock.Advance(std::chrono::milliseconds(4'999));
  CHECK(f.placer->Tick().empty());
  // Another write of the stream meanwhile keeps the offline node too.
  REQUIRE(f.service->PatchObject(ObjectKind::kStream, "s1", J(R"({"live_window": 6})")).ok());
  CHECK(f.Placed("s1") == Names{"a", "b"});

  f.clock.Advance(std::chrono::milliseconds(1));
  f.leader = false;
  CHECK(f.placer->Tick().empty());  // a follower never writes
  f.leader = true;
  CHECK(f.placer->Tick() == Names{"s1"});
  CHECK(f.Placed("s1") == Names{"b", "c"});
  // Lowering the count drops an offline node before an online one.
  f.nodes["b"].online = false;
  REQUIRE(
      f.service->PatchObject(ObjectKind::kStream, "s1", J(R"({"placement": {"count": 1}})")).ok());
  CHECK(f.Placed("s1") == Names{"c"});
  f.nodes["b"].online = true;

  // Back online, a is not put back: c holds the place.
  f.nodes["a"].online = true;
  CHECK(f.placer->Tick().empty());
  CHECK(f.Placed("s1") == Names{"c"});
}

TEST_CASE("C-9 a node the central never saw is offline from the central's start, not before") {
  PlacerFixture f;
  f.Node("a", "ingest", "z1", nullptr);
  f.Node("b", "ingest", "z1", nullptr);
  REQUIRE(
      f.service
          ->PutObject(ObjectKind::kStream, "s1", J(R"({"placement": {"count": 1, "streamers": ["a"],
                                                   "replace_after_s": 10}})"))
          .ok());
  CHECK(f.Placed("s1") == Names{"a"});  // a listed node is kept while it qualifies
  f.nodes.erase("a");                   // as after a restart of central: a never reported
  f.clock.Advance(std::chrono::seconds(9));
  CHECK(f.placer->Tick().empty());
  f.clock.Advance(std::chrono::seconds(1));
  CHECK(f.placer->Tick() == Names{"s1"});
  CHECK(f.Placed("s1") == Names{"b"});
}

TEST_CASE("C-9 invalid placements are rejected naming the field, nothing written") {
  PlacerFixture f;
  auto error = [&](const char* placement) {
    auto r = f.service->PutObject(ObjectKind::kStream, "s1",
                                  J(std::string(R"({"placement": )") + placement + "}"));
    if (r.ok()) return std::string("ok");
    CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
    return FieldOf(r.status());
  };
  CHECK(error(R"({"count": 0})") == "placement.count");
  CHECK(error(R"({"count": 65})") == "placement.count");
  CHECK(error(R"({"count": "2"})") == "placement.count");
  CHECK(error(R"({"count": 1, "zone": "nowhere"})") == "placement.zone");
  CHECK(error(R"({"count": 1, "zone": "Bad Zone"})") == "placement.zone");
  CHECK(error(R"({"count": 1, "replace_after_s": 0})") == "placement.replace_after_s");
  CHECK(error(R"({"count": 1, "replace_after_s": 86401})") == "placement.replace_after_s");
  CHECK(error(R"({"count": 1, "bitrate_kbit": -1})") == "placement.bitrate_kbit");
  CHECK(error(R"({"zone": "z1"})") == "placement.zone");  // only with a count
  CHECK(error(R"({"count": 1, "nodes": 2})") == "placement.nodes");
  CHECK(f.service->Current()->streams.empty());

  // Ending a count placement by PATCH ends its companions and keeps the list as explicit.
  REQUIRE(
      f.service->PutStreamer("a", J(R"({"hostname": "a.example.net", "role": "ingest"})")).ok());
  f.nodes["a"].online = true;
  REQUIRE(
      f.service->PutObject(ObjectKind::kStream, "s1", J(R"({"placement": {"count": 1}})")).ok());
  auto patched =
      f.service->PatchObject(ObjectKind::kStream, "s1", J(R"({"placement": {"count": null}})"));
  REQUIRE(patched.ok());
  CHECK((*patched)["placement"] == J(R"({"streamers": ["a"]})"));
}

}  // namespace
}  // namespace meshwork::central
