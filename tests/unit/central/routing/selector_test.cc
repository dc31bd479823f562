// The routing rules of 01-central-routing.md (Z-5…Z-18, Z-24), table by table, over a hand-built
// configuration and live node state with a fake clock.
#include "central/routing/selector.h"

#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "central/model/object_codecs.h"
#include "central/model/streamer_codec.h"
#include "central/model/streamer_proto.h"
#include "central/routing/routing_service.h"
#include "central/routing/routing_snapshot.h"
#include "common/net/http_url.h"
#include "common/stream/defaults.h"
#include "common/time/clock.h"

namespace meshwork::central {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

class World {
 public:
  // `mode`: how Route() decides (kDecide, or kSelect, which must choose the same nodes and
  // list no zones).
  explicit World(RouteMode mode = RouteMode::kDecide) : selector_(clock_, 3s), mode_(mode) {}

  World& Zone(const std::string& name, std::vector<std::string> routes,
              std::optional<std::string> fallback = std::nullopt) {
    json body = {{"routes", routes}, {"fallback_zone", fallback ? json(*fallback) : json()}};
    auto zone = ValidateZone(body, name);
    REQUIRE(zone.ok());
    config_.zones[name] = ObjectRecord{*zone, 1};
    return *this;
  }
  World& Node(const std::string& id, const std::string& role,
              std::optional<std::string> zone = std::nullopt, json cdn = json::object()) {
    json body = {{"hostname", id + ".example.net"}, {"role", role}, {"cdn", cdn}};
    if (zone) body["zone"] = *zone;
    auto canonical = ValidateStreamer(body, id);
    REQUIRE(canonical.ok());
    config_.streamers[id] = StreamerRecord{*canonical, StreamerToProto(*canonical), 1};
    return *this;
  }
  World& Stream(const std::string& name, std::vector<std::string> placed = {}) {
    auto s = ValidateStream({{"placement", {{"streamers", placed}}}}, name);
    REQUIRE(s.ok());
    config_.streams[name] = ObjectRecord{*s, 1};
    return *this;
  }
  // The node reports now: session attached, with these metrics and working streams.
  World& Report(const std::string& id, std::optional<uint64_t> sessions = 0,
                std::optional<uint64_t> out_kbit = 0, std::vector<std::string> working = {}) {
    auto& node = Live(id);
    if (!attached_[id]) {
      node->AddSession();
      attached_[id] = true;
    }
    std::sort(working.begin(), working.end());
    node->SetReport(clock_.Monotonic(), sessions, out_kbit, working);
    return *this;
  }
  World& Disconnect(const std::string& id) {
    if (attached_[id]) Live(id)->RemoveSession();
    attached_[id] = false;
    return *this;
  }
  // Rebuilds the snapshot from the configuration so far.
  void Build() {
    snapshot_ = RoutingSnapshot::Build(
        config_,
        [this](const std::string& id) -> std::shared_ptr<const LiveNode> { return Live(id); });
  }
  LiveStreams LiveSet() {
    LiveStreams set;
    for (auto& [id, node] : live_) {
      if (!node->Online(clock_.Monotonic(), 3s)) continue;
      for (const auto& s : *node->working_streams()) set.insert(s);
    }
    return set;
  }
  // The selected node id, or "404"/"503" for the refusals.
  std::string Route(const std::string& stream, const std::string& client) {
    if (!snapshot_) Build();
    std::optional<net::IpAddress> ip;
    if (!client.empty()) ip = net::IpAddress::Parse(client).value();
    auto d = selector_.Route(*snapshot_, LiveSet(), stream, ip, mode_);
    if (d.ok() && mode_ == RouteMode::kSelect) CHECK(d->zones.empty());
    if (!d.ok()) {
      if (d.status().code() == absl::StatusCode::kNotFound) return "404";
      if (d.status().code() == absl::StatusCode::kUnavailable) return "503";
      return "error";
    }
    return snapshot_->nodes()[d->selected].id;
  }
  absl::StatusOr<RouteDecision> List(const std::string& stream, const std::string& client) {
    if (!snapshot_) Build();
    return selector_.Route(*snapshot_, LiveSet(), stream, net::IpAddress::Parse(client).value(),
                           RouteMode::kListAll);
  }
  std::string Vod(const std::vector<json>& placements, const std::string& client) {
    if (!snapshot_) Build();
    json body = json::object();
    body["placements"] = placements;
    auto vod = ValidateVod(body, "asset");
    REQUIRE(vod.ok());
    std::optional<net::IpAddress> ip;
    if (!client.empty()) ip = net::IpAddress::Parse(client).value();
    auto n = selector_.ChooseVod(*snapshot_, *vod, ip);
    return n.ok() ? snapshot_->nodes()[*n].id : "503";
  }
  FakeClock& clock() { return clock_; }
  const RoutingSnapshot& snapshot() {
    if (!snapshot_) Build();
    return *snapshot_;
  }
  ClusterConfig& config() { return config_; }

 private:
  std::shared_ptr<LiveNode>& Live(const std::string& id) {
    auto& p = live_[id];
    if (!p) p = std::make_shared<LiveNode>();
    return p;
  }
  FakeClock clock_;
  Selector selector_;
  RouteMode mode_;
  ClusterConfig config_;
  std::map<std::string, std::shared_ptr<LiveNode>> live_;
  std::map<std::string, bool> attached_;
  std::shared_ptr<const RoutingSnapshot> snapshot_;
};

// Three offices, an origin pool and unrelated nodes; `fallback` is office-2's fallback.
void SeedWorld(World& w, std::optional<std::string> fallback) {
  w.Zone("office-1", {"10.10.0.0/16"})
      .Zone("office-2", {"10.20.0.0/16"}, fallback)
      .Zone("origin-pool", {})
      .Node("edge-o1", "edge", "office-1")
      .Node("edge-o2", "edge", "office-2")
      .Node("origin-1", "origin", "origin-pool")
      .Node("edge-free", "edge")  // unzoned
      .Stream("ch1", {"origin-1"})
      .Report("edge-o1")
      .Report("edge-o2")
      .Report("origin-1", 0, 0, {"ch1"})
      .Report("edge-free");
}

TEST_CASE("Z-8 Z-12 the seed's table: what office-2 viewers get when office-2 is down") {
  struct Row {
    std::optional<std::string> fallback;
    std::string with_office2, office2_down, office1_down_too;
  };
  std::vector<Row> rows = {
      {std::nullopt, "edge-o2", "503", "503"},             // office-2 → none
      {"office-1", "edge-o2", "edge-o1", "503"},           // office-2 → office-1 → none
      {"origin-pool", "edge-o2", "origin-1", "origin-1"},  // office-2 → origin-pool → none
  };
  const RouteMode mode = GENERATE(RouteMode::kDecide, RouteMode::kSelect);  // P-2: the same
  for (const auto& row : rows) {
    INFO("fallback_zone = " << row.fallback.value_or("none"));
    World w(mode);
    SeedWorld(w, row.fallback);
    CHECK(w.Route("ch1", "10.20.3.4") == row.with_office2);
    w.Disconnect("edge-o2");
    CHECK(w.Route("ch1", "10.20.3.4") == row.office2_down);
    w.Disconnect("edge-o1");
    CHECK(w.Route("ch1", "10.20.3.4") == row.office1_down_too);
  }
}

TEST_CASE("Z-5 a company-wide zone and office zones inside it work as layers") {
  World w;
  w.Zone("company", {"10.0.0.0/8"})
      .Zone("office", {"10.20.0.0/16"})
      .Zone("desk", {"10.20.30.0/24"})
      .Node("c", "edge", "company")
      .Node("o", "edge", "office")
      .Node("d", "edge", "desk")
      .Stream("ch1", {})
      .Report("c", 0, 0, {"ch1"})
      .Report("o")
      .Report("d");
  struct Case {
    std::string client, node;
  };
  for (const Case& c : std::vector<Case>{{"10.1.2.3", "c"},
                                         {"10.20.1.1", "o"},
                                         {"10.20.30.40", "d"},
                                         {"10.20.31.1", "o"},
                                         {"10.255.255.255", "c"},
                                         {"11.0.0.1", "503"}}) {
    INFO(c.client);
    CHECK(w.Route("ch1", c.client) == c.node);
  }
}

TEST_CASE("Z-5 IPv6 and IPv4-mapped clients") {
  World w;
  w.Zone("v4", {"10.20.0.0/16"})
      .Zone("v6", {"2a02:6b8::/32"})
      .Zone("v6-narrow", {"2a02:6b8:20::/48"})
      .Node("a", "edge", "v4")
      .Node("b", "edge", "v6")
      .Node("c", "edge", "v6-narrow")
      .Stream("ch1")
      .Report("a", 0, 0, {"ch1"})
      .Report("b")
      .Report("c");
  CHECK(w.Route("ch1", "::ffff:10.20.1.2") == "a");
  CHECK(w.Route("ch1", "2a02:6b8::1") == "b");
  CHECK(w.Route("ch1", "2a02:6b8:20::5") == "c");
  CHECK(w.Route("ch1", "2a02:6b9::1") == "503");
  CHECK(w.Route("ch1", "::ffff:10.21.1.2") == "503");
}

TEST_CASE("Z-7 restricted mode is on exactly when some zone has a route") {
  World w;
  w.Zone("pool", {})
      .Node("e", "edge", "pool")
      .Node("u", "edge")
      .Stream("ch1")
      .Report("e", 5, 0, {"ch1"})
      .Report("u", 1);
  CHECK_FALSE(w.snapshot().restricted());
  CHECK(w.Route("ch1", "192.0.2.1") == "u");  // unrestricted: any edge, fewest sessions

  w.Zone("office", {"192.0.2.0/24"}).Node("o", "edge", "office").Report("o");
  w.Build();
  CHECK(w.snapshot().restricted());
  CHECK(w.Route("ch1", "192.0.2.1") == "o");

  // Deleting the last route turns it off again.
  w.Zone("office", {});
  w.Build();
  CHECK_FALSE(w.snapshot().restricted());
  CHECK(w.Route("ch1", "192.0.2.1") == "o");  // "o" and "u"... "o" has 0 sessions
}

TEST_CASE("Z-8 chain traversal ends at loops and dangling references") {
  World w;
  w.Zone("a", {"10.1.0.0/16"}, "b")
      .Zone("b", {"10.2.0.0/16"}, "a")  // a loop
      .Zone("c", {"10.3.0.0/16"}, "missing")
      .Node("in-b", "edge", "b")
      .Node("in-other", "edge", "d")  // a zone that does not exist
      .Node("unzoned", "edge")
      .Stream("ch1")
      .Report("in-b", 0, 0, {"ch1"})
      .Report("in-other")
      .Report("unzoned");
  CHECK(w.snapshot().Chain(w.snapshot().ZoneIndex("a")).size() == 2);
  CHECK(w.snapshot().Chain(w.snapshot().ZoneIndex("c")).size() == 1);
  CHECK(w.Route("ch1", "10.1.1.1") == "in-b");
  w.Disconnect("in-b");
  CHECK(w.Route("ch1", "10.1.1.1") == "503");  // a → b → (a again): end, no loop
  CHECK(w.Route("ch1", "10.3.1.1") == "503");  // c → missing: end; unzoned never selected
}

TEST_CASE("Z-8 unzoned nodes and nodes of unrelated zones are never selected in restricted mode") {
  World w;
  w.Zone("office", {"10.0.0.0/8"})
      .Zone("elsewhere", {"172.16.0.0/12"})
      .Node("unzoned", "edge")
      .Node("far", "edge", "elsewhere")
      .Stream("ch1")
      .Report("unzoned", 0, 0, {"ch1"})
      .Report("far", 0, 0, {"ch1"});
  for (int i = 0; i < 10; ++i) CHECK(w.Route("ch1", "10.1.1.1") == "503");
}

TEST_CASE("Z-9 restricted mode refuses unknown or unmatched clients") {
  World w;
  w.Zone("office", {"10.0.0.0/8"})
      .Node("e", "edge", "office")
      .Stream("ch1")
      .Report("e", 0, 0, {"ch1"});
  CHECK(w.Route("ch1", "") == "503");
  CHECK(w.Route("ch1", "192.168.1.1") == "503");
  w.Zone("everyone", {"0.0.0.0/0", "::/0"}).Node("g", "edge", "everyone").Report("g");
  w.Build();
  CHECK(w.Route("ch1", "192.168.1.1") == "g");
  CHECK(w.Route("ch1", "2001:db8::1") == "g");
  CHECK(w.Route("ch1", "10.1.1.1") == "e");  // the /8 is longer than the default route
}

TEST_CASE(
    "Z-10 unrestricted mode: edges first, ingest only without an eligible edge, never origin") {
  World w;
  w.Node("edge-1", "edge")
      .Node("ingest-1", "ingest")
      .Node("origin-1", "origin")
      .Stream("ch1", {"ingest-1", "origin-1"})
      .Report("edge-1", 100, 0)
      .Report("ingest-1", 0, 0, {"ch1"})
      .Report("origin-1", 0, 0, {"ch1"});
  CHECK(w.Route("ch1", "198.51.100.1") == "edge-1");  // more sessions, but edges come first
  w.Disconnect("edge-1");
  CHECK(w.Route("ch1", "198.51.100.1") == "ingest-1");
  w.Disconnect("ingest-1");
  CHECK(w.Route("ch1", "198.51.100.1") == "503");  // origin is not a fallback (Z-11)
}

TEST_CASE("Z-11 Z-12 an origin in the client's chain is an equal candidate") {
  World w;
  w.Zone("office", {"10.0.0.0/8"})
      .Node("edge-1", "edge", "office")
      .Node("origin-1", "origin", "office")
      .Stream("ch1", {"origin-1"})
      .Report("edge-1", 10)
      .Report("origin-1", 2, 0, {"ch1"});
  CHECK(w.Route("ch1", "10.1.1.1") == "origin-1");  // fewest sessions, whatever the role
}

TEST_CASE("Z-13 eligibility: online, able to serve the stream") {
  World w;
  w.Node("edge-1", "edge")
      .Node("ingest-1", "ingest")
      .Node("ingest-2", "ingest")
      .Stream("ch1", {"ingest-1"})
      .Stream("ch2", {})
      .Report("edge-1")
      .Report("ingest-1", 0, 0, {})
      .Report("ingest-2", 0, 0, {"ch3"});
  // No node reports ch1 working: the edge cannot relay it; the ingest holding it can.
  CHECK(w.Route("ch1", "198.51.100.1") == "ingest-1");
  // ch2 is configured but held by nobody and live nowhere.
  CHECK(w.Route("ch2", "198.51.100.1") == "503");
  // ch3 is not configured but live on ingest-2: known, and the edge relays it.
  CHECK(w.Route("ch3", "198.51.100.1") == "edge-1");
  CHECK(w.Route("ch4", "198.51.100.1") == "404");
  // C-4: a node whose last report is as old as offline_after is offline.
  w.Report("ingest-2", 0, 0, {"ch3"}).Report("edge-1");
  w.clock().Advance(3s);
  CHECK(w.Route("ch3", "198.51.100.1") == "404");
}

TEST_CASE(
    "Z-13 CS-2 a placed node whose own copy does not work comes after those whose copy does") {
  World w;
  w.Node("ingest-a", "ingest")
      .Node("ingest-b", "ingest")
      .Stream("ch1", {"ingest-a", "ingest-b"})
      .Report("ingest-a", 0, 0, {})
      .Report("ingest-b", 0, 0, {});
  // Working nowhere yet: both placed nodes may take (and hold) a viewer.
  std::set<std::string> picked;
  for (int i = 0; i < 4; ++i) picked.insert(w.Route("ch1", "198.51.100.1"));
  CHECK(picked == std::set<std::string>{"ingest-a", "ingest-b"});
  // Working on a (40 viewers) while b's input is dead: b, though less loaded, gets nobody.
  w.Report("ingest-a", 40, 0, {"ch1"}).Report("ingest-b", 0, 0, {});
  for (int i = 0; i < 4; ++i) CHECK(w.Route("ch1", "198.51.100.1") == "ingest-a");
  // b's copy works again: the fewest sessions win.
  w.Report("ingest-b", 0, 0, {"ch1"});
  CHECK(w.Route("ch1", "198.51.100.1") == "ingest-b");
}

TEST_CASE("Z-14 fewest Play sessions wins and ties are used in turn") {
  World w(GENERATE(RouteMode::kDecide, RouteMode::kSelect));
  w.Node("a", "edge").Node("b", "edge").Node("c", "edge").Node("d", "edge").Stream("ch1");
  w.Report("a", 7, 0, {"ch1"}).Report("b", 7).Report("c", 7).Report("d", 9);
  std::map<std::string, int> counts;
  for (int i = 0; i < 300; ++i) counts[w.Route("ch1", "198.51.100.1")]++;
  CHECK(counts["a"] == 100);
  CHECK(counts["b"] == 100);
  CHECK(counts["c"] == 100);
  CHECK(counts["d"] == 0);
  w.Report("b", 6);
  CHECK(w.Route("ch1", "198.51.100.1") == "b");
  CHECK(w.Route("ch1", "198.51.100.1") == "b");
}

TEST_CASE("Z-15 Z-16 Z-17 limits: null, zero, reached, metric missing") {
  struct Row {
    std::string name;
    json cdn;
    std::optional<uint64_t> sessions, out_kbit;
    bool eligible;
  };
  std::vector<Row> rows = {
      {"no limits", json::object(), 50, 9000, true},
      {"null limits", {{"playback_session_limit", nullptr}}, 50, 9000, true},
      {"session limit 0", {{"playback_session_limit", 0}}, 0, 0, false},
      {"below session limit", {{"playback_session_limit", 51}}, 50, 0, true},
      {"session limit reached", {{"playback_session_limit", 50}}, 50, 0, false},
      {"above session limit", {{"playback_session_limit", 40}}, 50, 0, false},
      {"session metric missing", {{"playback_session_limit", 100}}, std::nullopt, 0, false},
      {"bandwidth limit 0", {{"playback_bandwidth_kbit", 0}}, 0, 0, false},
      {"below bandwidth limit", {{"playback_bandwidth_kbit", 9001}}, 0, 9000, true},
      {"bandwidth limit reached", {{"playback_bandwidth_kbit", 9000}}, 0, 9000, false},
      {"bandwidth metric missing", {{"playback_bandwidth_kbit", 1}}, 0, std::nullopt, false},
      {"no limit, metrics missing", json::object(), std::nullopt, std::nullopt, true},
      {"placement budget is not a routing limit", {{"network_bandwidth_kbit", 0}}, 0, 0, true},
  };
  const RouteMode mode = GENERATE(RouteMode::kDecide, RouteMode::kSelect);  // P-2: the same
  for (const auto& row : rows) {
    INFO(row.name);
    for (bool restricted : {false, true}) {
      INFO((restricted ? "restricted" : "unrestricted"));
      World w(mode);
      if (restricted) w.Zone("z", {"0.0.0.0/0"});
      w.Node("n", "edge", restricted ? std::optional<std::string>("z") : std::nullopt, row.cdn)
          .Node("src", "ingest")
          .Stream("ch1", {"src"})
          .Report("n", row.sessions, row.out_kbit)
          .Report("src", 0, 0, {"ch1"});
      CHECK((w.Route("ch1", "198.51.100.1") == "n") == row.eligible);
    }
  }
}

TEST_CASE("Z-18 when every node of a zone is excluded the next zone is tried") {
  World w(GENERATE(RouteMode::kDecide, RouteMode::kSelect));
  w.Zone("office", {"10.0.0.0/8"}, "backup")
      .Zone("backup", {})
      .Node("o1", "edge", "office", {{"playback_session_limit", 10}})
      .Node("o2", "edge", "office", {{"playback_bandwidth_kbit", 1000}})
      .Node("b1", "edge", "backup")
      .Stream("ch1")
      .Report("o1", 10, 0, {"ch1"})
      .Report("o2", 0, 1000)
      .Report("b1", 500);
  CHECK(w.Route("ch1", "10.1.1.1") == "b1");
  w.Report("o1", 9, 0, {"ch1"});  // a report under the limit changes the next decision (Z-19)
  CHECK(w.Route("ch1", "10.1.1.1") == "o1");
}

TEST_CASE("Z-13 a viewer path names the longest stream known to the config or live somewhere") {
  World w;
  w.Node("e", "edge").Stream("news").Stream("news/eu").Stream("a/b/c");
  LiveStreams live = {"sports/hd"};  // live on some node, not configured here
  const RoutingSnapshot& snapshot = w.snapshot();
  auto stream = [&](std::string_view path) {
    auto s = RoutingService::StreamOfPath(snapshot, live, path);
    return s ? std::string(*s) : std::string("-");
  };
  CHECK(stream("/news/v1/12.ts") == "news");
  CHECK(stream("/news/eu/v1/12.ts") == "news/eu");  // the longer name wins
  CHECK(stream("/news/eu") == "news");              // "eu" is the object here
  CHECK(stream("/a/b/c/index.m3u8") == "a/b/c");
  CHECK(stream("/a/b/index.m3u8") == "-");  // "a/b" and "a" are not streams
  CHECK(stream("/sports/hd/index.m3u8") == "sports/hd");
  CHECK(stream("/news") == "-");  // a stream name alone names no object
  CHECK(stream("/") == "-");
  CHECK(stream("") == "-");
  CHECK(stream("//news/x") == "-");  // an empty first segment is no stream
  // The view is into the path itself: the redirect keeps the path as it came.
  std::string path = "/news/eu/v1/12.ts";
  auto view = RoutingService::StreamOfPath(snapshot, live, path);
  REQUIRE(view);
  CHECK(view->data() == path.data() + 1);
}

TEST_CASE(
    "Z-20 R-3 a path thousands of segments deep names its stream, and only prefixes a stream "
    "name can be are tried") {
  World w;
  const std::string longest = std::string(127, 'a') + "/" + std::string(127, 'b') + "/" +
                              std::string(127, 'c') + "/" + std::string(128, 'd');
  REQUIRE(longest.size() == stream_defaults::kMaxStreamNameBytes);
  w.Node("e", "edge").Stream("news").Stream(longest);
  LiveStreams live;
  const RoutingSnapshot& snapshot = w.snapshot();
  auto stream = [&](const std::string& path) {
    auto s = RoutingService::StreamOfPath(snapshot, live, path);
    return s ? std::string(*s) : std::string("-");
  };
  std::string deep = "/news";
  for (int i = 0; i < 8000; ++i) deep += "/x";
  CHECK(stream(deep + "/12.ts") == "news");
  CHECK(stream("/" + longest + "/v1/index.m3u8") == longest);
  CHECK(stream("/" + longest + deep + "/12.ts") == longest);
}

TEST_CASE("Z-21 the listing shows every chain zone in order, nodes by increasing load") {
  World w;
  w.Zone("office", {"10.0.0.0/8"}, "backup")
      .Zone("backup", {}, "office")
      .Node("o1", "edge", "office")
      .Node("o2", "edge", "office")
      .Node("b1", "edge", "backup")
      .Stream("ch1")
      .Report("o1", 30, 0, {"ch1"})
      .Report("o2", 20)
      .Report("b1", 10);
  auto d = w.List("ch1", "10.9.9.9");
  REQUIRE(d.ok());
  REQUIRE(d->zones.size() == 2);
  CHECK(w.snapshot().zones()[d->zones[0].zone].name == "office");
  CHECK(w.snapshot().zones()[d->zones[1].zone].name == "backup");
  REQUIRE(d->zones[0].nodes.size() == 2);
  CHECK(w.snapshot().nodes()[d->zones[0].nodes[0].node].id == "o2");
  CHECK(w.snapshot().nodes()[d->zones[0].nodes[1].node].id == "o1");
  CHECK(w.snapshot().nodes()[d->selected].id == "o2");
}

TEST_CASE("Z-24 VOD: allowed replicas first, then highest revision, chain order, load") {
  World w;
  w.Zone("home", {"10.0.0.0/8"}, "fallback")
      .Zone("fallback", {})
      .Zone("elsewhere", {"172.16.0.0/12"})
      .Node("h1", "origin", "home")
      .Node("h2", "origin", "home")
      .Node("f1", "origin", "fallback")
      .Node("x1", "origin", "elsewhere")
      .Report("h1", 5)
      .Report("h2", 1)
      .Report("f1", 0)
      .Report("x1", 0);
  auto p = [](std::string node, int revision, bool available = true) {
    return json{{"streamer", node}, {"revision", revision}, {"available", available}};
  };
  // A newer replica on a forbidden node never hides an older permitted one.
  CHECK(w.Vod({p("x1", 9), p("h1", 3)}, "10.1.1.1") == "h1");
  // A newer permitted replica in a fallback zone wins over an older one at home.
  CHECK(w.Vod({p("h1", 3), p("f1", 4)}, "10.1.1.1") == "f1");
  // Same revision: chain order (home first), then load.
  CHECK(w.Vod({p("f1", 4), p("h1", 4)}, "10.1.1.1") == "h1");
  CHECK(w.Vod({p("h1", 4), p("h2", 4)}, "10.1.1.1") == "h2");
  // Unavailable placements and offline nodes are skipped.
  CHECK(w.Vod({p("h1", 5, false), p("h2", 4)}, "10.1.1.1") == "h2");
  w.Disconnect("h2");
  CHECK(w.Vod({p("h2", 5)}, "10.1.1.1") == "503");
  CHECK(w.Vod({p("h1", 5)}, "192.0.2.1") == "503");  // unmatched client in restricted mode
}

TEST_CASE("Z-24 VOD in unrestricted mode: any online node, highest revision") {
  World w;
  w.Node("a", "origin").Node("b", "edge").Report("a").Report("b");
  auto p = [](std::string node, int revision) {
    return json{{"streamer", node}, {"revision", revision}, {"available", true}};
  };
  CHECK(w.Vod({p("a", 1), p("b", 2)}, "") == "b");
  w.Disconnect("b");
  CHECK(w.Vod({p("a", 1), p("b", 2)}, "") == "a");
}

TEST_CASE("C-1 node URLs leave out the scheme's default port") {
  RouteNode node;
  node.hostname = "edge-1.example.net";
  auto live = std::make_shared<LiveNode>();
  node.live = live;
  live->SetEndpoints({8080, 0, 0});
  CHECK(RoutingService::NodeUrl(node, "http") == "http://edge-1.example.net:8080");
  live->SetEndpoints({80, 443, 0});
  CHECK(RoutingService::NodeUrl(node, "http") == "http://edge-1.example.net");
  live->SetEndpoints({8080, 8443, 9000});
  CHECK(RoutingService::NodeUrl(node, "https") == "https://edge-1.example.net:9000");
  node.hostname = "2001:db8::7";
  live->SetEndpoints({80, 0, 0});
  CHECK(RoutingService::NodeUrl(node, "http") == "http://[2001:db8::7]");
}

TEST_CASE(
    "S-26 one parent edge per stream and zone: the same on every call, spread, next on failure") {
  World w;
  w.Zone("office-1", {"10.10.0.0/16"}).Zone("office-2", {"10.20.0.0/16"});
  for (const char* id : {"e1", "e2", "e3"}) w.Node(id, "edge", "office-1");
  w.Node("f1", "edge", "office-2").Node("o1", "origin", "office-1");
  const RoutingSnapshot& snap = w.snapshot();
  auto zone = [&](const std::string& id) { return snap.nodes()[snap.NodeIndex(id)].zone; };
  auto all = [](const RouteNode&) { return true; };
  auto id_of = [&](int index) { return index < 0 ? std::string("none") : snap.nodes()[index].id; };
  std::set<std::string> parents;
  for (int i = 0; i < 24; ++i) {
    const std::string stream = "ch" + std::to_string(i);
    int parent = RoutingService::ParentEdge(snap, stream, zone("e1"), all);
    INFO(stream);
    REQUIRE(parent >= 0);
    // An edge of the zone, never the origin nor another zone's edge; the same every time.
    CHECK(snap.nodes()[parent].role == v1::ROLE_EDGE);
    CHECK(snap.nodes()[parent].zone == zone("e1"));
    CHECK(RoutingService::ParentEdge(snap, stream, zone("e1"), all) == parent);
    parents.insert(id_of(parent));
    // The parent failed: another edge of the zone, and only this stream's choice moves.
    int next = RoutingService::ParentEdge(snap, stream, zone("e1"), [&](const RouteNode& n) {
      return n.id != snap.nodes()[parent].id;
    });
    CHECK(next >= 0);
    CHECK(next != parent);
    CHECK(snap.nodes()[next].zone == zone("e1"));
  }
  CHECK(parents.size() == 3);  // 24 streams spread over the three edges
  CHECK(id_of(RoutingService::ParentEdge(snap, "ch1", zone("f1"), all)) == "f1");
  CHECK(RoutingService::ParentEdge(snap, "ch1", zone("e1"),
                                   [](const RouteNode&) { return false; }) == -1);
  CHECK(RoutingService::ParentEdge(snap, "ch1", -1, all) == -1);
}

TEST_CASE("S-26 CS-4 a draining or offline edge is no parent edge") {
  World w;
  w.Node("e1", "edge").Node("e2", "edge").Report("e1").Report("e2");
  w.config().streamers["e2"].object["drain"] = true;
  w.Build();
  const RoutingSnapshot& snap = w.snapshot();
  auto now = w.clock().Monotonic();
  const RouteNode& e1 = snap.nodes()[snap.NodeIndex("e1")];
  const RouteNode& e2 = snap.nodes()[snap.NodeIndex("e2")];
  REQUIRE(e2.drain);
  CHECK(RoutingService::CanBeParent(e1, now, 3s));
  CHECK_FALSE(RoutingService::CanBeParent(e2, now, 3s));
  CHECK_FALSE(RoutingService::CanBeParent(e1, now + 3s, 3s));
}

TEST_CASE("S-25 internode URLs use the node's internal address, viewers' URLs never do") {
  RouteNode node;
  node.hostname = "edge-1.example.net";
  auto live = std::make_shared<LiveNode>();
  node.live = live;
  NodeEndpoints endpoints{8080, 8443, 80, 9000};
  live->SetEndpoints(endpoints);
  // No internal address: the public URL, the publish listener on the hostname.
  CHECK(RoutingService::InternalUrl(node) == "http://edge-1.example.net");
  CHECK(RoutingService::PublishUrl(node) == "http://edge-1.example.net:9000");
  endpoints.internal_host = "10.0.3.7";
  live->SetEndpoints(endpoints);
  // The listener's own port: the public port forward is for viewers.
  CHECK(RoutingService::InternalUrl(node) == "http://10.0.3.7:8080");
  CHECK(RoutingService::PublishUrl(node) == "http://10.0.3.7:9000");
  CHECK(RoutingService::NodeUrl(node, "http") == "http://edge-1.example.net");
  endpoints.internal_host = "fd00::3";
  live->SetEndpoints(endpoints);
  CHECK(RoutingService::InternalUrl(node) == "http://[fd00::3]:8080");
  CHECK(net::IsHostName("edge-1.internal"));
  CHECK(net::IsHostName("fd00::3"));
  CHECK_FALSE(net::IsHostName(""));
  CHECK_FALSE(net::IsHostName("10.0.0.1:80"));
  CHECK_FALSE(net::IsHostName("evil/path"));
  CHECK_FALSE(net::IsHostName("-x"));
  CHECK_FALSE(net::IsHostName(std::string(254, 'a')));
}

}  // namespace
}  // namespace meshwork::central
