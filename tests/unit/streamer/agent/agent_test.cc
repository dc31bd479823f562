// C-1 C-5: the agent's reconnect backoff against an in-process gRPC central (loopback, port 0)
// whose sessions end as soon as they open.
#include "streamer/agent/agent.h"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "common/crypto/token_file.h"
#include "common/time/clock.h"
#include "tests/unit/temp_dir.h"

namespace meshwork::streamer {
namespace agent_test {
namespace {

using namespace std::chrono_literals;

// Registers every node, then ends each session right after its hello (as central does to a
// session replaced by a newer one, or one whose update queue overflowed).
class RefusingCentral final : public v1::Control::Service {
 public:
  grpc::Status Register(grpc::ServerContext*, const v1::RegisterRequest*,
                        v1::RegisterResponse* response) override {
    registers.fetch_add(1);
    response->mutable_snapshot()->set_revision(1);
    response->mutable_snapshot()->set_full(true);
    response->set_report_interval_ms(20);
    return grpc::Status::OK;
  }
  grpc::Status Session(
      grpc::ServerContext*,
      grpc::ServerReaderWriter<v1::ConfigUpdate, v1::SessionMessage>* stream) override {
    v1::SessionMessage hello;
    stream->Read(&hello);
    return grpc::Status(grpc::StatusCode::ABORTED, "replaced by a newer session");
  }
  std::atomic<int> registers{0};
};

TEST_CASE("C-1 a session central ends at once backs off like a refused one, not every 100 ms") {
  RefusingCentral central;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&central);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  REQUIRE(server);
  REQUIRE(port > 0);

  TempDir dir;
  const std::string token_path = (dir.path() / "token").string();
  {
    FILE* f = std::fopen(token_path.c_str(), "w");
    REQUIRE(f);
    std::fputs("0123456789abcdef0123456789abcdef\n", f);
    std::fclose(f);
  }
  auto token = crypto::TokenFile::Open(token_path, RealClock::Get());
  REQUIRE(token.ok());
  AgentOptions options;
  options.central = "127.0.0.1:" + std::to_string(port);
  options.cluster_token = token->get();
  options.registration.set_node_id("edge-1");
  options.backoff_min = 100ms;
  options.backoff_max = 4000ms;
  Snapshot<NodeConfig> config(std::make_shared<NodeConfig>());
  Agent agent(
      options, &config, [](v1::LoadReport&) {}, nullptr);
  agent.Start();
  // Let it try for 3 s. With the backoff doubling from 100 ms (each wait a random point in
  // [delay/2, delay]) the attempts are at most 7; reset to 100 ms after each session (which
  // lasts about one 20 ms report interval here) they would be 25 or more.
  std::this_thread::sleep_for(3s);
  agent.Stop();
  server->Shutdown();
  const int attempts = central.registers.load();
  INFO("Register calls in 3 s: " << attempts);
  CHECK(attempts >= 2);
  CHECK(attempts <= 8);
}

}  // namespace
}  // namespace agent_test
}  // namespace meshwork::streamer
