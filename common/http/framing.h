// HTTP/1.1 message framing rules (RFC 9112 §6) and the limits of the request decoder, kept
// apart from the server so they can be fuzzed on their own.
//
// A request whose body length is ambiguous is refused before its body is read, and the
// connection is closed after the answer: this is what keeps a front proxy and this server
// from disagreeing on where a request ends (request smuggling).
//
// Thread-safe: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "boost/beast/http.hpp"

namespace meshwork::http {

// The decoder's limits for one request.
struct DecoderLimits {
  size_t header_bytes = 16 * 1024;  // request line + fields (and, separately, trailers)
  size_t chunk_extension_bytes = 256;
  // One chunk's declared size. Bodies are bounded as a whole too (body limit, upload
  // budget); this refuses at once a chunk no client sends (`FFFFFFFFFFFFFFFF`), which a
  // streamed upload would otherwise wait for until its read deadline.
  uint64_t chunk_bytes = 64ull << 20;
};

// Checks the framing fields of a parsed request header:
//  - Transfer-Encoding (all its field lines, as one list) must be exactly `chunked`: a final
//    coding other than chunked → InvalidArgument (400 and close); chunked applied twice →
//    InvalidArgument; another coding before chunked (`gzip, chunked`) → Unimplemented (501);
//  - Transfer-Encoding together with Content-Length → InvalidArgument;
//  - Transfer-Encoding in an HTTP/1.0 request → InvalidArgument (1.0 has no chunked coding).
// Each error names the header field in its message.
absl::Status CheckRequestFraming(
    const boost::beast::http::request_header<boost::beast::http::fields>& header);

// A chunk-header callback that fails a chunk whose extensions exceed the limit with
// bad_chunk_extension and one whose declared size does with bad_chunk (both 400 and close).
// Beast keeps only a reference to it: it must outlive the parser.
class ChunkHeaderLimit {
 public:
  explicit ChunkHeaderLimit(const DecoderLimits& limits)
      : max_extension_bytes_(limits.chunk_extension_bytes), max_chunk_bytes_(limits.chunk_bytes) {}
  void operator()(std::uint64_t size, std::string_view extensions, boost::beast::error_code& ec) {
    if (extensions.size() > max_extension_bytes_) {
      ec = boost::beast::http::error::bad_chunk_extension;
    } else if (size > max_chunk_bytes_) {
      ec = boost::beast::http::error::bad_chunk;
    }
  }

 private:
  size_t max_extension_bytes_;
  uint64_t max_chunk_bytes_;
};

// Applies the header limit and `check` to a request parser (again after a parser is moved
// into one with another body type: callbacks do not move).
template <typename Body>
void ApplyDecoderLimits(boost::beast::http::request_parser<Body>& parser,
                        const DecoderLimits& limits, ChunkHeaderLimit& check) {
  parser.header_limit(static_cast<uint32_t>(limits.header_bytes));
  parser.on_chunk_header(check);
}

// The most bytes the decoder may hold in its read buffer for one request: a whole header, a
// chunk header with its extensions, or one read of body bytes. A client that needs more
// (a chunk-size line that never ends) fails with buffer_overflow rather than growing it.
inline size_t DecoderBufferBytes(const DecoderLimits& limits, size_t body_read_bytes) {
  return limits.header_bytes + limits.chunk_extension_bytes + body_read_bytes + 256;
}

// RFC 9110 §5.6.7 IMF-fixdate of `unix_seconds`, e.g. "Sun, 06 Nov 1994 08:49:37 GMT".
std::string HttpDate(int64_t unix_seconds);

// A request target fit for a log line: the value of each query parameter that
// carries a credential (token, pass, sid, passphrase) is replaced by "…" and, when it is
// longer than 8 characters, its last 4. Parameter names are compared as sent.
std::string RedactedTarget(std::string_view target);

// `segment` (a path segment as sent) with its %XX escapes decoded ('+' stays '+'); nullopt
// when an escape is not two hex digits.
std::optional<std::string> PercentDecoded(std::string_view segment);

}  // namespace meshwork::http
