#include "common/http/request_head.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "common/http/framing.h"

namespace meshwork::http {
namespace request_head_test {

namespace beast_http = boost::beast::http;
using namespace std::string_literals;  // byte strings with NUL in them
using Message = beast_http::request<beast_http::string_body>;
constexpr size_t kLimit = 16 * 1024;

// What Beast's parser, configured as the server's, makes of `bytes`: the header's length (0
// when it fails or wants more) and the message.
size_t BeastRead(const std::string& bytes, Message& out) {
  DecoderLimits limits;
  limits.header_bytes = kLimit;
  ChunkHeaderLimit check(limits);
  beast_http::request_parser<beast_http::string_body> parser;
  ApplyDecoderLimits(parser, limits, check);
  boost::beast::error_code ec;
  size_t n = parser.put(boost::asio::buffer(bytes), ec);
  if (ec || !parser.is_header_done()) return 0;
  out = parser.release();
  return n;
}

std::vector<std::pair<std::string, std::string>> Fields(const Message& m) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& f : m) out.emplace_back(f.name_string(), f.value());
  return out;
}

TEST_CASE("P-5 the common request header is read without Beast's parser, as Beast reads it") {
  const std::vector<std::string> common = {
      "GET /live/v1/index.m3u8 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n",
      "GET /a/b.ts?x=1&y=%20 HTTP/1.1\r\nHost: h\r\nUser-Agent: hls.js/1.7 (X11; Linux)\r\n"
      "Accept: */*\r\nAccept-Encoding: gzip, deflate\r\nConnection: keep-alive\r\n\r\n",
      "HEAD /x HTTP/1.0\r\n\r\n",
      "GET /x HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n",
      "GET /x HTTP/1.1\r\nConnection: close\r\n\r\n",
      // Value whitespace: leading and trailing SP/HTAB trimmed, inner kept; empty values.
      "GET /x HTTP/1.1\r\nX-A: \t a \t b \t\r\nX-Empty:\r\nX-Spaces:    \r\nx-a: again\r\n\r\n",
      // A pipelined request after it is not part of it.
      "GET /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\n\r\n",
      // HTTP/1.0 without Connection (not kept alive); Connection twice (the first one counts
      // for the message on both paths).
      "GET /x HTTP/1.0\r\nHost: h\r\n\r\n",
      "GET /x HTTP/1.1\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n",
  };
  for (const auto& bytes : common) {
    INFO(bytes);
    Message simple;
    // A reused message: its old method, target, version, fields and body all go.
    simple.method_string("PURGE");
    simple.target("/old");
    simple.version(10);
    simple.set("X-Left-Over", "1");
    simple.body() = "old body";
    Message beast;
    size_t used = ReadSimpleRequestHead(bytes, kLimit, simple);
    size_t beast_used = BeastRead(bytes, beast);
    REQUIRE(used > 0);
    CHECK(used == beast_used);
    CHECK(simple.method() == beast.method());
    CHECK(simple.target() == beast.target());
    CHECK(simple.version() == beast.version());
    CHECK(simple.keep_alive() == beast.keep_alive());
    CHECK(Fields(simple) == Fields(beast));
    CHECK(simple.method_string() == beast.method_string());
    CHECK(simple.body().empty());
  }
}

TEST_CASE("R-3 request headers that frame a body, fold, or are not whole are left to Beast") {
  const std::vector<std::string> others = {
      // Body framing and connection changes: Beast's rules (and CheckRequestFraming) decide.
      "GET /x HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
      "GET /x HTTP/1.1\r\ncontent-length: 5\r\n\r\nhello",
      "GET /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
      "GET /x HTTP/1.1\r\nTRANSFER-ENCODING: chunked\r\nContent-Length: 3\r\n\r\n",
      "GET /x HTTP/1.1\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n",
      "GET /x HTTP/1.1\r\nConnection: keep-alive, close\r\n\r\n",
      "GET /x HTTP/1.1\r\nProxy-Connection: close\r\n\r\n",
      // Other methods (bodies, streaming routes).
      "POST /x HTTP/1.1\r\n\r\n",
      "PUT /x HTTP/1.1\r\n\r\n",
      "get /x HTTP/1.1\r\n\r\n",
      // Folding, bare LF, bytes Beast may take but this reader does not.
      "GET /x HTTP/1.1\r\nX-A: a\r\n b\r\n\r\n",
      "GET /x HTTP/1.1\nHost: h\n\n",
      "GET /x HTTP/1.1\r\nHost: h\n\r\n",
      "GET /x HTTP/1.1\r\nX-A: caf\xc3\xa9\r\n\r\n",
      "GET /caf\xc3\xa9 HTTP/1.1\r\n\r\n",
      "GET /x HTTP/1.1\r\nX_A: 1\r\n\r\n",
      "GET /x HTTP/1.1\r\nX-A: a\x7f\r\n\r\n",
      "GET /x HTTP/1.1\r\nX-A : 1\r\n\r\n",
      "GET /x HTTP/1.1\r\n: 1\r\n\r\n",
      "GET /x HTTP/1.1\r\nX-A: \0\r\n\r\n"s,
      "GET /x HTTP/1.1\r\nX-A: a\0b\r\n\r\n"s,
      "GET /x\0 HTTP/1.1\r\n\r\n"s,
      "GET /x HTTP/1.1\r\nX-A: a\r\n\tb\r\n\r\n",
      "GET /x HTTP/1.1\r\nX-A: a\rb\r\n\r\n",
      "GET /x HTTP/1.1\r\nX-A: a\r\n\rX\r\n\r\n",
      "GET /x HTTP/1.1\r\n\rX",
      // Malformed request lines.
      "GET  /x HTTP/1.1\r\n\r\n",
      "GET /x  HTTP/1.1\r\n\r\n",
      "GET /x HTTP/2.0\r\n\r\n",
      "GET /x HTTP/1.1 \r\n\r\n",
      "GET /x\r\n\r\n",
      "GET HTTP/1.1\r\n\r\n",
      // Not whole yet.
      "",
      "GET",
      "GET /x HTTP/1.1\r\n",
      "GET /x HTTP/1.1\r\nHost: h\r\n",
      "GET /x HTTP/1.1\r\nHost: h\r\n\r",
  };
  for (const auto& bytes : others) {
    INFO(bytes);
    Message m;
    CHECK(ReadSimpleRequestHead(bytes, kLimit, m) == 0);
  }
}

TEST_CASE("R-2 a common header near or over the header limit is left to Beast") {
  std::string head = "GET /x HTTP/1.1\r\nX-Big: " + std::string(200, 'a') + "\r\n\r\n";
  Message m;
  CHECK(ReadSimpleRequestHead(head, head.size() + 9, m) == head.size());
  CHECK(ReadSimpleRequestHead(head, head.size() + 8, m) == 0);
  CHECK(ReadSimpleRequestHead(head, head.size(), m) == 0);
  CHECK(ReadSimpleRequestHead(head, 8, m) == 0);
  // More fields than the reader keeps count of.
  std::string many = "GET /x HTTP/1.1\r\n";
  for (size_t i = 0; i <= kMaxSimpleFields; ++i) many += "X: 1\r\n";
  many += "\r\n";
  CHECK(ReadSimpleRequestHead(many, kLimit, m) == 0);
}

}  // namespace request_head_test
}  // namespace meshwork::http
