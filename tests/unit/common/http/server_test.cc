#include "common/http/server.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "boost/asio.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/http.hpp"
#include "common/http/client.h"
#include "common/http/content.h"
#include "common/http/response.h"
#include "common/http/router.h"
#include "common/net/cidr.h"
#include "common/status/status_map.h"
#include "nlohmann/json.hpp"
#include "tests/raw_connection.h"

namespace meshwork::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;
using nlohmann::json;
using namespace std::chrono_literals;

using meshwork::testing::RawConnection;

constexpr size_t kHeaderLimit = 1024;
constexpr uint64_t kBodyLimit = 1024;

ServerOptions SmallOptions() {
  ServerOptions options;
  options.name = "test";
  options.listen = "127.0.0.1:0";
  options.threads = 2;
  options.header_limit_bytes = kHeaderLimit;
  options.body_limit_bytes = kBodyLimit;
  options.idle_timeout = 30s;
  options.read_timeout = 10s;
  return options;
}

// Routes used by most tests: GET /hello, POST /echo, GET /client, GET|PUT /items/{id}.
Router DefaultRouter() {
  Router router;
  router.Add({Verb::get}, "/hello", [](RequestContext&, Responder responder) {
    responder.Send(MakeResponse(Status::ok, "hello", "text/plain"));
  });
  router.Add({Verb::post}, "/echo", [](RequestContext& ctx, Responder responder) {
    responder.Send(MakeResponse(Status::ok, ctx.request.body(), "text/plain"));
  });
  router.Add({Verb::get}, "/client", [](RequestContext& ctx, Responder responder) {
    responder.Send(JsonResponse(Status::ok, {{"client", ctx.client.ToString()},
                                             {"peer", ctx.peer.ToString()},
                                             {"peer_trusted", ctx.peer_trusted}}));
  });
  router.Add({Verb::get, Verb::put}, "/items/{id}", [](RequestContext& ctx, Responder responder) {
    responder.Send(JsonResponse(Status::ok, {{"id", ctx.params.at(0)}}));
  });
  return router;
}

std::unique_ptr<Server> StartServer(ServerOptions options, Router router) {
  auto server = Server::Start(std::move(options), std::move(router));
  INFO(server.status().ToString());
  REQUIRE(server.ok());
  return std::move(*server);
}

Response Get(const Server& server, std::string target, Verb method = Verb::get,
             std::vector<std::pair<std::string, std::string>> headers = {}, std::string body = "") {
  ClientRequest request;
  request.host = "127.0.0.1";
  request.port = server.port();
  request.method = method;
  request.target = std::move(target);
  request.headers = std::move(headers);
  request.body = std::move(body);
  request.timeout = 5000ms;
  auto response = Fetch(std::move(request));
  INFO(response.status().ToString());
  REQUIRE(response.ok());
  return std::move(*response);
}

// Checks the M-1 error body of `response`.
void CheckErrorBody(const Response& response, int status, std::string_view code) {
  INFO(response.body());
  CHECK(response.result_int() == static_cast<unsigned>(status));
  CHECK(response[beast_http::field::content_type] == "application/json");
  json body = json::parse(response.body(), nullptr, false);
  REQUIRE(body.is_object());
  REQUIRE(body.contains("error"));
  CHECK(body["error"]["status"] == status);
  CHECK(body["error"]["code"] == std::string(code));
  CHECK(body["error"]["message"].is_string());
  CHECK_FALSE(body["error"]["message"].get<std::string>().empty());
}

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
  CHECK(server->counters().bytes_in.load() > 0);
  CHECK(server->counters().bytes_out.load() > 0);
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
  options.trusted_proxies = [trusted] { return trusted; };
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
  options.trusted_proxies = [trusted] { return trusted; };
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
    options.trusted_proxies = [trusted] { return trusted; };
    auto server = StartServer(options, DefaultRouter());
    json seen = ClientJson(*server, {{"X-Forwarded-For", "203.0.113.7"}});
    CHECK(seen["client"] == "127.0.0.1");
    CHECK(seen["peer_trusted"] == false);
  }
  SECTION("a set that does not contain the peer") {
    auto options = SmallOptions();
    auto trusted = Set({"10.0.0.0/8"});
    options.trusted_proxies = [trusted] { return trusted; };
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
  std::shared_ptr<const net::CidrSet> current = Set({});
  options.trusted_proxies = [&] {
    std::lock_guard<std::mutex> lock(mu);
    return current;
  };
  auto server = StartServer(options, DefaultRouter());
  CHECK(ClientJson(*server, {{"X-Forwarded-For", "203.0.113.7"}})["client"] == "127.0.0.1");
  {
    std::lock_guard<std::mutex> lock(mu);
    current = Set({"127.0.0.1/32"});
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

namespace meshwork::http {
namespace {

TEST_CASE("S-16 a chunked response carries its pieces in order, written from another thread") {
  Router router;
  std::thread producer;
  router.Add({Verb::get}, "/pieces", [&producer](RequestContext&, Responder r) {
    Response header{Status::ok, 11};
    header.set(beast_http::field::content_type, "video/mp4");
    auto writer = r.StartChunked(std::move(header));
    REQUIRE(writer);
    // The pieces come later, from a thread of the producer's own.
    producer = std::thread([writer] {
      for (const char* piece : {"moof-1|", "mdat-1|", "moof-2|", "mdat-2"}) {
        writer->Write(std::make_shared<const std::string>(piece));
      }
      writer->Finish();
      writer->Write(std::make_shared<const std::string>("ignored after Finish"));
    });
  });
  router.Add({Verb::get}, "/after", [](RequestContext&, Responder r) {
    r.Send(MakeResponse(Status::ok, "next", "text/plain"));
  });
  auto server = StartServer(SmallOptions(), std::move(router));
  RawConnection conn(server->port());
  conn.Write("GET /pieces HTTP/1.1\r\nHost: x\r\n\r\n");
  auto res = conn.Read();
  producer.join();
  REQUIRE(res);
  CHECK(res->result_int() == 200);
  CHECK(res->chunked());
  CHECK(res->body() == "moof-1|mdat-1|moof-2|mdat-2");
  // The connection stays usable after the last chunk.
  conn.Write("GET /after HTTP/1.1\r\nHost: x\r\n\r\n");
  auto next = conn.Read();
  REQUIRE(next);
  CHECK(next->body() == "next");
}

// L-17: media objects kept as 256 KiB chunks, written from the chunks (scatter-gather).

constexpr size_t kChunk = 256 * 1024;
constexpr size_t kMediaSize = 3 * kChunk + 17;

// The bytes of the test object: no period that lines up with the chunk size.
const std::string& MediaBytes() {
  static const std::string bytes = [] {
    std::string out(kMediaSize, '\0');
    for (size_t i = 0; i < out.size(); ++i) {
      out[i] = static_cast<char>((static_cast<uint32_t>(i) * 2654435761u) >> 13);
    }
    return out;
  }();
  return bytes;
}

// MediaBytes() cut into fresh chunks of kChunk bytes (the last one shorter).
SharedBuffers MediaChunks() {
  SharedBuffers body;
  for (size_t at = 0; at < kMediaSize; at += kChunk) {
    body.Append(std::make_shared<const std::string>(MediaBytes().substr(at, kChunk)));
  }
  return body;
}

// GET|HEAD /media answers with SendMedia; the handler keeps no reference to the chunks, and
// `last_chunk` lets a test see when the server lets go of them.
struct MediaRoute {
  std::mutex mu;
  std::weak_ptr<const std::string> last_chunk;

  Router MakeRouter() {
    Router router = DefaultRouter();
    router.Add({Verb::get}, "/media", [this](RequestContext& ctx, Responder r) {
      SharedBuffers body = MediaChunks();
      {
        std::lock_guard<std::mutex> lock(mu);
        last_chunk = body.chunks.back();
      }
      Response extra;
      extra.set(beast_http::field::cache_control, "max-age=60");
      SendMedia(ctx.request, r, std::move(body), "video/mp4", std::move(extra));
    });
    return router;
  }
  bool ChunksReleased() {
    std::lock_guard<std::mutex> lock(mu);
    return last_chunk.expired();
  }
};

// Waits up to 2 s for `condition` (set by a write's completion, which may trail the bytes).
template <typename Fn>
bool Eventually(Fn condition) {
  for (int i = 0; i < 200 && !condition(); ++i) std::this_thread::sleep_for(10ms);
  return condition();
}

TEST_CASE("L-17 scatter-gather response sends the chunks byte for byte") {
  MediaRoute route;
  auto options = SmallOptions();
  auto server = StartServer(options, route.MakeRouter());
  uint64_t out_before = server->counters().bytes_out.load();
  Response res = Get(*server, "/media");
  CHECK(res.result() == Status::ok);
  CHECK(res[beast_http::field::content_length] == std::to_string(kMediaSize));
  CHECK(res[beast_http::field::content_type] == "video/mp4");
  CHECK(res[beast_http::field::accept_ranges] == "bytes");
  CHECK(res[beast_http::field::cache_control] == "max-age=60");
  CHECK(res[beast_http::field::server] == "meshwork");
  CHECK(res.find(beast_http::field::content_range) == res.end());
  REQUIRE(res.body().size() == kMediaSize);
  CHECK(res.body() == MediaBytes());
  // Bytes out count the header and the whole body; the chunks are let go after the write.
  CHECK(Eventually([&] { return server->counters().bytes_out.load() - out_before > kMediaSize; }));
  CHECK(Eventually([&] { return route.ChunksReleased(); }));
}

TEST_CASE("L-17 a Range across chunk boundaries on a scatter-gather response answers 206") {
  MediaRoute route;
  auto server = StartServer(SmallOptions(), route.MakeRouter());
  struct Case {
    std::string range;
    uint64_t first, last;
  };
  for (const Case& c : std::vector<Case>{
           {"bytes=262100-262200", 262100, 262200},           // across the first boundary
           {"bytes=100-600000", 100, 600000},                 // across two boundaries
           {"bytes=-100", kMediaSize - 100, kMediaSize - 1},  // into the 17-byte last chunk
           {"bytes=786000-", 786000, kMediaSize - 1},         // open-ended
           {"bytes=262144-262144", 262144, 262144},           // first byte of a chunk
           {"bytes=0-99999999", 0, kMediaSize - 1},           // past the end: cut
       }) {
    INFO(c.range);
    Response res = Get(*server, "/media", Verb::get, {{"Range", c.range}});
    CHECK(res.result() == Status::partial_content);
    CHECK(res[beast_http::field::content_range] == "bytes " + std::to_string(c.first) + "-" +
                                                       std::to_string(c.last) + "/" +
                                                       std::to_string(kMediaSize));
    CHECK(res[beast_http::field::content_length] == std::to_string(c.last - c.first + 1));
    CHECK(res.body() == MediaBytes().substr(c.first, c.last - c.first + 1));
  }
}

TEST_CASE("L-17 HEAD on a scatter-gather response sends the length and no body") {
  MediaRoute route;
  auto server = StartServer(SmallOptions(), route.MakeRouter());
  RawConnection conn(server->port());
  conn.Write("HEAD /media HTTP/1.1\r\nHost: x\r\n\r\n");
  auto head = conn.Read(5000ms, /*head=*/true);
  REQUIRE(head);
  CHECK(head->result() == Status::ok);
  CHECK((*head)[beast_http::field::content_length] == std::to_string(kMediaSize));
  CHECK((*head)[beast_http::field::server] == "meshwork");
  CHECK(head->body().empty());
  conn.Write("HEAD /media HTTP/1.1\r\nHost: x\r\nRange: bytes=10-19\r\n\r\n");
  auto ranged = conn.Read(5000ms, /*head=*/true);
  REQUIRE(ranged);
  CHECK(ranged->result() == Status::partial_content);
  CHECK((*ranged)[beast_http::field::content_length] == "10");
  // No body bytes followed either header: the next response on the connection is intact.
  conn.Write("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  auto get = conn.Read();
  REQUIRE(get);
  CHECK(get->body() == "hello");
}

TEST_CASE("L-17 two scatter-gather responses on one keep-alive connection are both answered") {
  MediaRoute route;
  auto server = StartServer(SmallOptions(), route.MakeRouter());
  RawConnection conn(server->port());
  // Pipelined: the second request is already waiting when the first write completes.
  conn.Write(
      "GET /media HTTP/1.1\r\nHost: x\r\n\r\n"
      "GET /media HTTP/1.1\r\nHost: x\r\nRange: bytes=262143-262145\r\n\r\n");
  auto first = conn.Read();
  REQUIRE(first);
  CHECK(first->result() == Status::ok);
  CHECK(first->keep_alive());
  CHECK(first->body() == MediaBytes());
  auto second = conn.Read();
  REQUIRE(second);
  CHECK(second->result() == Status::partial_content);
  CHECK(second->keep_alive());
  CHECK(second->body() == MediaBytes().substr(262143, 3));

  // Connection: close is honoured.
  conn.Write("GET /media HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  auto third = conn.Read();
  REQUIRE(third);
  CHECK(third->body() == MediaBytes());
  CHECK_FALSE(third->keep_alive());
  CHECK(conn.ClosedByPeer());
}

TEST_CASE("L-17 an unsatisfiable range on a scatter-gather response answers 416") {
  MediaRoute route;
  auto server = StartServer(SmallOptions(), route.MakeRouter());
  RawConnection conn(server->port());
  conn.Write("GET /media HTTP/1.1\r\nHost: x\r\nRange: bytes=786449-\r\n\r\n");
  auto res = conn.Read();
  REQUIRE(res);
  CHECK(res->result() == Status::range_not_satisfiable);
  CHECK((*res)[beast_http::field::content_range] == "bytes */786449");
  CHECK((*res)[beast_http::field::cache_control] == "max-age=60");
  CHECK((*res)[beast_http::field::content_length] == "0");
  CHECK(res->body().empty());
  CHECK(res->keep_alive());
  conn.Write("GET /media HTTP/1.1\r\nHost: x\r\nRange: bytes=0-0\r\n\r\n");
  auto next = conn.Read();
  REQUIRE(next);
  CHECK(next->result() == Status::partial_content);
  CHECK(next->body() == MediaBytes().substr(0, 1));
}

// A sink that only knows Complete: SendBuffers falls back to a copied string body.
class CapturingSink final : public Responder::Sink {
 public:
  explicit CapturingSink(std::optional<Response>* out) : out_(out) {}
  void Complete(Response response) override { *out_ = std::move(response); }

 private:
  std::optional<Response>* out_;
};

TEST_CASE("L-17 a sink without scatter-gather gets the slice copied into a string body") {
  std::optional<Response> got;
  Responder r(std::make_shared<CapturingSink>(&got));
  Response header{Status::ok, 11};
  header.set(beast_http::field::content_type, "video/mp4");
  header.body() = "ignored";
  r.SendBuffers(std::move(header), MediaChunks(), kChunk - 5, 10);
  CHECK(r.sent());
  REQUIRE(got);
  CHECK(got->result() == Status::ok);
  CHECK((*got)[beast_http::field::content_type] == "video/mp4");
  CHECK((*got)[beast_http::field::content_length] == "10");
  CHECK(got->body() == MediaBytes().substr(kChunk - 5, 10));

  // A slice past the end is cut to the bytes the chunks hold.
  got.reset();
  Responder tail(std::make_shared<CapturingSink>(&got));
  tail.SendBuffers(Response{Status::ok, 11}, MediaChunks(), kMediaSize - 3, 1000);
  REQUIRE(got);
  CHECK(got->body() == MediaBytes().substr(kMediaSize - 3));
}

TEST_CASE("L-17 SendMedia and MediaResponse answer ranges alike") {
  auto whole = std::make_shared<const std::string>(MediaBytes());
  for (std::string range : {"", "bytes=262100-262200", "bytes=-17", "bytes=5-", "bytes=786449-",
                            "bytes=-0", "bytes=1-2,5-6", "items=0-1"}) {
    INFO(range);
    Request request{Verb::get, "/media", 11};
    if (!range.empty()) request.set(beast_http::field::range, range);
    Response expected = MediaResponse(request, whole, "video/mp4");
    std::optional<Response> got;
    Responder r(std::make_shared<CapturingSink>(&got));
    SendMedia(request, r, MediaChunks(), "video/mp4");
    REQUIRE(got);
    CHECK(got->result() == expected.result());
    CHECK((*got)[beast_http::field::content_range] == expected[beast_http::field::content_range]);
    CHECK((*got)[beast_http::field::content_length] == expected[beast_http::field::content_length]);
    CHECK((*got)[beast_http::field::accept_ranges] == "bytes");
    CHECK(got->body() == expected.body());
  }
}

}  // namespace
}  // namespace meshwork::http

namespace meshwork::http {
namespace {

TEST_CASE("M-1 error bodies are valid JSON whatever bytes the message holds") {
  auto status =
      WithField(absl::NotFoundError("no such resource: /a\"b\\c\x01\xff\xc3\xa9"), "path");
  Response res = ErrorResponse(status);
  auto body = nlohmann::json::parse(res.body());
  CHECK(body["error"]["status"] == 404);
  CHECK(body["error"]["code"] == "not_found");
  CHECK(body["error"]["field"] == "path");
  CHECK(body["error"]["message"] == "no such resource: /a\"b\\c\x01\xef\xbf\xbd\xc3\xa9");
  CHECK(res[beast_http::field::content_type] == "application/json");
  auto plain = nlohmann::json::parse(
      ErrorResponse(Status::payload_too_large, "payload_too_large", "too big").body());
  CHECK(plain == nlohmann::json::parse(
                     R"({"error":{"code":"payload_too_large","message":"too big","status":413}})"));
}

// Everything the server sends until it closes the connection (the request asks it to).
std::string ReadToClose(RawConnection& conn) {
  std::string out;
  char buffer[4096];
  boost::system::error_code ec;
  while (!ec) {
    size_t n = conn.socket().read_some(asio::buffer(buffer), ec);
    out.append(buffer, n);
  }
  return out;
}

Router FramingRouter() {
  Router router;
  router.Add({Verb::get}, "/empty/{code}", [](RequestContext& ctx, Responder responder) {
    // A careless handler: a body on an answer that cannot have one.
    Response res{static_cast<Status>(std::stoi(ctx.params.at(0))), 11};
    res.body() = "dropped";
    responder.Send(std::move(res));
  });
  router.Add({Verb::get}, "/own-fields", [](RequestContext&, Responder responder) {
    Response res = MakeResponse(Status::ok, "four", "text/plain");
    res.set(beast_http::field::content_length, "999");
    res.set(beast_http::field::connection, "close");
    res.set(beast_http::field::server, "handler");
    res.set("X-Kept", "yes");
    responder.Send(std::move(res));
  });
  router.Add({Verb::head}, "/declared", [](RequestContext&, Responder responder) {
    Response res{Status::ok, 11};
    res.set(beast_http::field::content_type, "video/mp2t");
    res.content_length(1234);
    responder.Send(std::move(res));
  });
  return router;
}

TEST_CASE("RFC 9110 204 and 304 answers end at their header, whatever body a handler gave") {
  auto server = StartServer(SmallOptions(), FramingRouter());
  for (const char* code : {"204", "304"}) {
    INFO(code);
    RawConnection conn(server->port());
    conn.Write(std::string("GET /empty/") + code + " HTTP/1.1\r\nHost: x\r\n\r\n" + "GET /empty/" +
               code + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    std::string raw = ReadToClose(conn);
    // Two answers, each only a header: the body never reaches the wire.
    CHECK(raw.find("dropped") == std::string::npos);
    CHECK(raw.find("Content-Length") == std::string::npos);
    size_t first = raw.find(std::string("HTTP/1.1 ") + code);
    REQUIRE(first == 0);
    size_t second = raw.find(std::string("HTTP/1.1 ") + code, 1);
    REQUIRE(second != std::string::npos);
    CHECK(raw.substr(second - 4, 4) == "\r\n\r\n");
    CHECK(raw.ends_with("\r\n\r\n"));
  }
}

TEST_CASE("RFC 9112 the server writes the framing fields itself: a handler's are replaced") {
  auto server = StartServer(SmallOptions(), FramingRouter());
  RawConnection conn(server->port());
  conn.Write("GET /own-fields HTTP/1.1\r\nHost: x\r\n\r\n");
  auto first = conn.Read();
  REQUIRE(first);
  CHECK(first->body() == "four");
  CHECK((*first)[beast_http::field::content_length] == "4");
  CHECK(first->keep_alive());  // the handler's Connection: close is not the session's choice
  CHECK((*first)["X-Kept"] == "yes");
  CHECK(first->count(beast_http::field::server) == 1);
  CHECK((*first)[beast_http::field::server] == "meshwork");
  CHECK(first->count(beast_http::field::date) == 1);
  conn.Write("GET /own-fields HTTP/1.1\r\nHost: x\r\n\r\n");
  auto second = conn.Read();
  REQUIRE(second);
  CHECK(second->body() == "four");
}

TEST_CASE("HEAD keeps the Content-Length a handler declared for its empty body") {
  auto server = StartServer(SmallOptions(), FramingRouter());
  RawConnection conn(server->port());
  conn.Write("HEAD /declared HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  std::string raw = ReadToClose(conn);
  CHECK(raw.starts_with("HTTP/1.1 200 OK\r\n"));
  CHECK(raw.find("Content-Length: 1234\r\n") != std::string::npos);
  CHECK(raw.find("Connection: close\r\n") != std::string::npos);
  CHECK(raw.ends_with("\r\n\r\n"));  // and not one body byte
}

TEST_CASE("Pipelined requests on one connection are answered in order") {
  auto server = StartServer(SmallOptions(), DefaultRouter());
  RawConnection conn(server->port());
  std::string requests;
  for (int i = 0; i < 20; ++i) {
    requests += "GET /items/" + std::to_string(i) + " HTTP/1.1\r\nHost: x\r\n\r\n";
  }
  conn.Write(requests);
  for (int i = 0; i < 20; ++i) {
    auto r = conn.Read();
    REQUIRE(r);
    CHECK(json::parse(r->body()) == json{{"id", std::to_string(i)}});
  }
}

}  // namespace
}  // namespace meshwork::http
