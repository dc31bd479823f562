// R-2, P-5: the server's reader of common request headers (request_head.h) against Beast's
// parser on the same bytes. Whatever the reader takes, Beast must take too, ending the header
// at the same byte, with the same method, target, version and fields in the same order —
// the two never disagree on where a request ends or what it says (no smuggling through the
// second parser). A header the reader returns 0 for is Beast's alone and needs nothing.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/http/framing.h"
#include "common/http/request_head.h"

namespace {

namespace beast_http = boost::beast::http;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The header limit from the first byte (64 … 4 144): headers near it are exercised too.
  const size_t limit = 64 + size_t{data[0]} * 16;
  ++data;
  --size;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  beast_http::request<beast_http::string_body> simple;
  // A used message, as the server's is when a connection reads its next request.
  simple.set("X-Left-Over", "from the last request");
  simple.body() = "old";
  size_t used = meshwork::http::ReadSimpleRequestHead(bytes, limit, simple);
  if (used == 0) return 0;
  Check(used <= size);

  meshwork::http::DecoderLimits limits;
  limits.header_bytes = limit;
  meshwork::http::ChunkHeaderLimit chunk_check(limits);
  beast_http::request_parser<beast_http::string_body> parser;
  meshwork::http::ApplyDecoderLimits(parser, limits, chunk_check);
  boost::beast::error_code ec;
  size_t beast_used = parser.put(boost::asio::const_buffer(data, size), ec);
  Check(!ec && parser.is_header_done() && parser.is_done());
  Check(beast_used == used);
  Check(meshwork::http::CheckRequestFraming(parser.get()).ok());
  const auto& b = parser.get();
  Check(b.method() == simple.method());
  Check(b.method_string() == simple.method_string());
  Check(b.target() == simple.target());
  Check(b.version() == simple.version());
  Check(b.keep_alive() == simple.keep_alive());
  Check(simple.body().empty());
  auto s = simple.begin();
  for (const auto& field : b) {
    Check(s != simple.end());
    Check(field.name_string() == s->name_string());
    Check(field.name() == s->name());
    Check(field.value() == s->value());
    ++s;
  }
  Check(s == simple.end());
  return 0;
}
