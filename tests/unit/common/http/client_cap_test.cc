// the per-client connection cap of an HTTP listener (max_connections_per_client).
#include <catch2/catch.hpp>
#include <memory>
#include <vector>

#include "tests/unit/common/http/server_test_util.h"

namespace meshwork::http::client_cap_test {
namespace {

using namespace test;

// A connection that got its answer to GET /hello (admitted), or nullopt when refused.
std::unique_ptr<RawConnection> Admitted(uint16_t port, const char* source) {
  auto conn = std::make_unique<RawConnection>(port, 0, source);
  // Not Write: a refused connection may be closed before the request goes (no exception).
  conn->WriteFor("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n", 2000ms);
  auto res = conn->Read();
  if (!res || res->result() != Status::ok) return nullptr;
  return conn;
}

// Admitted within a second: after a close, the server may take a moment to see it and give
// the place back.
std::unique_ptr<RawConnection> AdmittedAgain(uint16_t port, const char* source) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (auto conn = Admitted(port, source)) return conn;
    std::this_thread::sleep_for(20ms);
  }
  return nullptr;
}

// meshwork_http_refused_client_connections_total of the listener.
double RefusedForClient(prometheus::Registry& registry) {
  for (const auto& family : registry.Collect()) {
    if (family.name == "meshwork_http_refused_client_connections_total") {
      return family.metric.at(0).counter.value;
    }
  }
  return -1;
}

TEST_CASE("R-3 a client holding max_connections_per_client is refused one more, others are not") {
  auto options = SmallOptions();
  options.max_connections_per_client = 3;
  prometheus::Registry registry;
  options.registry = &registry;
  auto server = StartServer(options, DefaultRouter());
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(Admitted(server->port(), "127.0.0.1"));
    REQUIRE(held.back());
  }
  RawConnection over(server->port(), 0, "127.0.0.1");
  auto busy = over.Read();
  REQUIRE(busy);
  CheckErrorBody(*busy, 503, "unavailable");
  CHECK(over.ClosedByPeer());
  CHECK(RefusedForClient(registry) == 1);

  // Another address is another client.
  auto other = Admitted(server->port(), "127.0.0.2");
  CHECK(other);

  // The held connections still work; closing one gives its place back (the server may see
  // the close a moment later).
  held[0]->Write("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  auto again = held[0]->Read();
  REQUIRE(again);
  CHECK(again->result() == Status::ok);
  held.pop_back();
  CHECK(AdmittedAgain(server->port(), "127.0.0.1"));
  server->Stop();
}

TEST_CASE("R-3 a trusted proxy is not held to the per-client connection cap") {
  auto options = SmallOptions();
  options.max_connections_per_client = 1;
  auto parsed = net::CidrSet::Parse({"127.0.0.2/32"}, "trusted_proxies");
  REQUIRE(parsed.ok());
  auto trusted = std::make_shared<const net::CidrSet>(*parsed);
  options.trusted_proxies = [trusted]() -> const net::CidrSet* { return trusted.get(); };
  auto server = StartServer(options, DefaultRouter());
  // The proxy (127.0.0.2) speaks for many viewers: three connections at once.
  std::vector<std::unique_ptr<RawConnection>> proxy;
  for (int i = 0; i < 3; ++i) {
    proxy.push_back(Admitted(server->port(), "127.0.0.2"));
    CHECK(proxy.back());
  }
  // Any other client still has one.
  auto first = Admitted(server->port(), "127.0.0.1");
  CHECK(first);
  CHECK_FALSE(Admitted(server->port(), "127.0.0.1"));
  server->Stop();
}

TEST_CASE("R-3 a connection taken over by HTTP/2 holds one place under the per-client cap") {
  auto options = SmallOptions();
  options.max_connections_per_client = 1;
  auto server = StartServer(options, DefaultRouter());
  auto h2 = std::make_unique<RawConnection>(server->port(), 0, "127.0.0.1");
  // The HTTP/2 preface (prior knowledge) and an empty SETTINGS: the session is handed over.
  const std::string settings_frame("\x00\x00\x00\x04\x00\x00\x00\x00\x00", 9);
  h2->Write(std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") + settings_frame);
  // The server's SETTINGS shows the HTTP/2 session runs.
  char head[9];
  boost::system::error_code ec;
  asio::read(h2->socket(), asio::buffer(head, sizeof head), ec);
  REQUIRE_FALSE(ec);
  CHECK(head[3] == 0x4);

  // Its client has no second place.
  RawConnection over(server->port(), 0, "127.0.0.1");
  auto busy = over.Read();
  REQUIRE(busy);
  CHECK(busy->result() == Status::service_unavailable);

  // Once it closes, its one place is back (given back once: a second release would abort).
  h2.reset();
  CHECK(AdmittedAgain(server->port(), "127.0.0.1"));
  server->Stop();
}

}  // namespace
}  // namespace meshwork::http::client_cap_test
