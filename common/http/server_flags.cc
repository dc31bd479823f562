#include "common/http/server_flags.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/flags/flag.h"

ABSL_FLAG(uint64_t, http_header_limit_bytes, 16 * 1024,
          "largest request header (and trailer section) on every HTTP listener; 431 above");
ABSL_FLAG(uint64_t, http_body_limit_bytes, 1024 * 1024,
          "largest buffered request body (streamed uploads excepted); 413 above");
ABSL_FLAG(uint64_t, http_chunk_extension_limit_bytes, 256,
          "longest chunk extension in a chunked request body; 400 above");
ABSL_FLAG(uint64_t, http_max_buffered_body_bytes, 256ull << 20,
          "bytes one listener holds for request bodies still arriving; 503 + Retry-After above");
ABSL_FLAG(uint64_t, http_max_connections, 10'000,
          "open connections per listener; 503 (TLS: closed) above");
ABSL_FLAG(uint32_t, http_max_connections_per_client, 5'000,
          "open connections per client (an IPv4 address or an IPv6 /64) per listener, so one "
          "client cannot take them all; 503 (TLS: closed) above; 0 = no per-client cap");
ABSL_FLAG(int64_t, http_idle_timeout_ms, 30'000,
          "a keep-alive connection without a new request for this long is closed");
ABSL_FLAG(int64_t, http_read_timeout_ms, 15'000,
          "a request header or buffered body (once begun), or each chunk of a streamed body, "
          "must arrive within this");
ABSL_FLAG(int64_t, http_send_timeout_ms, 15'000,
          "a response that makes no write progress for this long is cut (a slow reader that "
          "keeps reading never is)");

ABSL_FLAG(std::vector<std::string>, http_access_log, {},
          "listeners (by name: http, https, publish; or all) that log every answer as an "
          "http_access line (M-5); none by default");

namespace meshwork::http {

void ApplyServerFlags(ServerOptions& options) {
  options.access_log_listeners = absl::GetFlag(FLAGS_http_access_log);
  auto ms = [](int64_t v) { return std::chrono::milliseconds(std::max<int64_t>(100, v)); };
  options.header_limit_bytes =
      std::max<uint64_t>(1024, absl::GetFlag(FLAGS_http_header_limit_bytes));
  options.body_limit_bytes = absl::GetFlag(FLAGS_http_body_limit_bytes);
  options.chunk_extension_limit_bytes = absl::GetFlag(FLAGS_http_chunk_extension_limit_bytes);
  options.max_buffered_body_bytes = absl::GetFlag(FLAGS_http_max_buffered_body_bytes);
  options.max_connections = std::max<uint64_t>(1, absl::GetFlag(FLAGS_http_max_connections));
  options.max_connections_per_client = absl::GetFlag(FLAGS_http_max_connections_per_client);
  options.idle_timeout = ms(absl::GetFlag(FLAGS_http_idle_timeout_ms));
  options.read_timeout = ms(absl::GetFlag(FLAGS_http_read_timeout_ms));
  options.send_timeout = ms(absl::GetFlag(FLAGS_http_send_timeout_ms));
}

}  // namespace meshwork::http
