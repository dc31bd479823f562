// Viewer routing end to end: real central, simulated streamers over the real gRPC control
// channel (tools/simnodes), answers over HTTP (302/503/404, JSON) and gRPC (Z-1…Z-24).
#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>
#include <map>

#include "meshwork/v1/routing.grpc.pb.h"
#include "tests/integration/harness.h"
#include "tools/simnodes/sim_node.h"

namespace meshwork::testing {
namespace {

sim::SimNodeSpec Node(const std::string& id, meshwork::v1::Role role, uint32_t port,
                      uint64_t sessions, std::vector<std::string> streams = {}) {
  sim::SimNodeSpec spec;
  spec.id = id;
  spec.hostname = id + ".example.net";
  spec.role = role;
  spec.http_port = port;
  spec.play_sessions = sessions;
  for (auto& s : streams) spec.streams.push_back({s, true});
  return spec;
}

std::string Location(const Central& c, const std::string& target,
                     std::vector<std::pair<std::string, std::string>> headers = {}) {
  auto r = Http("GET", c.http, target, "", headers);
  if (r.status != 302) return std::to_string(r.status);
  return r.headers["Location"];
}

bool Online(const Central& c, const std::string& id) {
  auto r = Http("GET", c.http, kApi + "/streamers/" + id);
  return r.status == 200 && r.Json()["status"]["online"] == true;
}

struct Cluster {
  std::string dir = MakeTempDir("routing");
  Central central = StartCentral(dir);
  sim::SimCluster nodes{central.grpc, ClusterToken(), std::chrono::milliseconds(200)};

  void Put(const std::string& path, const std::string& body) {
    auto r = Http("PUT", central.http, kApi + path, body);
    INFO(path << " → " << r.status << " " << r.body);
    REQUIRE((r.status == 200 || r.status == 201));
  }
  void Patch(const std::string& path, const std::string& body) {
    auto r = Http("PATCH", central.http, kApi + path, body);
    INFO(path << " → " << r.status << " " << r.body);
    REQUIRE(r.status == 200);
  }
  void WaitOnline(std::initializer_list<std::string> ids) {
    for (const auto& id : ids) REQUIRE(Eventually([&] { return Online(central, id); }, 5s));
  }
};

TEST_CASE("Z-20 the viewer redirect keeps path and query, 404 unknown stream, 503 no node") {
  Cluster c;
  c.nodes.Add(Node("edge-1", v1::ROLE_EDGE, 8081, 3));
  c.nodes.Add(Node("ingest-1", v1::ROLE_INGEST, 8082, 0, {"news/ch1"}));
  REQUIRE(c.nodes.WaitRegistered(10s));
  c.Put("/streams/news/ch1", R"({"placement": {"streamers": ["ingest-1"]}})");
  c.Put("/streams/idle", R"({"placement": {"streamers": []}})");
  c.WaitOnline({"edge-1", "ingest-1"});

  // Unrestricted mode (no zone has a route): edges first.
  CHECK(Location(c.central, "/news/ch1/v1/index.m3u8?_HLS_msn=5&x=%20") ==
        "http://edge-1.example.net:8081/news/ch1/v1/index.m3u8?_HLS_msn=5&x=%20");
  // A query longer than the prepared answer's room for per-request fields (a viewer pass,
  // say) is redirected whole all the same, and with the same fields.
  const std::string pass(1500, 'p');
  auto long_query = Http("GET", c.central.http, "/news/ch1/v1/index.m3u8?pass=" + pass);
  CHECK(long_query.status == 302);
  CHECK(long_query.headers["Location"] ==
        "http://edge-1.example.net:8081/news/ch1/v1/index.m3u8?pass=" + pass);
  CHECK(long_query.headers["Cache-Control"] == "no-store");
  CHECK(long_query.headers["Access-Control-Allow-Origin"] == "*");
  auto short_query = Http("GET", c.central.http, "/news/ch1/v1/index.m3u8?pass=p");
  CHECK(short_query.headers["Cache-Control"] == "no-store");
  CHECK(short_query.headers["Access-Control-Allow-Origin"] == "*");
  CHECK(short_query.headers["Content-Type"] == long_query.headers["Content-Type"]);
  CHECK(Location(c.central, "/unknown/index.m3u8") == "404");
  auto refused = Http("GET", c.central.http, "/idle/index.m3u8");
  CHECK(refused.status == 503);
  CHECK(refused.headers["Retry-After"] == "2");
  CHECK(refused.Json()["error"]["code"] == "unavailable");
}

TEST_CASE("Z-9 Z-21 restricted mode: routes by the client's zone, refuses unmatched clients") {
  Cluster c;
  c.nodes.Add(Node("edge-o1", v1::ROLE_EDGE, 8081, 10, {"ch1"}));
  c.nodes.Add(Node("edge-o2a", v1::ROLE_EDGE, 8082, 20));
  c.nodes.Add(Node("edge-o2b", v1::ROLE_EDGE, 8083, 5));
  REQUIRE(c.nodes.WaitRegistered(10s));
  c.Put("/zones/office-1", R"({"routes": ["10.10.0.0/16"]})");
  c.Put("/zones/office-2", R"({"routes": ["10.20.0.0/16", "2a02:6b8:20::/48"],
                               "fallback_zone": "office-1"})");
  c.Patch("/streamers/edge-o1", R"({"zone": "office-1"})");
  c.Patch("/streamers/edge-o2a", R"({"zone": "office-2"})");
  c.Patch("/streamers/edge-o2b", R"({"zone": "office-2"})");
  c.WaitOnline({"edge-o1", "edge-o2a", "edge-o2b"});

  auto route = Http("GET", c.central.http, kApi + "/routes/ch1?client=2a02:6b8:20::9");
  REQUIRE(route.status == 200);
  auto j = route.Json();
  CHECK(j["restricted"] == true);
  CHECK(j["client_zone"] == "office-2");
  REQUIRE(j["zones"].size() == 2);
  CHECK(j["zones"][0]["name"] == "office-2");
  CHECK(j["zones"][0]["nodes"][0]["id"] == "edge-o2b");  // fewest Play sessions first
  CHECK(j["zones"][0]["nodes"][0]["play_sessions"] == 5);
  CHECK(j["zones"][0]["nodes"][1]["id"] == "edge-o2a");
  CHECK(j["zones"][1]["name"] == "office-1");
  CHECK(route.body.find("127.0.0.1") == std::string::npos);  // no private addresses (Z-21)
  // A-2: a viewer's token given to the route query is carried in every node's play URL.
  auto carried = Http("GET", c.central.http, kApi + "/routes/ch1?client=10.20.1.1&token=aa.bb.cc");
  REQUIRE(carried.status == 200);
  auto with_token = carried.Json();
  CHECK(with_token["selected"]["play_url"] ==
        "http://edge-o2b.example.net:8083/ch1/index.m3u8?token=aa.bb.cc");
  for (const auto& zone : with_token["zones"]) {
    for (const auto& node : zone["nodes"]) {
      CHECK(node["play_url"].get<std::string>().ends_with("/ch1/index.m3u8?token=aa.bb.cc"));
    }
  }
  auto bad_token = Http("GET", c.central.http, kApi + "/routes/ch1?client=10.20.1.1&token=a%22b");
  CHECK(bad_token.status == 400);
  CHECK(bad_token.Json()["error"]["field"] == "token");

  // The viewer's own address comes from the connection (127.0.0.1 here): no route → 503.
  CHECK(Location(c.central, "/ch1/index.m3u8") == "503");
  // Behind a trusted proxy, the last X-Forwarded-For element is the client (T-2).
  c.Patch("/config", R"({"trusted_proxies": ["127.0.0.1/32"]})");
  CHECK(Location(c.central, "/ch1/index.m3u8", {{"X-Forwarded-For", "10.20.1.1"}}) ==
        "http://edge-o2b.example.net:8083/ch1/index.m3u8");
  CHECK(Location(c.central, "/ch1/index.m3u8", {{"X-Forwarded-For", "10.10.1.1"}}) ==
        "http://edge-o1.example.net:8081/ch1/index.m3u8");
  CHECK(Location(c.central, "/ch1/index.m3u8", {{"X-Forwarded-For", "192.0.2.1"}}) == "503");
  CHECK(Http("GET", c.central.http, kApi + "/routes/ch1?client=nonsense").status == 400);
}

TEST_CASE("C-4 Z-13 a killed node goes offline and is no longer selected") {
  Cluster c;
  c.nodes.Add(Node("edge-1", v1::ROLE_EDGE, 8081, 0, {"ch1"}));
  c.nodes.Add(Node("edge-2", v1::ROLE_EDGE, 8082, 50));
  REQUIRE(c.nodes.WaitRegistered(10s));
  c.WaitOnline({"edge-1", "edge-2"});
  CHECK(Location(c.central, "/ch1/a.ts") == "http://edge-1.example.net:8081/ch1/a.ts");
  c.nodes.Kill("edge-1");
  // The stream was live only on edge-1: once it is offline ch1 is unknown.
  REQUIRE(Eventually([&] { return !Online(c.central, "edge-1"); }, 4s));
  CHECK(Eventually([&] { return Location(c.central, "/ch1/a.ts") == "404"; }, 1s));
  c.nodes.Update("edge-2", [](sim::SimNodeSpec& s) { s.streams = {{"ch1", true}}; });
  CHECK(Eventually(
      [&] { return Location(c.central, "/ch1/a.ts") == "http://edge-2.example.net:8082/ch1/a.ts"; },
      2s));
}

TEST_CASE("Z-19 a report crossing a limit changes the next decision") {
  Cluster c;
  c.nodes.Add(Node("edge-1", v1::ROLE_EDGE, 8081, 10, {"ch1"}));
  c.nodes.Add(Node("edge-2", v1::ROLE_EDGE, 8082, 90, {"ch1"}));
  REQUIRE(c.nodes.WaitRegistered(10s));
  c.WaitOnline({"edge-1", "edge-2"});
  c.Patch("/streamers/edge-1", R"({"cdn": {"playback_session_limit": 100}})");
  CHECK(Location(c.central, "/ch1/x.m3u8") == "http://edge-1.example.net:8081/ch1/x.m3u8");
  c.nodes.Update("edge-1", [](sim::SimNodeSpec& s) { s.play_sessions = 100; });
  CHECK(Eventually(
      [&] {
        return Location(c.central, "/ch1/x.m3u8") == "http://edge-2.example.net:8082/ch1/x.m3u8";
      },
      2s));
  // Z-17: the limit is set and the metric disappears from the reports: still excluded.
  c.nodes.Update("edge-1", [](sim::SimNodeSpec& s) { s.play_sessions = std::nullopt; });
  c.nodes.Update("edge-2", [](sim::SimNodeSpec& s) { s.play_sessions = 500; });
  CHECK(Eventually(
      [&] {
        auto r = Http("GET", c.central.http, kApi + "/streamers/edge-1").Json();
        return r["status"]["report"]["play_sessions"].is_null();
      },
      2s));
  CHECK(Location(c.central, "/ch1/x.m3u8") == "http://edge-2.example.net:8082/ch1/x.m3u8");
}

TEST_CASE("C-9 a count placement is filled on PUT and a node dead for replace_after_s replaced") {
  Cluster c;
  for (auto [id, port] : {std::pair{"in-1", 8081}, {"in-2", 8082}, {"in-3", 8083}}) {
    c.nodes.Add(Node(id, v1::ROLE_INGEST, port, 0));
  }
  REQUIRE(c.nodes.WaitRegistered(10s));
  c.WaitOnline({"in-1", "in-2", "in-3"});
  c.Put("/zones/z1", R"({"routes": ["10.1.0.0/16"]})");
  c.Patch("/streamers/in-1", R"({"zone": "z1", "cdn": {"network_bandwidth_kbit": 300000}})");
  c.Patch("/streamers/in-2", R"({"zone": "z1", "cdn": {"network_bandwidth_kbit": 200000}})");
  c.Patch("/streamers/in-3", R"({"zone": "z1", "cdn": {"network_bandwidth_kbit": 100000}})");
  auto put = Http("PUT", c.central.http, kApi + "/streams/ch1",
                  R"({"placement": {"count": 2, "zone": "z1", "replace_after_s": 1}})");
  REQUIRE(put.status == 201);
  CHECK(put.Json()["placement"]["streamers"] == nlohmann::json({"in-1", "in-2"}));
  auto bad = Http("PUT", c.central.http, kApi + "/streams/ch2",
                  R"({"placement": {"count": 2, "zone": "elsewhere"}})");
  CHECK(bad.status == 400);
  CHECK(bad.Json()["error"]["field"] == "placement.zone");

  c.nodes.Kill("in-1");
  auto placed = [&] {
    return Http("GET", c.central.http, kApi + "/streams/ch1").Json()["placement"]["streamers"];
  };
  // Offline after offline_after, then replaced one replace_after_s later (the leader's round
  // is every second).
  CHECK(Eventually([&] { return placed() == nlohmann::json({"in-2", "in-3"}); }, 8s));
}

TEST_CASE("Z-22 gRPC Routing.Route gives the redirect's decision") {
  Cluster c;
  c.nodes.Add(Node("edge-1", v1::ROLE_EDGE, 8081, 1, {"ch1"}));
  c.nodes.Add(Node("edge-2", v1::ROLE_EDGE, 8082, 2));
  REQUIRE(c.nodes.WaitRegistered(10s));
  c.WaitOnline({"edge-1", "edge-2"});
  auto stub =
      v1::Routing::NewStub(grpc::CreateChannel(c.central.grpc, grpc::InsecureChannelCredentials()));
  auto call = [&](const std::string& stream, v1::RouteResponse* out) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + 3s);
    v1::RouteRequest req;
    req.set_stream(stream);
    req.set_client_address("198.51.100.7");
    req.set_path("index.m3u8");
    return stub->Route(&ctx, req, out);
  };
  v1::RouteResponse res;
  auto status = call("ch1", &res);
  REQUIRE(status.ok());
  CHECK(res.selected().id() == "edge-1");
  CHECK(res.url() == "http://edge-1.example.net:8081/ch1/index.m3u8");
  CHECK_FALSE(res.restricted());
  CHECK(call("nope", &res).error_code() == grpc::StatusCode::NOT_FOUND);
}

TEST_CASE("Z-22 a streamer asks central's Route for a stream it does not hold and redirects") {
  Cluster c;
  c.nodes.Add(Node("edge-1", v1::ROLE_EDGE, 8081, 1, {"ch1"}));
  REQUIRE(c.nodes.WaitRegistered(10s));
  // ch1 is not placed here. Answers are reused for 5 s (1 s by default): the asks below fall
  // within it however loaded the machine; and archive reads are not shed for the host's CPU
  // (D-7, other tests load it), so the archive request below reaches central's Route.
  Streamer lone = StartStreamer(c.central.grpc, "ingest-9", "ingest",
                                {"--central_route_cache_ms=5000", "--shed_dvr_cpu=0"});
  c.WaitOnline({"edge-1", "ingest-9"});
  c.Put("/streams/ch1", R"({"placement": {"streamers": []}})");
  // A live entry: 302 to the node central chose, the viewer's query kept.
  auto opened = Http("GET", lone.http, "/ch1/index.m3u8?token=abc");
  CHECK(opened.status == 302);
  CHECK(opened.headers["Location"] == "http://edge-1.example.net:8081/ch1/index.m3u8?token=abc");
  CHECK(Http("GET", lone.http, "/ch1/index.mpd").headers["Location"] ==
        "http://edge-1.example.net:8081/ch1/index.mpd");
  // An archive request for a stream this node neither records nor relays goes the same way.
  CHECK(Http("GET", lone.http, "/ch1/index-1700000000-60.m3u8").headers["Location"] ==
        "http://edge-1.example.net:8081/ch1/index-1700000000-60.m3u8");
  // The second and third asks were answered from the node's cache.
  CHECK(MetricAt(lone.http, "meshwork_central_route_asks_total", "result=\"asked\"") == 1);
  CHECK(MetricAt(lone.http, "meshwork_central_route_asks_total", "result=\"cached\"") == 2);
  // Central does not know the stream: 404 as before. Not an entry: the node's own 404.
  CHECK(Http("GET", lone.http, "/nope/index.m3u8").status == 404);
  CHECK(Http("GET", lone.http, "/ch1/v1/12.ts").status == 404);
  // No eligible node: 503 with Retry-After, once the cached answer has lapsed.
  c.Patch("/streamers/edge-1", R"({"cdn": {"playback_session_limit": 0}})");
  HttpResult refused;
  CHECK(Eventually(
      [&] {
        refused = Http("GET", lone.http, "/ch1/index.m3u8");
        return refused.status == 503;
      },
      10s));
  CHECK_FALSE(refused.headers["Retry-After"].empty());
}

TEST_CASE("Z-2 Z-3 zone writes: bad CIDR names routes[i], a taken prefix is 409 naming its zone") {
  auto dir = MakeTempDir("zones");
  auto central = StartCentral(dir);
  REQUIRE(Http("PUT", central.http, kApi + "/zones/office-1",
               R"({"routes": ["10.10.0.0/16"], "fallback_zone": "not-yet"})")
              .status == 201);
  auto bad = Http("PUT", central.http, kApi + "/zones/office-2",
                  R"({"routes": ["10.20.0.0/16", "10.10.1.1/16"]})");
  CHECK(bad.status == 400);
  CHECK(bad.Json()["error"]["field"] == "routes[1]");
  CHECK(bad.Json()["error"]["message"].get<std::string>().find("10.10.1.1/16") !=
        std::string::npos);
  auto taken = Http("PUT", central.http, kApi + "/zones/office-2",
                    R"({"routes": ["10.20.0.0/16", "10.10.0.0/16"]})");
  CHECK(taken.status == 409);
  CHECK(taken.Json()["error"]["field"] == "routes[1]");
  CHECK(taken.Json()["error"]["message"].get<std::string>().find("office-1") != std::string::npos);
  CHECK(Http("GET", central.http, kApi + "/zones/office-2").status == 404);  // nothing stored
  auto zones = Http("GET", central.http, kApi + "/zones").Json()["zones"];
  REQUIRE(zones.size() == 1);
  CHECK(zones[0]["fallback_zone"] == "not-yet");  // a dangling reference is allowed (Z-6)
  // T-7 merge patch: deleting the last route.
  REQUIRE(Http("PATCH", central.http, kApi + "/zones/office-1", R"({"routes": null})").status ==
          200);
  CHECK(Http("GET", central.http, kApi + "/zones/office-1").Json()["routes"].empty());
}

}  // namespace
}  // namespace meshwork::testing
