// The HTTP server: routing, limits, errors, keep-alive, trusted proxies, connection caps, stop.
#include <catch2/catch.hpp>

#include "tests/unit/common/http/server_test_util.h"

namespace meshwork::http {
namespace {

using namespace test;

TEST_CASE("HTTP server answers a routed request") {
  auto server = StartServer(SmallOptions(), DefaultRouter());
  CHECK(server->port() != 0);
  CHECK(server->bound_address() == "127.0.0.1:" + std::to_string(server->port()));
  Response res = Get(*server, "/hello");
  CHECK(res.result() == Status::ok);
  CHECK(res.body() == "hello");
  CHECK(res[beast_http::field::server] == "meshwork");

  Response item = Get(*server, "/items/abc?x=1");
  CHECK(item.result() == Status::ok);
  CHECK(json::parse(item.body()) == json{{"id", "abc"}});

  Response echo = Get(*server, "/echo", Verb::post, {}, "payload");
  CHECK(echo.result() == Status::ok);
  CHECK(echo.body() == "payload");
  CHECK(server->counters().bytes_in > 0);
  CHECK(server->counters().bytes_out > 0);
}

TEST_CASE("M-1 an unknown path answers 404 with a JSON error") {
  auto server = StartServer(SmallOptions(), DefaultRouter());
  Response res = Get(*server, "/nowhere");
  CheckErrorBody(res, 404, "not_found");
}

TEST_CASE("M-1 a known path with another method answers 405 with Allow") {
  auto server = StartServer(SmallOptions(), DefaultRouter());
  Response res = Get(*server, "/items/abc", Verb::delete_);
  CheckErrorBody(res, 405, "method_not_allowed");
  CHECK(res[beast_http::field::allow] == "GET, PUT");
  Response hello = Get(*server, "/hello", Verb::post, {}, "x");
  CHECK(hello.result() == Status::method_not_allowed);
  CHECK(hello[beast_http::field::allow] == "GET");
}

TEST_CASE("R-3 an oversized request header answers 431 with a JSON error") {
  auto server = StartServer(SmallOptions(), DefaultRouter());
  RawConnection conn(server->port());
  conn.Write("GET /hello HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(2 * kHeaderLimit, 'a') +
             "\r\n\r\n");
  auto res = conn.Read();
  INFO(conn.last_error().message());
  REQUIRE(res);
  CheckErrorBody(*res, 431, "invalid_argument");
  CHECK_FALSE(res->keep_alive());
  CHECK(conn.ClosedByPeer());

  // A header just under the limit is fine.
  Response ok =
      Get(*server, "/hello", Verb::get, {{"X-Small", std::string(kHeaderLimit / 2, 'b')}});
  CHECK(ok.result() == Status::ok);
}

// Beast's parser rejects a Content-Length above body_limit while reading the header
// (error::body_limit from async_read_header): that is a 413, not a 400.
TEST_CASE("R-3 a Content-Length above the body limit answers 413") {
  auto server = StartServer(SmallOptions(), DefaultRouter());
  RawConnection conn(server->port());
  conn.Write("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: " +
             std::to_string(kBodyLimit * 100) + "\r\n\r\n");
  auto res = conn.Read();
  REQUIRE(res);
  CheckErrorBody(*res, 413, "invalid_argument");
}

TEST_CASE("R-3 a Content-Length above the body limit is refused and the connection closed") {
  auto server = StartServer(SmallOptions(), DefaultRouter());
  RawConnection conn(server->port());
  conn.Write("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: " +
             std::to_string(kBodyLimit * 100) + "\r\n\r\n");
  auto res = conn.Read();
  REQUIRE(res);
  CHECK(res->result_int() == 413);
  CHECK(res->result_int() < 500);
  CHECK_FALSE(res->keep_alive());
  CHECK(conn.ClosedByPeer());
}

TEST_CASE("R-3 a chunked body above the body limit answers 413") {
  auto server = StartServer(SmallOptions(), DefaultRouter());
  RawConnection conn(server->port());
  std::string chunk(2 * kBodyLimit, 'x');
  conn.Write("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n800\r\n" + chunk +
             "\r\n0\r\n\r\n");
  auto res = conn.Read();
  INFO(conn.last_error().message());
  REQUIRE(res);
  CheckErrorBody(*res, 413, "invalid_argument");
}

TEST_CASE("R-3 a body within the limit is accepted") {
  auto server = StartServer(SmallOptions(), DefaultRouter());
  std::string body(kBodyLimit, 'z');
  Response res = Get(*server, "/echo", Verb::post, {}, body);
  CHECK(res.result() == Status::ok);
  CHECK(res.body() == body);
}

TEST_CASE("A malformed request line answers 400 with a JSON error") {
  auto server = StartServer(SmallOptions(), DefaultRouter());
  RawConnection conn(server->port());
  conn.Write("this is not http\r\n\r\n");
  auto res = conn.Read();
  INFO(conn.last_error().message());
  REQUIRE(res);
  CheckErrorBody(*res, 400, "invalid_argument");
  CHECK(conn.ClosedByPeer());
}

TEST_CASE("A request target that is not a path answers 400") {
  auto server = StartServer(SmallOptions(), DefaultRouter());
  RawConnection conn(server->port());
  conn.Write("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n");
  auto res = conn.Read();
  REQUIRE(res);
  CheckErrorBody(*res, 400, "invalid_argument");
}

TEST_CASE("A handler may answer later from another thread") {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<Responder> held;
  std::string seen_path;
  Router router;
  router.Add({Verb::get}, "/later/{x}", [&](RequestContext& ctx, Responder responder) {
    std::lock_guard<std::mutex> lock(mu);
    seen_path = std::string(ctx.path);
    held.emplace(std::move(responder));
    cv.notify_all();
  });
  auto server = StartServer(SmallOptions(), std::move(router));

  std::thread answerer([&] {
    std::optional<Responder> responder;
    {
      std::unique_lock<std::mutex> lock(mu);
      if (!cv.wait_for(lock, 5s, [&] { return held.has_value(); })) return;
      responder = std::move(held);
      held.reset();
    }
    responder->Send(JsonResponse(Status::accepted, {{"answered", "later"}}));
  });
  Response res = Get(*server, "/later/1");
  answerer.join();
  CHECK(res.result() == Status::accepted);
  CHECK(json::parse(res.body()) == json{{"answered", "later"}});
  CHECK(seen_path == "/later/1");
}

TEST_CASE("A Responder dropped without Send answers 500") {
  Router router;
  router.Add({Verb::get}, "/forgot", [](RequestContext&, Responder) {});
  router.Add({Verb::get}, "/throws",
             [](RequestContext&, Responder) -> void { throw std::runtime_error("boom"); });
  auto server = StartServer(SmallOptions(), std::move(router));
  CheckErrorBody(Get(*server, "/forgot"), 500, "internal");
  CheckErrorBody(Get(*server, "/throws"), 500, "internal");
}

TEST_CASE("A second Send on a Responder is ignored") {
  std::atomic<int> sent_after_first{0};
  Router router;
  router.Add({Verb::get}, "/twice", [&](RequestContext&, Responder responder) {
    responder.Send(MakeResponse(Status::ok, "first", "text/plain"));
    if (responder.sent()) ++sent_after_first;
    responder.Send(MakeResponse(Status::ok, "second", "text/plain"));
  });
  auto server = StartServer(SmallOptions(), std::move(router));
  RawConnection conn(server->port());
  conn.Write("GET /twice HTTP/1.1\r\nHost: x\r\n\r\nGET /twice HTTP/1.1\r\nHost: x\r\n\r\n");
  auto first = conn.Read();
  REQUIRE(first);
  CHECK(first->body() == "first");
  auto second = conn.Read();
  REQUIRE(second);
  CHECK(second->body() == "first");
  // The handler counts after its Send returns, which may be after the client has read the
  // answer: wait (bounded) for the server thread to get there.
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (sent_after_first.load() < 2 && std::chrono::steady_clock::now() < until) {
    std::this_thread::yield();
  }
  CHECK(sent_after_first.load() == 2);
}

TEST_CASE("Keep-alive: two requests on one connection are both answered") {
  auto server = StartServer(SmallOptions(), DefaultRouter());
  RawConnection conn(server->port());
  conn.Write("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  auto first = conn.Read();
  REQUIRE(first);
  CHECK(first->result() == Status::ok);
  CHECK(first->body() == "hello");
  CHECK(first->keep_alive());

  conn.Write("GET /items/7 HTTP/1.1\r\nHost: x\r\n\r\n");
  auto second = conn.Read();
  REQUIRE(second);
  CHECK(second->result() == Status::ok);
  CHECK(json::parse(second->body()) == json{{"id", "7"}});

  // Connection: close is honoured.
  conn.Write("GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  auto third = conn.Read();
  REQUIRE(third);
  CHECK(third->result() == Status::ok);
  CHECK_FALSE(third->keep_alive());
  CHECK(conn.ClosedByPeer());
}

TEST_CASE("HEAD is answered like GET without a body") {
  auto server = StartServer(SmallOptions(), DefaultRouter());
  RawConnection conn(server->port());
  conn.Write("HEAD /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  auto head = conn.Read(5000ms, /*head=*/true);
  REQUIRE(head);
  CHECK(head->result() == Status::ok);
  CHECK((*head)[beast_http::field::content_length] == "5");
  CHECK(head->body().empty());
  // No body bytes followed: the next response on the connection is intact.
  conn.Write("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  auto get = conn.Read();
  REQUIRE(get);
  CHECK(get->body() == "hello");
}

std::shared_ptr<const net::CidrSet> Set(const std::vector<std::string>& cidrs) {
  auto set = net::CidrSet::Parse(cidrs, "trusted_proxies");
  REQUIRE(set.ok());
  return std::make_shared<const net::CidrSet>(*set);
}

json ClientJson(const Server& server, std::vector<std::pair<std::string, std::string>> headers) {
  Response res = Get(server, "/client", Verb::get, std::move(headers));
  REQUIRE(res.result() == Status::ok);
  return json::parse(res.body());
}

TEST_CASE("T-2 a trusted peer supplies the client as the last X-Forwarded-For element") {
  auto options = SmallOptions();
  auto trusted = Set({"127.0.0.0/8"});
  options.trusted_proxies = [trusted] { return trusted.get(); };
  auto server = StartServer(options, DefaultRouter());

  json seen = ClientJson(*server, {{"X-Forwarded-For", "198.51.100.1, 203.0.113.7"}});
  CHECK(seen["client"] == "203.0.113.7");
  CHECK(seen["peer"] == "127.0.0.1");
  CHECK(seen["peer_trusted"] == true);

  // Malformed or missing values fall back to the peer.
  CHECK(ClientJson(*server, {{"X-Forwarded-For", "unknown"}})["client"] == "127.0.0.1");
  CHECK(ClientJson(*server, {})["client"] == "127.0.0.1");
  // X-Real-IP is ignored.
  CHECK(ClientJson(*server, {{"X-Real-IP", "203.0.113.9"}})["client"] == "127.0.0.1");
  CHECK(ClientJson(*server, {{"X-Real-IP", "203.0.113.9"},
                             {"X-Forwarded-For", "2001:db8::7"}})["client"] == "2001:db8::7");
}

TEST_CASE("T-2 several X-Forwarded-For headers on a request to the server form one list") {
  auto options = SmallOptions();
  auto trusted = Set({"127.0.0.0/8"});
  options.trusted_proxies = [trusted] { return trusted.get(); };
  auto server = StartServer(options, DefaultRouter());
  RawConnection conn(server->port());
  conn.Write(
      "GET /client HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 198.51.100.1\r\n"
      "X-Forwarded-For: 203.0.113.5, 192.0.2.44\r\n\r\n");
  auto res = conn.Read();
  REQUIRE(res);
  CHECK(json::parse(res->body())["client"] == "192.0.2.44");
}

TEST_CASE("T-3 with no trusted proxy the client is the socket peer") {
  SECTION("an empty set") {
    auto options = SmallOptions();
    auto trusted = Set({});
    options.trusted_proxies = [trusted] { return trusted.get(); };
    auto server = StartServer(options, DefaultRouter());
    json seen = ClientJson(*server, {{"X-Forwarded-For", "203.0.113.7"}});
    CHECK(seen["client"] == "127.0.0.1");
    CHECK(seen["peer_trusted"] == false);
  }
  SECTION("a set that does not contain the peer") {
    auto options = SmallOptions();
    auto trusted = Set({"10.0.0.0/8"});
    options.trusted_proxies = [trusted] { return trusted.get(); };
    auto server = StartServer(options, DefaultRouter());
    CHECK(ClientJson(*server, {{"X-Forwarded-For", "203.0.113.7"}})["client"] == "127.0.0.1");
  }
  SECTION("no trusted-proxy function at all") {
    auto server = StartServer(SmallOptions(), DefaultRouter());
    json seen = ClientJson(*server, {{"X-Forwarded-For", "203.0.113.7"}});
    CHECK(seen["client"] == "127.0.0.1");
    CHECK(seen["peer_trusted"] == false);
  }
}

TEST_CASE("T-4 the trusted-proxy list is read per request") {
  auto options = SmallOptions();
  std::mutex mu;
  // Every set stays alive: the server may use the one it was given until its next call.
  std::vector<std::shared_ptr<const net::CidrSet>> sets = {Set({})};
  options.trusted_proxies = [&]() -> const net::CidrSet* {
    std::lock_guard<std::mutex> lock(mu);
    return sets.back().get();
  };
  auto server = StartServer(options, DefaultRouter());
  CHECK(ClientJson(*server, {{"X-Forwarded-For", "203.0.113.7"}})["client"] == "127.0.0.1");
  {
    std::lock_guard<std::mutex> lock(mu);
    sets.push_back(Set({"127.0.0.1/32"}));
  }
  CHECK(ClientJson(*server, {{"X-Forwarded-For", "203.0.113.7"}})["client"] == "203.0.113.7");
  server->Stop();
}

TEST_CASE("R-3 a connection above max_connections answers 503") {
  auto options = SmallOptions();
  options.max_connections = 1;
  auto server = StartServer(options, DefaultRouter());
  RawConnection first(server->port());
  first.Write("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  auto ok = first.Read();
  REQUIRE(ok);  // the first connection is admitted and stays open (keep-alive)
  CHECK(ok->result() == Status::ok);

  RawConnection second(server->port());
  auto busy = second.Read();
  REQUIRE(busy);
  CheckErrorBody(*busy, 503, "unavailable");
  CHECK((*busy)[beast_http::field::retry_after] == "1");
  CHECK(second.ClosedByPeer());

  // The admitted connection still works.
  first.Write("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  auto again = first.Read();
  REQUIRE(again);
  CHECK(again->result() == Status::ok);
}

TEST_CASE("Stop() with an idle keep-alive connection returns promptly") {
  auto server = StartServer(SmallOptions(), DefaultRouter());
  RawConnection conn(server->port());
  conn.Write("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  auto res = conn.Read();
  REQUIRE(res);
  REQUIRE(res->keep_alive());

  auto started = std::chrono::steady_clock::now();
  server->Stop(5000ms);
  auto took = std::chrono::steady_clock::now() - started;
  CHECK(took < 1000ms);
  CHECK(conn.ClosedByPeer(1000ms));
  server->Stop();  // idempotent
}

TEST_CASE("Stop() reaches every idle connection on every worker, after others have closed") {
  auto options = SmallOptions();
  options.threads = 3;
  auto server = StartServer(options, DefaultRouter());
  std::vector<std::unique_ptr<RawConnection>> open;
  for (int i = 0; i < 30; ++i) {
    auto conn = std::make_unique<RawConnection>(server->port());
    conn->Write("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
    auto res = conn->Read();
    REQUIRE(res);
    REQUIRE(res->keep_alive());
    // Every third one closes again, so the workers' registries have entries leaving.
    if (i % 3 != 0) open.push_back(std::move(conn));
  }
  auto started = std::chrono::steady_clock::now();
  server->Stop(5000ms);
  CHECK(std::chrono::steady_clock::now() - started < 1000ms);
  for (auto& conn : open) CHECK(conn->ClosedByPeer(1000ms));
}

TEST_CASE("R-3 a closed connection gives its slot back under max_connections") {
  auto options = SmallOptions();
  options.max_connections = 1;
  auto server = StartServer(options, DefaultRouter());
  for (int round = 0; round < 3; ++round) {
    // The server may not have seen the previous close yet: retry for a while.
    std::optional<Response> res;
    for (int attempt = 0; attempt < 50; ++attempt) {
      RawConnection conn(server->port());
      conn.Write("GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
      res = conn.Read();
      if (res && res->result() == Status::ok) break;
      std::this_thread::sleep_for(20ms);
    }
    REQUIRE(res);
    CHECK(res->result() == Status::ok);
  }
}

TEST_CASE("Server::Start rejects bad listen addresses") {
  auto options = SmallOptions();
  options.listen = "nonsense";
  auto bad = Server::Start(options, Router());
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
  options.listen = "not-an-ip:80";
  bad = Server::Start(options, Router());
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);

  auto first = StartServer(SmallOptions(), Router());
  options.listen = first->bound_address();
  auto taken = Server::Start(options, Router());
  // SO_REUSEADDR does not allow two listeners on one port.
  REQUIRE_FALSE(taken.ok());
  CHECK(taken.status().code() == absl::StatusCode::kUnavailable);
}

TEST_CASE("SplitHostPort accepts ADDR:PORT and [V6]:PORT") {
  auto v4 = SplitHostPort("127.0.0.1:8080");
  REQUIRE(v4.ok());
  CHECK(v4->first == "127.0.0.1");
  CHECK(v4->second == 8080);
  auto v6 = SplitHostPort("[::1]:443");
  REQUIRE(v6.ok());
  CHECK(v6->first == "::1");
  CHECK(v6->second == 443);
  CHECK_FALSE(SplitHostPort("127.0.0.1").ok());
  CHECK_FALSE(SplitHostPort("127.0.0.1:").ok());
  CHECK_FALSE(SplitHostPort(":80").ok());
  CHECK_FALSE(SplitHostPort("127.0.0.1:65536").ok());
  CHECK_FALSE(SplitHostPort("127.0.0.1:8o").ok());
}

}  // namespace
}  // namespace meshwork::http
