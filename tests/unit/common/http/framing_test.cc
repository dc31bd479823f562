#include "common/http/framing.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace meshwork::http {
namespace {

namespace beast_http = boost::beast::http;

beast_http::request_header<beast_http::fields> Header(
    const std::vector<std::pair<beast_http::field, std::string>>& fields, unsigned version = 11) {
  beast_http::request_header<beast_http::fields> h;
  h.method(beast_http::verb::post);
  h.target("/x");
  h.version(version);
  for (const auto& [name, value] : fields) h.insert(name, value);
  return h;
}

constexpr auto kTe = beast_http::field::transfer_encoding;
constexpr auto kCl = beast_http::field::content_length;

TEST_CASE("R-3 framing: a lone chunked coding and plain Content-Length are accepted") {
  CHECK(CheckRequestFraming(Header({})).ok());
  CHECK(CheckRequestFraming(Header({{kCl, "10"}})).ok());
  CHECK(CheckRequestFraming(Header({{kTe, "chunked"}})).ok());
  CHECK(CheckRequestFraming(Header({{kTe, " Chunked "}})).ok());
}

TEST_CASE("R-3 framing: Transfer-Encoding whose final coding is not chunked is refused") {
  for (std::string te : {"identity", "xchunked", "chunked, identity", "chunked;q=1", "gzip"}) {
    INFO(te);
    auto status = CheckRequestFraming(Header({{kTe, te}}));
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(status.message()).find("Transfer-Encoding") != std::string::npos);
  }
}

TEST_CASE("R-3 framing: Transfer-Encoding split over field lines is judged as one list") {
  CHECK(CheckRequestFraming(Header({{kTe, "chunked"}, {kTe, "identity"}})).code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(CheckRequestFraming(Header({{kTe, "chunked"}, {kTe, "chunked"}})).code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(CheckRequestFraming(Header({{kTe, ""}})).code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("R-3 framing: Transfer-Encoding with Content-Length is refused") {
  CHECK(CheckRequestFraming(Header({{kTe, "chunked"}, {kCl, "5"}})).code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(CheckRequestFraming(Header({{kTe, "xchunked"}, {kCl, "5"}})).code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("R-3 framing: a coding before chunked is not implemented (501)") {
  CHECK(CheckRequestFraming(Header({{kTe, "gzip, chunked"}})).code() ==
        absl::StatusCode::kUnimplemented);
}

TEST_CASE("R-3 framing: Transfer-Encoding in an HTTP/1.0 request is refused") {
  CHECK(CheckRequestFraming(Header({{kTe, "chunked"}}, 10)).code() ==
        absl::StatusCode::kInvalidArgument);
}

// Feeds `text` to a request parser with `limits` applied, returning its error.
boost::beast::error_code ParseWithLimits(const DecoderLimits& limits, const std::string& text) {
  ChunkHeaderLimit check(limits);
  beast_http::request_parser<beast_http::string_body> parser;
  parser.body_limit(boost::none);
  ApplyDecoderLimits(parser, limits, check);
  boost::beast::error_code ec;
  parser.eager(true);
  size_t offset = 0;
  while (!ec && offset < text.size() && !parser.is_done()) {
    size_t n = parser.put(boost::asio::buffer(text.data() + offset, text.size() - offset), ec);
    if (n == 0 && !ec) break;
    offset += n;
  }
  return ec;
}

TEST_CASE("R-3 decoder: a chunk declared larger than the limit fails at its header") {
  DecoderLimits limits;
  std::string head = "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
  CHECK_FALSE(ParseWithLimits(limits, head + "3\r\nabc\r\n0\r\n\r\n"));
  // Without the limit this header parses and the parser waits for 2^64 − 1 bytes.
  CHECK(ParseWithLimits(limits, head + "FFFFFFFFFFFFFFFF\r\n") == beast_http::error::bad_chunk);
  limits.chunk_bytes = 2;
  CHECK(ParseWithLimits(limits, head + "3\r\nabc\r\n0\r\n\r\n") == beast_http::error::bad_chunk);
}

TEST_CASE("R-3 decoder: a chunk extension above the limit fails the parse") {
  DecoderLimits limits;
  limits.chunk_extension_bytes = 16;
  std::string head = "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
  CHECK_FALSE(ParseWithLimits(limits, head + "3;a=b\r\nabc\r\n0\r\n\r\n"));
  CHECK(ParseWithLimits(limits, head + "3;" + std::string(64, 'x') + "\r\nabc\r\n0\r\n\r\n") ==
        beast_http::error::bad_chunk_extension);
}

TEST_CASE("RFC 9110 HttpDate formats an IMF-fixdate") {
  CHECK(HttpDate(784111777) == "Sun, 06 Nov 1994 08:49:37 GMT");
  CHECK(HttpDate(0) == "Thu, 01 Jan 1970 00:00:00 GMT");
}

TEST_CASE("A-9 a path segment's percent escapes are decoded, a bad escape refused") {
  CHECK(PercentDecoded("alice%40example.com") == "alice@example.com");
  CHECK(PercentDecoded("a%20b+c%C3%A9") == "a b+c\xC3\xA9");
  CHECK(PercentDecoded("plain") == "plain");
  CHECK_FALSE(PercentDecoded("bad%4").has_value());
  CHECK_FALSE(PercentDecoded("bad%zz").has_value());
  CHECK_FALSE(PercentDecoded("%").has_value());
}

TEST_CASE("A-10 a logged request target keeps no credential whole") {
  CHECK(RedactedTarget("/ch1/index.m3u8") == "/ch1/index.m3u8");
  CHECK(RedactedTarget("/ch1/index.m3u8?token=eyJhbGciOi.SECRETSECRET1234") ==
        "/ch1/index.m3u8?token=…1234");
  CHECK(RedactedTarget("/a.ts?x=1&pass=abcdefghij&sid=12345678&msn=4&token") ==
        "/a.ts?x=1&pass=…ghij&sid=…&msn=4&token");
  CHECK(RedactedTarget("/a?passphrase=s3cr3t-words-here&") == "/a?passphrase=…here&");
  // Names are whole: a parameter that only starts like one is kept.
  CHECK(RedactedTarget("/a?tokens=1&xtoken=2") == "/a?tokens=1&xtoken=2");
}

}  // namespace
}  // namespace meshwork::http
