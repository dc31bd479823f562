// the HTTP/1.1 request decoder as the server configures it (framing.h) on arbitrary
// bytes: header limit, chunk-extension limit, the RFC 9112 framing check, and the chunked
// decoder in both modes the server uses (a whole buffered body; a streamed body read into a
// small buffer). The input is fed in two pieces split at a point the input chooses, as bytes
// arrive from a socket. Properties: no crash, no body larger than the limit accepted, and a
// request the framing check refuses never gets its body read.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/http/framing.h"

namespace {

namespace beast_http = boost::beast::http;
constexpr uint64_t kBodyLimit = 64 * 1024;

template <typename Parser>
size_t Feed(Parser& parser, std::string_view data, boost::beast::error_code& ec) {
  size_t used = 0;
  while (used < data.size() && !ec) {
    size_t n = parser.put(boost::asio::const_buffer(data.data() + used, data.size() - used), ec);
    if (ec == beast_http::error::need_more) {
      ec = {};
      break;
    }
    if (ec == beast_http::error::need_buffer) {
      ec = {};
      if (n == 0) break;
    }
    used += n;
    if (parser.is_done()) break;
    if (n == 0) break;
  }
  return used;
}

void Buffered(std::string_view first, std::string_view second) {
  meshwork::http::DecoderLimits limits;
  limits.header_bytes = 4096;
  limits.chunk_extension_bytes = 64;
  meshwork::http::ChunkHeaderLimit check(limits);
  beast_http::request_parser<beast_http::string_body> parser;
  meshwork::http::ApplyDecoderLimits(parser, limits, check);
  parser.body_limit(kBodyLimit);
  boost::beast::error_code ec;
  std::string pending(first);
  size_t used = Feed(parser, pending, ec);
  pending.erase(0, used);
  pending.append(second);
  if (!ec && !parser.is_header_done()) {
    used = Feed(parser, pending, ec);
    pending.erase(0, used);
  }
  if (ec || !parser.is_header_done()) return;
  if (!meshwork::http::CheckRequestFraming(parser.get()).ok()) return;  // never read further
  if (!parser.is_done()) Feed(parser, pending, ec);
  if (!ec && parser.is_done() && parser.get().body().size() > kBodyLimit) __builtin_trap();
}

void Streamed(std::string_view data) {
  meshwork::http::DecoderLimits limits;
  limits.header_bytes = 4096;
  meshwork::http::ChunkHeaderLimit check(limits);
  beast_http::request_parser<beast_http::buffer_body> parser;
  meshwork::http::ApplyDecoderLimits(parser, limits, check);
  parser.body_limit(boost::none);
  boost::beast::error_code ec;
  size_t used = 0;
  char chunk[512];
  for (int rounds = 0; rounds < 10000 && !ec && used < data.size() && !parser.is_done(); ++rounds) {
    if (parser.is_header_done()) {
      if (!meshwork::http::CheckRequestFraming(parser.get()).ok()) return;
      parser.get().body().data = chunk;
      parser.get().body().size = sizeof(chunk);
      parser.get().body().more = true;
    }
    size_t n = parser.put(boost::asio::const_buffer(data.data() + used, data.size() - used), ec);
    if (ec == beast_http::error::need_buffer || ec == beast_http::error::need_more) ec = {};
    if (n == 0 && !parser.is_header_done()) return;
    used += n;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  size_t split = size > 1 ? data[0] % text.size() + 1 : 0;
  split = std::min(split, text.size());
  Buffered(text.substr(0, split), text.substr(split));
  Streamed(text);
  return 0;
}
