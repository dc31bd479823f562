// Authentication of the control channel and of the admin API (M-3, R-7): a real central and
// raw gRPC / HTTP clients on loopback.
#include <grpcpp/grpcpp.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "meshwork/v1/control.grpc.pb.h"
#include "tests/integration/harness.h"
#include "tests/raw_connection.h"

namespace meshwork::testing {
namespace {

// Replaces the file's content the way a careful operator does: write aside, rename over.
void WriteFile(const std::string& path, const std::string& text) {
  const std::string next = path + ".next";
  {
    std::ofstream out(next, std::ios::binary | std::ios::trunc);
    out << text;
  }
  std::filesystem::permissions(
      next, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  std::filesystem::rename(next, path);
}

// The value of one sample line of central's /metrics ("-1" when absent).
double Metric(const Central& c, const std::string& sample) {
  auto r = Http("GET", c.http, "/metrics");
  std::istringstream lines(r.body);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(sample + " ", 0) == 0) return std::stod(line.substr(sample.size() + 1));
  }
  return -1;
}

meshwork::v1::RegisterRequest Registration(const std::string& id) {
  meshwork::v1::RegisterRequest request;
  request.set_node_id(id);
  request.set_version("test");
  request.set_protocol_version(1);
  request.set_role(meshwork::v1::ROLE_EDGE);
  request.set_hostname(id + ".example.net");
  return request;
}

// `token`: nullptr sends no authorization metadata at all.
grpc::Status Register(meshwork::v1::Control::Stub& stub, const std::string& id,
                      const char* authorization, meshwork::v1::RegisterResponse* response) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  if (authorization) context.AddMetadata("authorization", authorization);
  return stub.Register(&context, Registration(id), response);
}

struct SessionOutcome {
  grpc::Status status;
  int updates = 0;
  meshwork::v1::ConfigUpdate first;
};

// Opens a Session, sends the hello, and reads. An authenticated session is cancelled after
// its first update; a refused one must end by itself.
SessionOutcome OpenSession(meshwork::v1::Control::Stub& stub, const std::string& id,
                           const char* authorization) {
  SessionOutcome out;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  if (authorization) context.AddMetadata("authorization", authorization);
  auto stream = stub.Session(&context);
  meshwork::v1::SessionMessage hello;
  hello.mutable_hello()->set_node_id(id);
  hello.mutable_hello()->set_revision(0);
  stream->Write(hello);  // may already fail on a refused stream
  meshwork::v1::ConfigUpdate update;
  if (stream->Read(&update)) {
    ++out.updates;
    out.first = update;
    context.TryCancel();
    while (stream->Read(&update)) ++out.updates;
  }
  out.status = stream->Finish();
  return out;
}

TEST_CASE("M-3 an unauthenticated Register gets no configuration and no viewing key") {
  auto dir = MakeTempDir("m3-register");
  // No --cluster-token-file: central makes <data-dir>/cluster-token (secure by default).
  auto central = StartCentral(dir, "127.0.0.1:0", "127.0.0.1:0", {"--cluster-token-file="});
  const std::string token_path = dir + "/cluster-token";
  struct stat st {};
  REQUIRE(::stat(token_path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  std::string token = ReadFile(token_path);
  REQUIRE(!token.empty());
  REQUIRE(token.back() == '\n');
  token.pop_back();
  CHECK(token.size() == 43);  // 32 random bytes, base64url
  CHECK(token != ClusterToken());

  auto stub = meshwork::v1::Control::NewStub(
      grpc::CreateChannel(central.grpc, grpc::InsecureChannelCredentials()));
  const std::string good = "Bearer " + token;

  SECTION("without, or with a wrong token: UNAUTHENTICATED, nothing in the response") {
    for (const char* authorization :
         {static_cast<const char*>(nullptr), "Bearer wrong-token", "Basic dXNlcjpwYXNz", "Bearer ",
          static_cast<const char*>(good.c_str()) + 1 /* "earer …" */}) {
      INFO("authorization: " << (authorization ? authorization : "(none)"));
      meshwork::v1::RegisterResponse response;
      auto status = Register(*stub, "edge-intruder", authorization, &response);
      CHECK(status.error_code() == grpc::StatusCode::UNAUTHENTICATED);
      CHECK_FALSE(response.has_snapshot());
      CHECK(response.ByteSizeLong() == 0);
    }
    // The token of another cluster (the harness's) is wrong here too.
    meshwork::v1::RegisterResponse response;
    const std::string other = "Bearer " + ClusterToken();
    CHECK(Register(*stub, "edge-intruder", other.c_str(), &response).error_code() ==
          grpc::StatusCode::UNAUTHENTICATED);
    // Nothing was stored, and the refusals are counted.
    CHECK(Http("GET", central.http, kApi + "/streamers/edge-intruder").status == 404);
    CHECK(Metric(central, R"(meshwork_control_auth_failures_total{rpc="register"})") == 6);
  }

  SECTION("with the token: the snapshot, viewing keys included") {
    meshwork::v1::RegisterResponse response;
    auto status = Register(*stub, "edge-1", good.c_str(), &response);
    REQUIRE(status.ok());
    CHECK(response.snapshot().full());
    CHECK(response.snapshot().revision() > 0);
    REQUIRE(response.snapshot().viewing_keys().keys_size() > 0);
    CHECK(!response.snapshot().viewing_keys().keys(0).secret().empty());
    CHECK(Http("GET", central.http, kApi + "/streamers/edge-1").status == 200);
    CHECK(Metric(central, R"(meshwork_control_auth_failures_total{rpc="register"})") == 0);
  }

  SECTION("a streamer with the token comes online, one with another token does not") {
    const std::string copy = MakeTempDir("m3-streamer") + "/cluster-token";
    WriteFile(copy, token + "\n");
    auto good_node =
        StartStreamer(central.grpc, "edge-good", "edge", {"--cluster-token-file=" + copy});
    auto bad_node = StartStreamer(central.grpc, "edge-bad", "edge",
                                  {"--cluster-token-file=" + ClusterTokenFile()});
    REQUIRE(Eventually(
        [&] {
          auto r = Http("GET", central.http, kApi + "/streamers/edge-good");
          return r.status == 200 && r.Json()["status"]["online"] == true;
        },
        5s));
    // The refused node keeps retrying (each attempt counted) and is never created.
    REQUIRE(Eventually(
        [&] {
          return Metric(central, R"(meshwork_control_auth_failures_total{rpc="register"})") >= 2;
        },
        5s));
    CHECK(Http("GET", central.http, kApi + "/streamers/edge-bad").status == 404);
    CHECK(Eventually(
        [&] {
          return ReadFile(bad_node.process->log_path()).find("refused the token") !=
                 std::string::npos;
        },
        5s));
  }

  // R-7: the token is in no log line, no metric, no API answer.
  CHECK(ReadFile(dir + ".central.log").find(token) == std::string::npos);
  CHECK(ReadFile(dir + ".central.log").find(token_path) != std::string::npos);
  CHECK(Http("GET", central.http, "/metrics").body.find(token) == std::string::npos);
  CHECK(Http("GET", central.http, kApi + "/config").body.find(token) == std::string::npos);
  CHECK(Http("GET", central.http, kApi + "/streamers").body.find(token) == std::string::npos);
}

TEST_CASE("M-3 an unauthenticated Session is ended at once and gets no configuration") {
  auto dir = MakeTempDir("m3-session");
  auto central = StartCentral(dir);
  auto stub = meshwork::v1::Control::NewStub(
      grpc::CreateChannel(central.grpc, grpc::InsecureChannelCredentials()));
  const std::string good = "Bearer " + ClusterToken();
  meshwork::v1::RegisterResponse registered;
  REQUIRE(Register(*stub, "edge-1", good.c_str(), &registered).ok());

  for (const char* authorization :
       {static_cast<const char*>(nullptr), "Bearer not-the-token", "bearer"}) {
    INFO("authorization: " << (authorization ? authorization : "(none)"));
    const auto started = std::chrono::steady_clock::now();
    SessionOutcome refused = OpenSession(*stub, "edge-1", authorization);
    CHECK(refused.status.error_code() == grpc::StatusCode::UNAUTHENTICATED);
    CHECK(refused.updates == 0);
    // Ended by central, not by the 5 s deadline.
    CHECK(std::chrono::steady_clock::now() - started < 2s);
  }
  CHECK(Metric(central, R"(meshwork_control_auth_failures_total{rpc="session"})") == 3);
  // No session was attached: the node that registered is still not online.
  auto status = Http("GET", central.http, kApi + "/streamers/edge-1").Json()["status"];
  CHECK(status["online"] == false);

  SessionOutcome accepted = OpenSession(*stub, "edge-1", good.c_str());
  CHECK(accepted.updates >= 1);
  CHECK(accepted.first.viewing_keys().keys_size() > 0);
  CHECK(accepted.status.error_code() == grpc::StatusCode::CANCELLED);
  CHECK(Metric(central, R"(meshwork_control_auth_failures_total{rpc="session"})") == 3);
}

TEST_CASE("M-3 a node with a token of its own is registered and attached with that token alone") {
  auto dir = MakeTempDir("m3-own");
  const std::string tokens = dir + ".cluster-tokens";
  WriteFile(tokens, "cluster-wide-token\nnode=edge-1 edge-1-own-token\n");
  auto central =
      StartCentral(dir, "127.0.0.1:0", "127.0.0.1:0", {"--cluster-token-file=" + tokens});
  auto stub = meshwork::v1::Control::NewStub(
      grpc::CreateChannel(central.grpc, grpc::InsecureChannelCredentials()));
  const char* cluster = "Bearer cluster-wide-token";
  const char* own = "Bearer edge-1-own-token";
  meshwork::v1::RegisterResponse response;
  // The cluster-wide token can no longer speak for edge-1 (its addresses stay its own)...
  auto taken = Register(*stub, "edge-1", cluster, &response);
  CHECK(taken.error_code() == grpc::StatusCode::PERMISSION_DENIED);
  CHECK(taken.error_message().find("edge-1") != std::string::npos);
  CHECK_FALSE(response.has_snapshot());
  CHECK(Http("GET", central.http, kApi + "/streamers/edge-1").status == 404);
  // ...and edge-1's token speaks for edge-1 alone.
  CHECK(Register(*stub, "edge-2", own, &response).error_code() ==
        grpc::StatusCode::PERMISSION_DENIED);
  CHECK(Http("GET", central.http, kApi + "/streamers/edge-2").status == 404);
  CHECK(Metric(central, R"(meshwork_control_auth_failures_total{rpc="register"})") == 2);
  REQUIRE(Register(*stub, "edge-1", own, &response).ok());
  CHECK(response.snapshot().full());
  REQUIRE(Register(*stub, "edge-2", cluster, &response).ok());  // no token of its own
  // A Session as edge-1 needs edge-1's token too.
  SessionOutcome refused = OpenSession(*stub, "edge-1", cluster);
  CHECK(refused.status.error_code() == grpc::StatusCode::PERMISSION_DENIED);
  CHECK(refused.updates == 0);
  SessionOutcome accepted = OpenSession(*stub, "edge-1", own);
  CHECK(accepted.updates >= 1);

  // A streamer whose file holds both lines presents its own to central and comes online.
  const std::string node_tokens = MakeTempDir("m3-own-node") + "/cluster-token";
  WriteFile(node_tokens, "cluster-wide-token\nnode=edge-3 edge-3-own-token\n");
  WriteFile(tokens,
            "cluster-wide-token\nnode=edge-1 edge-1-own-token\nnode=edge-3 edge-3-own-token\n");
  auto node =
      StartStreamer(central.grpc, "edge-3", "edge", {"--cluster-token-file=" + node_tokens});
  CHECK(Eventually([&] { return IsOnline(central, "edge-3"); }, 10s));
  CHECK(ReadFile(dir + ".central.log").find("own-token") == std::string::npos);  // R-7
}

TEST_CASE(
    "M-3 admin API without token → 401, with token → 200, rotated token accepted without "
    "restart") {
  auto dir = MakeTempDir("m3-api");
  const std::string tokens = dir + ".api-token";
  WriteFile(tokens, "first-api-token\n");
  auto central = StartCentral(dir, "127.0.0.1:0", "127.0.0.1:0", {"--api-token-file=" + tokens});
  auto get = [&](const std::string& path, const std::string& token) {
    std::vector<std::pair<std::string, std::string>> headers;
    if (!token.empty()) headers.emplace_back("Authorization", "Bearer " + token);
    return Http("GET", central.http, kApi + path, "", headers);
  };

  auto refused = get("/streamers", "");
  CHECK(refused.status == 401);
  CHECK(refused.headers["WWW-Authenticate"].rfind("Bearer", 0) == 0);
  CHECK(refused.Json()["error"]["status"] == 401);
  CHECK(refused.Json()["error"]["code"] == "unauthenticated");
  auto wrong = get("/streamers", "second-api-token");
  CHECK(wrong.status == 401);
  CHECK(wrong.headers["WWW-Authenticate"].find("invalid_token") != std::string::npos);
  CHECK(Http("GET", central.http, kApi + "/config", "", {{"Authorization", "first-api-token"}})
            .status == 401);  // no scheme
  CHECK(get("/streamers", "first-api-token").status == 200);

  // Writes: refused ones store nothing.
  CHECK(Http("PUT", central.http, kApi + "/zones/z1", R"({"routes": ["10.0.0.0/8"]})").status ==
        401);
  CHECK(get("/zones/z1", "first-api-token").status == 404);
  CHECK(Http("PUT", central.http, kApi + "/zones/z1", R"({"routes": ["10.0.0.0/8"]})",
             {{"Authorization", "Bearer first-api-token"}})
            .status == 201);
  for (const std::string path : {"/config", "/zones", "/zones/z1", "/streams", "/vod",
                                 "/ott-groups", "/ott-key", "/alerts", "/routes/ch1"}) {
    INFO(path);
    CHECK(get(path, "").status == 401);
  }
  CHECK(Http("POST", central.http, kApi + "/ott-key/rotate").status == 401);
  CHECK(Http("DELETE", central.http, kApi + "/zones/z1").status == 401);
  // The refusal says whether a token came at all.
  CHECK(refused.Json()["error"]["message"].get<std::string>().find("needs a token") !=
        std::string::npos);
  CHECK(wrong.Json()["error"]["message"].get<std::string>().find("not accepted") !=
        std::string::npos);
  // R-3: a write without a token is refused on its header, before its body is read: a client
  // announcing a megabyte (and sending none of it) gets its 401 at once and holds none of the
  // listener's body budget; so does a body to a path no route takes (405: the viewers' GET route).
  for (const std::string& head : std::vector<std::string>{
           "PUT " + kApi + "/zones/z2 HTTP/1.1\r\nHost: a\r\nContent-Length: 1048576\r\n\r\n",
           "PUT " + kApi + "/zones/z2 HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n",
           "POST /no-such/route HTTP/1.1\r\nHost: a\r\nContent-Length: 1048576\r\n\r\n"}) {
    INFO(head);
    RawConnection conn(Port(central.http));
    conn.Write(head);
    auto answer = conn.Read(2000ms);
    REQUIRE(answer);
    CHECK(answer->result_int() == (head.rfind("POST", 0) == 0 ? 405 : 401));
    CHECK(conn.ClosedByPeer());
  }
  CHECK(get("/zones/z2", "first-api-token").status == 404);

  // Never needed: metrics and viewer routing.
  CHECK(Http("GET", central.http, "/metrics").status == 200);
  const int viewer = Http("GET", central.http, "/ch1/index.m3u8").status;
  CHECK(viewer != 401);
  CHECK((viewer == 404 || viewer == 503));

  // Rotation: add the new token, both work; drop the old one, only the new one does.
  WriteFile(tokens, "first-api-token\nsecond-api-token\n");
  REQUIRE(Eventually([&] { return get("/zones", "second-api-token").status == 200; }, 5s));
  CHECK(get("/zones", "first-api-token").status == 200);
  WriteFile(tokens, "second-api-token\n");
  REQUIRE(Eventually([&] { return get("/zones", "first-api-token").status == 401; }, 5s));
  CHECK(get("/zones", "second-api-token").status == 200);
  CHECK(central.process->running());

  // R-7: no token in central's log.
  const std::string log = ReadFile(dir + ".central.log");
  CHECK(log.find("first-api-token") == std::string::npos);
  CHECK(log.find("second-api-token") == std::string::npos);
}

}  // namespace
}  // namespace meshwork::testing
