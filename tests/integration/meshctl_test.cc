// M-6: tools/meshctl against a real central and streamer on loopback: tables and --json, the
// token from a flag, a file or the environment, and the exit codes scripts rely on.
#include <sys/socket.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "nlohmann/json.hpp"
#include "tests/integration/harness.h"
#include "tests/integration/media_harness.h"
#include "tests/test_paths.h"

namespace meshwork::testing {
namespace {

const std::string kMeshctl = SourcePath("tools/meshctl");
const std::string kMeshctlToken = "meshctl-test-token-0123456789abcdef";

struct MeshctlCluster {
  std::string dir = MakeTempDir("meshctl");
  std::string token_file = dir + "/api-token";
  Central central;
  Streamer streamer;
  MeshctlCluster() {
    std::ofstream(token_file) << kMeshctlToken << "\n";
    central =
        StartCentral(dir + "/db", "127.0.0.1:0", "127.0.0.1:0", {"--api_token_file=" + token_file});
    streamer = StartStreamer(central.grpc, "edge-1", "edge");
  }
  // Runs meshctl against this central with `args`; stdout and stderr together.
  std::pair<int, std::string> Run(const std::string& args, const std::string& env = "") {
    return RunCommand(env + " MESHWORK_CENTRAL=" + central.http + " " + kMeshctl + " " + args +
                      " 2>&1");
  }
};

int ExitCode(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }

TEST_CASE("M-6 meshctl lists streamers as a table and as JSON, with the token from a file") {
  MeshctlCluster c;
  REQUIRE(Eventually(
      [&] {
        auto [status, out] = c.Run("--token-file " + c.token_file + " --json streamers");
        if (ExitCode(status) != 0) return false;
        auto body = nlohmann::json::parse(out, nullptr, false);
        return body.is_object() && body["streamers"].size() == 1 &&
               body["streamers"][0]["status"]["online"] == true;
      },
      20s));
  auto [status, out] = c.Run("--token-file " + c.token_file + " streamers");
  INFO(out);
  CHECK(ExitCode(status) == 0);
  CHECK(out.find("ID") != std::string::npos);
  CHECK(out.find("ONLINE") != std::string::npos);
  CHECK(out.find("edge-1") != std::string::npos);
  CHECK(out.find("yes") != std::string::npos);
}

TEST_CASE("M-6 meshctl writes objects, shows them, and names the bad field of a refused one") {
  MeshctlCluster c;
  const std::string token = "--token " + kMeshctlToken;
  auto [put_status, put_out] =
      c.Run(token + " put /zones/office '{\"routes\": [\"10.20.0.0/16\"]}'");
  INFO(put_out);
  CHECK(ExitCode(put_status) == 0);
  auto [status, out] = c.Run(token + " zones");
  INFO(out);
  CHECK(ExitCode(status) == 0);
  CHECK(out.find("office") != std::string::npos);
  CHECK(out.find("10.20.0.0/16") != std::string::npos);
  // Nothing partial is written: the zone list is unchanged after a refusal.
  auto [bad_status, bad_out] = c.Run(token + " put /zones/lab '{\"networks\": []}'");
  INFO(bad_out);
  CHECK(ExitCode(bad_status) == 1);
  CHECK(bad_out.find("400") != std::string::npos);
  CHECK(bad_out.find("networks") != std::string::npos);
  auto [list_status, list] = c.Run(token + " --json zones");
  auto zones = nlohmann::json::parse(list, nullptr, false);
  REQUIRE(zones.is_object());
  CHECK(zones["zones"].size() == 1);
  // A stream, its invalidation, and a route query that central refuses (no node has it).
  CHECK(ExitCode(c.Run(token + " put /streams/ch1 '{\"placement\": {\"streamers\": "
                               "[\"edge-1\"]}}'")
                     .first) == 0);
  auto [streams_status, streams] = c.Run(token + " streams");
  CHECK(ExitCode(streams_status) == 0);
  CHECK(streams.find("ch1") != std::string::npos);
  CHECK(ExitCode(c.Run(token + " invalidate ch1").first) == 0);
  auto [route_status, route] = c.Run(token + " routes ch1 --client 10.20.1.1");
  INFO(route);
  CHECK(ExitCode(route_status) == 1);
  CHECK(route.find("503") != std::string::npos);
}

TEST_CASE("CS-4 M-6 meshctl drains a streamer and undoes it") {
  MeshctlCluster c;
  const std::string token = "--token " + kMeshctlToken;
  REQUIRE(Eventually([&] { return ExitCode(c.Run(token + " drain edge-1").first) == 0; }, 20s));
  auto [status, out] = c.Run(token + " drain edge-1");
  INFO(out);
  CHECK(out.find("edge-1: draining") != std::string::npos);
  auto body = Http("GET", c.central.http, "/central/api-v4/streamers/edge-1", "",
                   {{"Authorization", "Bearer " + kMeshctlToken}})
                  .Json();
  CHECK(body["drain"] == true);
  auto [undo_status, undo] = c.Run(token + " drain edge-1 --undo");
  INFO(undo);
  CHECK(ExitCode(undo_status) == 0);
  CHECK(undo.find("edge-1: taking viewers") != std::string::npos);
  auto [list_status, list] = c.Run(token + " streamers");
  CHECK(list.find("DRAIN") != std::string::npos);
  // An unknown streamer: the API's 404, exit 1.
  CHECK(ExitCode(c.Run(token + " drain nobody").first) == 1);
}

TEST_CASE("M-6 meshctl exit codes: no or wrong token 4, unreachable 3, usage 2") {
  MeshctlCluster c;
  auto [none_status, none_out] = c.Run("zones");
  INFO(none_out);
  CHECK(ExitCode(none_status) == 4);
  CHECK(none_out.find("401") != std::string::npos);
  CHECK(none_out.find("token") != std::string::npos);
  CHECK(ExitCode(c.Run("zones", "MESHWORK_TOKEN=wrong-token-wrong-token").first) == 4);
  // The environment variable carries a good token too.
  CHECK(ExitCode(c.Run("zones", "MESHWORK_TOKEN=" + kMeshctlToken).first) == 0);
  auto [down_status, down_out] =
      RunCommand(kMeshctl + " --central 127.0.0.1:" + std::to_string(FreePort(SOCK_STREAM)) +
                 " --token x zones 2>&1");
  INFO(down_out);
  CHECK(ExitCode(down_status) == 3);
  CHECK(down_out.find("unreachable") != std::string::npos);
  CHECK(ExitCode(c.Run("--token x no-such-command").first) == 2);
  CHECK(ExitCode(c.Run("--token-file /nonexistent/token zones").first) == 2);
}

}  // namespace
}  // namespace meshwork::testing
