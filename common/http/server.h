// An HTTP/1.1 server on Boost.Beast.
//
// Threading: a listener owns `threads` workers, each running its own io_context. The
// acceptor runs on worker 0 and hands each new connection to the next worker in turn; a
// connection then lives on that worker for its whole life, so its handlers run there and
// must never block (blocking work goes to a pool and answers through the Responder, which
// posts back). Shared inputs (router, trusted proxies) are immutable or snapshots.
//
// Limits (all with clear answers): header bytes → 431, body bytes → 413, connections above
// `max_connections` → 503 and close, bodies of unfinished requests above
// `max_buffered_body_bytes` for the whole listener → 503 with Retry-After and close. A client
// idle between requests past `idle_timeout` is disconnected; once its first byte arrived, a
// request header or buffered body must be complete within `read_timeout`, and each chunk of a
// streamed body must arrive within it. A response is cut only when the client takes nothing
// for `send_timeout` (a slow viewer that keeps reading is never cut).
//
// Framing (RFC 9112 §6, framing.h): a Transfer-Encoding other than a lone final `chunked`, or
// with Content-Length, is refused before the body is read (400, or 501 for an unknown coding)
// and the connection closed; malformed chunking and oversized chunk extensions are 400 on
// every route, streamed or not. Every response carries `Date` (RFC 9110 §6.6.1).
//
// A failed accept (out of descriptors) retries after a back-off rather than at once.
//
// TLS: with `tls_cert_file` and `tls_key_file` set the listener speaks HTTPS (TLS 1.2+,
// OpenSSL). A client has `read_timeout` to complete the handshake; then the connection is
// served exactly like a plain one and closed with a TLS close_notify. ReloadTls() swaps in
// freshly read certificate files for new connections without a restart. Above
// `max_connections` a TLS connection is closed without an answer (there is no channel to
// answer on before a handshake).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "common/http/router.h"
#include "common/net/cidr.h"
#include "common/time/clock.h"
#include "prometheus/registry.h"

namespace meshwork::http {

// Returns the cluster's current trusted proxies (T-1); called once per request, on the
// connection's worker. The set must stay valid on the calling thread until its next call
// (a provider reads through a thread_local Snapshot::ReadCache: no lock and no shared
// reference count per request); null = trust no proxy.
using TrustedProxiesFn = std::function<const net::CidrSet*()>;

struct ServerOptions {
  std::string name = "http";           // listener name in metrics and logs
  std::string scheme = "http";         // public scheme of this listener; "https" with TLS
  std::string listen = "127.0.0.1:0";  // ADDR:PORT; port 0 picks a free port
  int threads = 2;
  size_t header_limit_bytes = 16 * 1024;
  uint64_t body_limit_bytes = 1024 * 1024;
  std::chrono::milliseconds idle_timeout{30'000};
  std::chrono::milliseconds read_timeout{15'000};
  std::chrono::milliseconds send_timeout{15'000};  // longest time without write progress
  size_t max_connections = 10'000;
  // open connections per client (an IPv4 address or an IPv6 /64); above it a new one is
  // refused as above max_connections. A trusted proxy (`trusted_proxies`) is not capped. A
  // place is held as long as the connection's session (a held request's responder keeps a
  // closed one's a moment longer). 0: no per-client cap.
  uint32_t max_connections_per_client = 0;
  size_t chunk_extension_limit_bytes = 256;
  uint64_t max_buffered_body_bytes = 256ull << 20;  // the whole listener's unfinished bodies
  const Clock* clock = nullptr;                     // for Date; null = the real clock
  TrustedProxiesFn trusted_proxies;                 // optional; none = trust no proxy
  prometheus::Registry* registry = nullptr;         // optional; where request metrics go
  // PEM certificate chain and private key; both set = HTTPS, both empty = plain HTTP.
  std::string tls_cert_file;
  std::string tls_key_file;
  // M-5: listeners (by name, or "all") that log one `http_access` line per answer: client,
  // method, target, status, body bytes, duration, protocol, user agent. None by default.
  std::vector<std::string> access_log_listeners;
};

// A listener's byte and connection counts so far, for load reports (a snapshot).
struct ServerCounters {
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
  uint64_t connections = 0;  // open now
};

class Server {
 public:
  // Binds and starts serving. Errors: InvalidArgument for a malformed `listen`, for TLS
  // files that cannot be loaded (or only one of them given, or TLS with a scheme other than
  // "https"), Unavailable when the address cannot be bound.
  static absl::StatusOr<std::unique_ptr<Server>> Start(ServerOptions options, Router router);
  ~Server();  // Stop()s if still running

  uint16_t port() const { return port_; }
  const std::string& bound_address() const { return bound_; }  // "127.0.0.1:PORT"
  const ServerOptions& options() const { return options_; }
  ServerCounters counters() const;

  // Graceful shutdown: stops accepting, lets in-flight requests finish and closes idle
  // connections, waits up to `grace`, then stops the workers. Idempotent.
  void Stop(std::chrono::milliseconds grace = std::chrono::milliseconds(2000));

  // Re-reads the TLS certificate and key files into a new context that new connections use;
  // open connections keep the one they started with. On error (InvalidArgument for files
  // that cannot be loaded, FailedPrecondition for a listener without TLS) the current
  // context stays in use. Thread-safe.
  absl::Status ReloadTls();
  bool tls() const { return !options_.tls_cert_file.empty(); }

  class Impl;

 private:
  Server() = default;
  ServerOptions options_;
  uint16_t port_ = 0;
  std::string bound_;
  std::shared_ptr<Impl> impl_;
};

// Splits "ADDR:PORT" / "[V6]:PORT".
absl::StatusOr<std::pair<std::string, uint16_t>> SplitHostPort(std::string_view listen);

}  // namespace meshwork::http
