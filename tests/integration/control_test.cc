// Central and streamers as real processes on loopback: registration, sessions, config push,
// static stability and durability (C-1…C-6, T-4, M-1, M-4).
#include <signal.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <set>
#include <thread>

#include "tests/integration/harness.h"

namespace meshwork::testing {
namespace {

TEST_CASE("C-1 a streamer unknown to central is created with its reported hostname and role") {
  auto dir = MakeTempDir("c1");
  auto central = StartCentral(dir);
  auto node = StartStreamer(central.grpc, "edge-7", "edge", {"--hostname=edge-7.example.net"});
  REQUIRE(Eventually([&] { return IsOnline(central, "edge-7"); }, 5s));
  auto j = Http("GET", central.http, kApi + "/streamers/edge-7").Json();
  CHECK(j["hostname"] == "edge-7.example.net");
  CHECK(j["role"] == "edge");
  CHECK(j["zone"].is_null());
  CHECK(j["status"]["version"] == "0.1.0");
  CHECK(j["status"]["protocol_version"] == 1);
  CHECK(j["status"]["listeners"].size() == 2);
  CHECK(j["status"]["report"]["play_sessions"] == 0);

  SECTION("an operator's settings survive the node registering again") {
    auto put = Http("PATCH", central.http, kApi + "/streamers/edge-7",
                    R"({"zone": "office-2", "hostname": "edge7.office2.example.net"})");
    REQUIRE(put.status == 200);
    node.process.reset();  // kill -9
    auto again = StartStreamer(central.grpc, "edge-7", "edge", {"--hostname=other.example"});
    REQUIRE(Eventually([&] { return IsOnline(central, "edge-7"); }, 5s));
    auto k = Http("GET", central.http, kApi + "/streamers/edge-7").Json();
    CHECK(k["hostname"] == "edge7.office2.example.net");
    CHECK(k["zone"] == "office-2");
  }
}

TEST_CASE("C-4 a node killed with SIGKILL goes offline within offline_after") {
  auto dir = MakeTempDir("c4");
  auto central = StartCentral(dir);
  auto node = StartStreamer(central.grpc, "edge-1");
  REQUIRE(Eventually([&] { return IsOnline(central, "edge-1"); }, 5s));
  node.process->Signal(SIGKILL);
  node.process->Wait();
  std::chrono::milliseconds took{0};
  // offline_after is 3 s; a killed process drops its session at once, so it is offline well
  // before that, and in any case no later than offline_after plus one sweep.
  REQUIRE(Eventually([&] { return !IsOnline(central, "edge-1"); }, 3500ms, &took));
  INFO("offline after " << took.count() << " ms");
  CHECK(took <= 3500ms);
}

TEST_CASE("C-5 with central down the streamer keeps serving, and re-registers within 5 s") {
  auto dir = MakeTempDir("c5");
  auto central = StartCentral(dir);
  REQUIRE(Http("PATCH", central.http, kApi + "/config", R"({"trusted_proxies": ["127.0.0.0/8"]})")
              .status == 200);
  auto node = StartStreamer(central.grpc, "edge-1");
  auto trusted = [&] {
    auto r = Http("GET", node.http, "/whoami", "", {{"X-Forwarded-For", "198.51.100.9"}});
    return r.status == 200 && r.Json()["client"] == "198.51.100.9";
  };
  REQUIRE(Eventually(trusted, 5s));
  std::string http = central.http, grpc = central.grpc;
  central.process->Signal(SIGKILL);
  central.process->Wait();

  // Static stability: still serving, on the last configuration.
  for (int i = 0; i < 10; ++i) REQUIRE(trusted());
  // The node notices the lost session at its next report.
  CHECK(Eventually(
      [&] { return Http("GET", node.http, "/status").Json()["central_connected"] == false; }, 3s));
  CHECK(trusted());

  // Central down long enough for the node's backoff to reach its cap (100 ms doubling to
  // 4 s takes six failed attempts), observed on the node's own counter.
  auto reconnects = [&] {
    auto body = Http("GET", node.http, "/metrics").body;
    auto at = body.find("\nmeshwork_central_reconnects_total ");
    return at == std::string::npos ? 0.0 : std::stod(body.substr(at + 35));
  };
  REQUIRE(Eventually([&] { return reconnects() >= 7; }, 20s));
  auto restarted = StartCentral(dir, http, grpc);
  std::chrono::milliseconds took{0};
  REQUIRE(Eventually([&] { return IsOnline(restarted, "edge-1"); }, 8s, &took));
  INFO("re-registered and online " << took.count() << " ms after central was ready");
  CHECK(took <= 5000ms);
  CHECK(trusted());
}

TEST_CASE("C-6 kill -9 central during 1 000 synced writes loses no acknowledged write") {
  auto dir = MakeTempDir("c6");
  auto central = StartCentral(dir);
  std::vector<std::string> acknowledged;
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (int i = 0; i < 1000 && !stop.load(); ++i) {
      std::string id = "node-" + std::to_string(i);
      auto r = Http("PUT", central.http, kApi + "/streamers/" + id,
                    R"({"hostname": "h)" + std::to_string(i) + R"(.example.net", "role": "edge"})");
      if (r.status == 201) acknowledged.push_back(id);
      if (r.status == 0) break;  // central is gone
    }
  });
  // Kill it in the middle of the writes.
  REQUIRE(Eventually(
      [&] {
        auto r = Http("GET", central.http, kApi + "/config");
        return r.status == 200 && r.Json()["revision"].get<int>() >= 300;
      },
      60s));
  central.process->Signal(SIGKILL);
  central.process->Wait();
  writer.join();
  INFO(acknowledged.size() << " writes acknowledged before the kill");
  // Well into the run (the write whose commit made revision 300 may still be on its way
  // back to the writer when the kill lands).
  REQUIRE(acknowledged.size() >= 250);
  REQUIRE(acknowledged.size() < 1000);

  auto restarted = StartCentral(dir);
  auto list = Http("GET", restarted.http, kApi + "/streamers").Json()["streamers"];
  std::set<std::string> present;
  for (const auto& s : list) present.insert(s["id"].get<std::string>());
  for (const auto& id : acknowledged) CHECK(present.count(id) == 1);
  auto revision = Http("GET", restarted.http, kApi + "/config").Json()["revision"].get<size_t>();
  CHECK(revision >= acknowledged.size());
}

TEST_CASE("T-4 a trusted_proxies change reaches a streamer's /whoami within 2 s, no restart") {
  auto dir = MakeTempDir("t4");
  auto central = StartCentral(dir);
  auto node = StartStreamer(central.grpc, "edge-1");
  REQUIRE(Eventually([&] { return IsOnline(central, "edge-1"); }, 5s));
  auto client = [&] {
    return Http("GET", node.http, "/whoami", "", {{"X-Forwarded-For", "203.0.113.50"}})
        .Json()["client"]
        .get<std::string>();
  };
  REQUIRE(client() == "127.0.0.1");  // T-3: nothing trusted by default

  REQUIRE(Http("PATCH", central.http, kApi + "/config", R"({"trusted_proxies": ["127.0.0.1/32"]})")
              .status == 200);
  std::chrono::milliseconds took{0};
  REQUIRE(Eventually([&] { return client() == "203.0.113.50"; }, 2s, &took));
  INFO("applied in " << took.count() << " ms");

  // The publish listener resolves with the same list (T-1: every listener).
  auto pub = Http("GET", node.publish, "/whoami", "", {{"X-Forwarded-For", "203.0.113.51"}});
  CHECK(pub.Json()["client"] == "203.0.113.51");

  REQUIRE(Http("PATCH", central.http, kApi + "/config", R"({"trusted_proxies": null})").status ==
          200);
  REQUIRE(Eventually([&] { return client() == "127.0.0.1"; }, 2s));
}

TEST_CASE("T-5 an invalid CIDR over HTTP is a 400 naming the element and changes nothing") {
  auto dir = MakeTempDir("t5");
  auto central = StartCentral(dir);
  REQUIRE(Http("PATCH", central.http, kApi + "/config", R"({"trusted_proxies": ["10.0.0.0/8"]})")
              .status == 200);
  auto before = Http("GET", central.http, kApi + "/config").Json();
  auto bad = Http("PATCH", central.http, kApi + "/config",
                  R"({"trusted_proxies": ["192.0.2.10/32", "10.1.1.1/16"]})");
  REQUIRE(bad.status == 400);
  auto err = bad.Json()["error"];
  CHECK(err["status"] == 400);
  CHECK(err["code"] == "invalid_argument");
  CHECK(err["field"] == "trusted_proxies[1]");
  CHECK(err["message"].get<std::string>().find("host bits") != std::string::npos);
  CHECK(Http("GET", central.http, kApi + "/config").Json() == before);
}

TEST_CASE("M-1 streamer API: PUT creates, PATCH merges, DELETE removes, errors name fields") {
  auto dir = MakeTempDir("m1");
  auto central = StartCentral(dir);
  auto put = Http("PUT", central.http, kApi + "/streamers/edge-2",
                  R"({"hostname": "edge-2.example.net", "role": "edge", "zone": "office-2",
                      "cdn": {"playback_session_limit": 2000}})");
  REQUIRE(put.status == 201);
  CHECK(put.Json()["cdn"]["playback_bandwidth_kbit"].is_null());
  CHECK(Http("PUT", central.http, kApi + "/streamers/edge-2",
             R"({"hostname": "edge-2.example.net", "role": "edge"})")
            .status == 200);

  auto patched = Http("PATCH", central.http, kApi + "/streamers/edge-2",
                      R"({"cdn": {"playback_session_limit": 0}})");
  REQUIRE(patched.status == 200);
  CHECK(patched.Json()["cdn"]["playback_session_limit"] == 0);
  CHECK(patched.Json()["hostname"] == "edge-2.example.net");

  struct Case {
    std::string method, body, field;
  };
  std::vector<Case> cases = {
      {"PATCH", R"({"colour": "blue"})", "colour"},
      {"PATCH", R"({"cdn": {"playback_session_limit": -1}})", "cdn.playback_session_limit"},
      {"PATCH", R"({"cdn": {"speed": null}})", "cdn.speed"},
      {"PATCH", R"({"role": "router"})", "role"},
      {"PATCH", R"({"role": 5})", "role"},
      {"PUT", R"({"role": "edge"})", "hostname"},
      {"PATCH", R"({"zone": "Office 2"})", "zone"},
      {"PATCH", "{not json", "body"},
  };
  auto before = Http("GET", central.http, kApi + "/streamers/edge-2").Json();
  for (const auto& c : cases) {
    auto r = Http(c.method, central.http, kApi + "/streamers/edge-2", c.body);
    INFO(c.method << " " << c.body << " → " << r.body);
    CHECK(r.status == 400);
    CHECK(r.Json()["error"]["field"] == c.field);
  }
  auto after = Http("GET", central.http, kApi + "/streamers/edge-2").Json();
  after.erase("status");
  before.erase("status");
  CHECK(after == before);

  CHECK(Http("GET", central.http, kApi + "/streamers/nope").status == 404);
  CHECK(Http("PATCH", central.http, kApi + "/streamers/nope", "{}").status == 404);
  CHECK(Http("POST", central.http, kApi + "/streamers/edge-2", "{}").status == 405);
  REQUIRE(Http("DELETE", central.http, kApi + "/streamers/edge-2").status == 204);
  CHECK(Http("DELETE", central.http, kApi + "/streamers/edge-2").status == 404);
}

TEST_CASE("M-4 promtool accepts both binaries' /metrics") {
  auto dir = MakeTempDir("m4");
  auto central = StartCentral(dir);
  auto node = StartStreamer(central.grpc, "edge-1");
  REQUIRE(Eventually([&] { return IsOnline(central, "edge-1"); }, 5s));
  for (const auto& address : {central.http, node.http, node.publish}) {
    auto r = Http("GET", address, "/metrics");
    REQUIRE(r.status == 200);
    CHECK(r.body.find("meshwork_http_connections") != std::string::npos);
    std::string file = dir + "/metrics.txt";
    FILE* f = std::fopen(file.c_str(), "w");
    std::fwrite(r.body.data(), 1, r.body.size(), f);
    std::fclose(f);
    std::string cmd = "promtool check metrics < " + file + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    std::string out;
    char buf[512];
    while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    int rc = pclose(p);
    INFO("promtool on " << address << ": " << out);
    CHECK(rc == 0);
  }
  auto metric = [&](const std::string& line) {
    return Http("GET", central.http, "/metrics").body.find(line) != std::string::npos;
  };
  CHECK(Eventually([&] { return metric("\nmeshwork_nodes{state=\"online\"} 1\n"); }, 2s));
  CHECK(metric("meshwork_http_requests_total{listener=\"http\",method=\"GET\",status=\"200\"}"));
  auto c = Http("GET", central.http, "/metrics").body;
  CHECK(c.find("meshwork_heartbeats_total") != std::string::npos);
  CHECK(c.find("meshwork_config_revision") != std::string::npos);
}

}  // namespace
}  // namespace meshwork::testing
