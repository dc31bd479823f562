// The HTTP server's answer framing: JSON errors, bodiless answers, framing fields, HEAD,
// pipelining.
#include <catch2/catch.hpp>

#include "tests/unit/common/http/server_test_util.h"

namespace meshwork::http {
namespace {

using namespace test;

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

TEST_CASE(
    "RFC 9110 204 and 304 answers end at their header without framing fields, whatever body a "
    "handler gave") {
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
    // Nor a Transfer-Encoding: a client would wait for a chunked body (RFC 9112 §6.1).
    CHECK(raw.find("Transfer-Encoding") == std::string::npos);
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
