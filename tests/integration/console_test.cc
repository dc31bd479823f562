// M-7: the web console in headless Chromium (tests/e2e/console.mjs) against a real central
// (admin token on), two streamers and an ffmpeg source: login, every screen, the player page
// playing through central's redirect, and the serving node shown offline after kill -9.
// Screenshots of each screen go to the test's temporary directory (printed), not the repo.
#include <atomic>
#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "common/crypto/jwt.h"
#include "nlohmann/json.hpp"
#include "tests/integration/harness.h"
#include "tests/integration/media_harness.h"
#include "tests/test_paths.h"

namespace meshwork::testing {
namespace {

const std::string kConsoleToken = "console-test-token-0123456789abcdef";

HttpResult Api(const Central& central, const std::string& method, const std::string& path,
               const std::string& body = "") {
  return Http(method, central.http, kApi + path, body,
              {{"Authorization", "Bearer " + kConsoleToken}});
}

TEST_CASE(
    "M-7 CS-4 the console logs in, shows the cluster, drains a streamer, plays a stream and sees "
    "its node die") {
  const std::string dir = MakeTempDir("console");
  const std::string token_file = dir + "/api-token";
  std::ofstream(token_file) << kConsoleToken << "\n";
  Central central =
      StartCentral(dir + "/db", "127.0.0.1:0", "127.0.0.1:0",
                   {"--api_token_file=" + token_file, "--console_dir=" + ConsoleDir()});
  // The console's own files are served without the token; the data behind them needs it.
  auto page = Http("GET", central.http, "/console/");
  REQUIRE(page.status == 200);
  CHECK(page.body.find("console.js") != std::string::npos);
  CHECK(Http("GET", central.http, "/console/vendor/hls.min.js").status == 200);
  CHECK(Http("GET", central.http, "/console/../db/CURRENT").status == 404);
  CHECK(Http("GET", central.http, kApi + "/streamers").status == 401);

  REQUIRE(Api(central, "PUT", "/zones/local", R"({"routes": ["127.0.0.0/8"]})").status == 201);
  Streamer ingest = StartStreamer(central.grpc, "ingest-1", "ingest");
  Streamer edge = StartStreamer(central.grpc, "edge-1", "edge");
  for (const char* id : {"ingest-1", "edge-1"}) {
    REQUIRE(Eventually(
        [&] { return Api(central, "GET", std::string("/streamers/") + id).status == 200; }, 10s));
    REQUIRE(Api(central, "PATCH", std::string("/streamers/") + id, R"({"zone": "local"})").status ==
            200);
  }
  auto put = Api(central, "PUT", "/streams/demo",
                 R"({"placement": {"streamers": ["ingest-1"]}, "inputs": ["publish://"]})");
  INFO(put.body);
  REQUIRE((put.status == 201 || put.status == 200));
  // An OTT group on both nodes that nothing feeds: neither member is working,
  // so the group has problems and no eligible backup, which raises alerts 70 and 78.
  put = Api(central, "PUT", "/streams/reserve",
            R"({"placement": {"streamers": ["ingest-1", "edge-1"]}, "inputs": ["publish://"],
                "ott": {"enabled": true, "group": "reserve"}})");
  INFO(put.body);
  REQUIRE(put.status == 201);
  auto push = PushFile(SourceTs(60), ingest.publish, "demo");
  REQUIRE(Eventually([&] { return Http("GET", ingest.http, "/demo/index.ll.m3u8").status == 200; },
                     20s));

  // A-9: a token-protected stream with one login watching it, and a revoked login, for the
  // Sessions screen. The viewer reloads every second while the console runs (a session ends
  // two target durations after its last request).
  constexpr char kSecretB64[] = "bWVzaHdvcmstY29uc29sZS10ZXN0LXNlY3JldC0zMmJ5dGVz";
  REQUIRE(Api(central, "PUT", "/access-keys/k1",
              nlohmann::json{{"alg", "HS256"}, {"secret", kSecretB64}}.dump())
              .status == 201);
  REQUIRE(Api(central, "PUT", "/streams/members",
              R"({"placement": {"streamers": ["ingest-1"]}, "inputs": ["publish://"],
                  "access": {"mode": "token"}})")
              .status == 201);
  REQUIRE(Api(central, "POST", "/sessions/revoke", R"({"login": "mallory"})").status == 201);
  auto members_push = PushFile(SourceTs(60), ingest.publish, "members");
  const std::string member_token = crypto::SignJwtHs256(
      nlohmann::json{{"exp", std::chrono::duration_cast<std::chrono::seconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                     .count() +
                                 600},
                     {"sub", "member-42"}}
          .dump(),
      "k1", "meshwork-console-test-secret-32bytes");
  const std::string member_url = "/members/index.m3u8?token=" + member_token;
  REQUIRE(Eventually([&] { return Http("GET", ingest.http, member_url).status == 200; }, 20s));
  std::atomic<bool> watching{true};
  std::thread member([&] {
    while (watching) {
      Http("GET", ingest.http, member_url, "", {{"User-Agent", "member-player"}});
      std::this_thread::sleep_for(1s);
    }
  });
  absl::Cleanup stop_member = [&] {
    watching = false;
    member.join();
  };

  const std::string shots = dir + "/screenshots";
  auto [rc, out] = RunCommand(
      "node " + SourcePath("tests/e2e/console.mjs") + " --central http://" + central.http +
      " --token " + kConsoleToken +
      " --stream demo --zone local --group reserve --play-seconds 10 --nodes ingest-1=" +
      std::to_string(ingest.process->pid()) + ",edge-1=" + std::to_string(edge.process->pid()) +
      " --login member-42 --revoked mallory --screenshots " + shots + " 2>" + dir + "/console.log");
  nlohmann::json result;
  if (auto at = out.find("RESULT "); at != std::string::npos) {
    result = nlohmann::json::parse(out.substr(at + 7), nullptr, false);
  }
  std::ifstream log_file(dir + "/console.log");
  std::string log((std::istreambuf_iterator<char>(log_file)), std::istreambuf_iterator<char>());
  INFO("console.mjs log:\n" << log);
  INFO("result: " << result.dump());
  INFO("screenshots in " << shots);
  REQUIRE(result.is_object());
  CHECK(result["failures"] == nlohmann::json::array());
  CHECK(result["console_errors"] == nlohmann::json::array());
  // Central sends a local viewer to either node (the edge relays the ingest's stream).
  CHECK((result["serving"] == "ingest-1" || result["serving"] == "edge-1"));
  CHECK(result.value("played_s", 0.0) >= 10);
  CHECK(result["screens"]["ott"].get<std::string>().find("edge-1: stream reserve is not working") !=
        std::string::npos);
  CHECK(result["screens"]["alerts"].get<std::string>().find("reserve-ott-member-problem") !=
        std::string::npos);
  CHECK(result.value("offline_after_s", 99.0) <= 5);
  CHECK(result["drained"] == "ingest-1");  // CS-4: drained and undone from the Streamers screen
  CHECK(result["ok"] == true);
  CHECK(rc == 0);
}

}  // namespace
}  // namespace meshwork::testing
