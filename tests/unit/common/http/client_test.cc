#include "common/http/client.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/http/response.h"
#include "common/http/router.h"
#include "common/http/server.h"

namespace meshwork::http {
namespace {

using namespace std::chrono_literals;

// A server with GET /hello.
std::unique_ptr<Server> StartClientTestServer(std::chrono::milliseconds idle_timeout) {
  ServerOptions options;
  options.name = "test";
  options.listen = "127.0.0.1:0";
  options.threads = 1;
  options.idle_timeout = idle_timeout;
  Router router;
  router.Add({Verb::get}, "/hello", [](RequestContext&, Responder responder) {
    responder.Send(MakeResponse(Status::ok, "hello", "text/plain"));
  });
  auto server = Server::Start(std::move(options), std::move(router));
  REQUIRE(server.ok());
  return std::move(*server);
}

ClientRequest ClientGet(const Server& server, std::string target) {
  ClientRequest request;
  request.host = "127.0.0.1";
  request.port = server.port();
  request.target = std::move(target);
  request.timeout = 5s;
  return request;
}

// Waits (≤ 5 s) for the server to have no open connection.
bool ServerIdle(const Server& server) {
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (server.counters().connections != 0) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

TEST_CASE("S-19 a kept-alive client sends sequential requests on one connection") {
  auto server = StartClientTestServer(30s);
  KeepAliveClient client;
  for (int i = 0; i < 5; ++i) {
    auto res = client.Fetch(ClientGet(*server, "/hello"));
    REQUIRE(res.ok());
    CHECK(res->body() == "hello");
  }
  CHECK(client.connections_opened() == 1);
}

TEST_CASE("S-19 a kept-alive client opens a new connection after Connection: close") {
  auto server = StartClientTestServer(30s);
  KeepAliveClient client;
  auto bye = ClientGet(*server, "/hello");
  bye.headers.emplace_back("Connection", "close");  // the server answers in kind
  auto first = client.Fetch(bye);
  REQUIRE(first.ok());
  CHECK_FALSE(first->keep_alive());
  auto second = client.Fetch(ClientGet(*server, "/hello"));
  REQUIRE(second.ok());
  CHECK(second->body() == "hello");
  CHECK(client.connections_opened() == 2);
}

TEST_CASE("S-19 a request on a connection the server closed while idle is sent again") {
  auto server = StartClientTestServer(100ms);
  KeepAliveClient client;
  REQUIRE(client.Fetch(ClientGet(*server, "/hello")).ok());
  REQUIRE(ServerIdle(*server));  // the server dropped the idle connection
  auto res = client.Fetch(ClientGet(*server, "/hello"));
  INFO(res.status().ToString());
  REQUIRE(res.ok());
  CHECK(res->body() == "hello");
  CHECK(client.connections_opened() == 2);
}

TEST_CASE("S-19 a kept-alive client reports a refused connection and a passed deadline") {
  auto server = StartClientTestServer(30s);
  uint16_t port = server->port();
  server->Stop(std::chrono::milliseconds(100));
  server.reset();
  KeepAliveClient client;
  ClientRequest request;
  request.host = "127.0.0.1";
  request.port = port;
  request.timeout = 2s;
  auto refused = client.Fetch(request);
  CHECK(absl::IsUnavailable(refused.status()));

  // A listener that accepts and never answers: the deadline ends the request.
  ServerOptions options;
  options.name = "slow";
  options.listen = "127.0.0.1:0";
  options.threads = 1;
  Router router;
  std::mutex mu;
  std::vector<Responder> parked;  // no answer within the client's deadline
  router.Add({Verb::get}, "/never", [&](RequestContext&, Responder responder) {
    std::lock_guard lock(mu);
    parked.push_back(std::move(responder));
  });
  auto slow = Server::Start(std::move(options), std::move(router));
  REQUIRE(slow.ok());
  auto request2 = ClientGet(**slow, "/never");
  request2.timeout = 1s;
  auto late = client.Fetch(request2);
  CHECK(absl::IsDeadlineExceeded(late.status()));
  std::lock_guard lock(mu);
  CHECK(parked.size() == 1);  // not sent twice
  parked.clear();
}

}  // namespace
}  // namespace meshwork::http
