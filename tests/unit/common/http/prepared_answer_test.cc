// Prepared answers (P-5, P-3): rendered once, written as bytes over HTTP/1.1, and as a
// Response through any other sink (h2).
#include "common/http/prepared_answer.h"

#include <catch2/catch.hpp>

#include "common/http/response.h"
#include "tests/unit/common/http/server_test_util.h"

namespace meshwork::http {
namespace prepared_answer_test {
namespace {

using namespace test;

std::shared_ptr<const PreparedAnswer> NotYet() {
  Response res = ErrorResponse(Status::not_found, "not_found", "not published yet");
  res.set(beast_http::field::access_control_allow_origin, "*");
  // The session writes these itself: a handler's own are dropped.
  res.set(beast_http::field::server, "other");
  res.set(beast_http::field::connection, "keep-alive");
  return std::make_shared<const PreparedAnswer>(std::move(res));
}

AnswerFields Ttl(int64_t ms) {
  AnswerFields f;
  f.Add("Cache-Control", "max-age=", ms / 1000);
  f.Add("X-Cache-TTL-Ms", "", ms);
  return f;
}

TEST_CASE("P-5 L-8 a prepared 404 is written with its per-request fields, framed by the session") {
  auto answer = NotYet();
  Router router;
  router.Add({Verb::get, Verb::head}, "/future",
             [answer](RequestContext&, Responder r) { r.SendPrepared(answer, Ttl(3250)); });
  router.Add({Verb::get}, "/other",
             [answer](RequestContext&, Responder r) { r.SendPrepared(answer, Ttl(999)); });
  auto server = StartServer(SmallOptions(), std::move(router));
  RawConnection conn(server->port());
  conn.Write("GET /future HTTP/1.1\r\nHost: x\r\n\r\n");
  auto res = conn.Read();
  REQUIRE(res);
  CHECK(res->result_int() == 404);
  CHECK((*res)[beast_http::field::content_type] == "application/json");
  CHECK((*res)[beast_http::field::access_control_allow_origin] == "*");
  CHECK((*res)[beast_http::field::cache_control] == "max-age=3");
  CHECK((*res)["X-Cache-TTL-Ms"] == "3250");
  CHECK((*res)[beast_http::field::server] == "meshwork");
  CHECK(res->count(beast_http::field::server) == 1);
  CHECK_FALSE((*res)[beast_http::field::date].empty());
  CHECK(res->body() == answer->body());
  CHECK(res->body().find("not published yet") != std::string::npos);
  CHECK((*res)[beast_http::field::content_length] == std::to_string(answer->body().size()));
  CHECK(res->keep_alive());

  // HEAD: the same header with the body's length, no body; the connection stays in step.
  conn.Write("HEAD /future HTTP/1.1\r\nHost: x\r\n\r\n");
  auto head = conn.Read(5000ms, /*head=*/true);
  REQUIRE(head);
  CHECK(head->result_int() == 404);
  CHECK((*head)[beast_http::field::content_length] == std::to_string(answer->body().size()));
  CHECK(head->body().empty());
  // The same prepared answer, other fields: nothing of the first request's left over.
  conn.Write("GET /other HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  auto last = conn.Read();
  REQUIRE(last);
  CHECK((*last)[beast_http::field::cache_control] == "max-age=0");
  CHECK((*last)["X-Cache-TTL-Ms"] == "999");
  CHECK(last->count("X-Cache-TTL-Ms") == 1);
  CHECK_FALSE(last->keep_alive());
  CHECK(conn.ClosedByPeer());
}

TEST_CASE("P-5 a sink without prepared bytes gets the same answer as a Response") {
  std::optional<Response> got;
  Responder r(std::make_shared<CapturingSink>(&got));
  r.SendPrepared(NotYet(), Ttl(2000));
  CHECK(r.sent());
  REQUIRE(got);
  CHECK(got->result_int() == 404);
  CHECK((*got)[beast_http::field::cache_control] == "max-age=2");
  CHECK((*got)["X-Cache-TTL-Ms"] == "2000");
  CHECK((*got)[beast_http::field::access_control_allow_origin] == "*");
  CHECK(got->count(beast_http::field::server) == 0);  // the transport writes its own
  CHECK(got->body().find("not published yet") != std::string::npos);
  CHECK((*got)[beast_http::field::content_length] == std::to_string(got->body().size()));
}

TEST_CASE("P-3 a prepared playlist keeps its shared body, over HTTP/1.1 and through any sink") {
  auto body = std::make_shared<const std::string>("#EXTM3U\n#EXT-X-VERSION:9\n");
  Response header{Status::ok, 11};
  header.set(beast_http::field::content_type, "application/vnd.apple.mpegurl");
  header.body() = "ignored: the shared body is the answer's";
  auto answer = std::make_shared<const PreparedAnswer>(std::move(header), body);
  CHECK(answer->body().data() == body->data());  // not copied
  Router router;
  router.Add({Verb::get}, "/v1/index.m3u8",
             [answer](RequestContext&, Responder r) { r.SendPrepared(answer, AnswerFields()); });
  auto server = StartServer(SmallOptions(), std::move(router));
  RawConnection conn(server->port());
  for (int i = 0; i < 2; ++i) {
    conn.Write("GET /v1/index.m3u8 HTTP/1.1\r\nHost: x\r\n\r\n");
    auto res = conn.Read();
    REQUIRE(res);
    CHECK(res->result_int() == 200);
    CHECK(res->body() == *body);
  }
  std::optional<Response> got;
  Responder r(std::make_shared<CapturingSink>(&got));
  r.SendPrepared(answer, AnswerFields());
  REQUIRE(got);
  CHECK(got->body() == *body);
  CHECK((*got)[beast_http::field::content_length] == std::to_string(body->size()));
  CHECK((*got)[beast_http::field::content_type] == "application/vnd.apple.mpegurl");
}

TEST_CASE("P-5 a prepared 304 has no body and no framing field") {
  Response res{Status::not_modified, 11};
  res.set(beast_http::field::etag, "\"7-v1\"");
  res.body() = "dropped on the wire";
  PreparedAnswer answer(std::move(res));
  CHECK(answer.bodiless());
  std::string head;
  answer.AppendHead("", "Sat, 05 Dec 2026 10:00:00 GMT", true, head);
  CHECK(head.rfind("HTTP/1.1 304 Not Modified\r\nETag: \"7-v1\"\r\n", 0) == 0);
  CHECK(head.find("Content-Length") == std::string::npos);
  CHECK(head.find("Transfer-Encoding") == std::string::npos);
  CHECK(head.ends_with("Date: Sat, 05 Dec 2026 10:00:00 GMT\r\n\r\n"));
}

TEST_CASE("P-2 AnswerFields::TryAdd takes a request-derived value only when it fits and is clean") {
  AnswerFields f;
  CHECK(f.TryAdd("Location", "http://edge-1:8080/live/v1/index.m3u8?token=abc"));
  CHECK(f.view() == "Location: http://edge-1:8080/live/v1/index.m3u8?token=abc\r\n");
  const std::string_view before = f.view();
  const size_t size = before.size();
  // Too long for what is left: refused whole, nothing appended.
  CHECK_FALSE(f.TryAdd("Location", std::string(AnswerFields::kCapacity, 'a')));
  CHECK(f.view().size() == size);
  // CR, LF or NUL would split the header: refused.
  CHECK_FALSE(f.TryAdd("X-Note", "a\r\nSet-Cookie: x=1"));
  CHECK_FALSE(f.TryAdd("X-Note", std::string("a\0b", 3)));
  CHECK(f.view().size() == size);
  // Exactly the room left fits.
  const size_t room = AnswerFields::kCapacity - size - std::string_view("X-Fill: \r\n").size();
  CHECK(f.TryAdd("X-Fill", std::string(room, 'z')));
  CHECK(f.view().size() == AnswerFields::kCapacity);
  CHECK_FALSE(f.TryAdd("X", ""));
}

TEST_CASE(
    "P-2 AnswerFields::TryAdd refuses CR, LF and NUL at any position, takes every other byte") {
  // The check reads eight bytes at a time: every position of values up to 40 bytes, each
  // forbidden byte, and the bytes next to them (0x0b, 0x0c, 0x0e, 0x7f, 0x80, 0xff) allowed.
  for (size_t length = 1; length <= 40; ++length) {
    for (size_t at = 0; at < length; ++at) {
      for (char bad : {'\r', '\n', '\0'}) {
        std::string value(length, 'u');
        value[at] = bad;
        AnswerFields f;
        INFO("length " << length << ", position " << at << ", byte " << int(bad));
        CHECK_FALSE(f.TryAdd("X-Value", value));
        CHECK(f.view().empty());
      }
      for (char fine : {'\x0b', '\x0c', '\x0e', '\x7f', '\x80', '\xff', '\t'}) {
        std::string value(length, 'u');
        value[at] = fine;
        AnswerFields f;
        INFO("length " << length << ", position " << at << ", byte " << int(fine));
        CHECK(f.TryAdd("X-Value", value));
      }
    }
  }
}

}  // namespace
}  // namespace prepared_answer_test
}  // namespace meshwork::http
