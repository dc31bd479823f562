// A small HTTP/1.1 client on Beast: a deadline on the whole exchange, a bound on the
// response body. Hosts are numeric addresses or names resolved by the system resolver.
// AsyncFetch/Fetch use one connection per request, over TLS when the request carries a client
// context (ClientTlsContext: the peer's certificate verified against the system's CAs and an
// optional CA file, its name or address checked, SNI sent for names); KeepAliveClient keeps one
// plain connection open for a thread's sequential requests.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "boost/asio/any_io_executor.hpp"
#include "common/http/types.h"

namespace boost::asio::ssl {
class context;
}

namespace meshwork::http {

// A TLS client context that verifies servers against the system's CA store and, when
// `ca_file` is not empty, the certificates in that PEM file too. InvalidArgument when the file
// cannot be read.
absl::StatusOr<std::shared_ptr<boost::asio::ssl::context>> ClientTlsContext(
    const std::string& ca_file);

struct ClientRequest {
  std::string host;  // "127.0.0.1" or "[::1]" or a name
  uint16_t port = 80;
  Verb method = Verb::get;
  std::string target = "/";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::chrono::milliseconds timeout{5000};
  uint64_t body_limit_bytes = 64 * 1024 * 1024;
  // Set: HTTPS with this context (AsyncFetch and Fetch only; KeepAliveClient is plain).
  std::shared_ptr<boost::asio::ssl::context> tls;
  // KeepAliveClient only: called on the fetching thread with each piece of a 200 answer's body
  // as it arrives (the whole body is still returned at the end); a relay shares an object
  // still in flight this way. A request that delivered a piece is never retried.
  std::function<void(std::string_view piece)> on_body;
  // KeepAliveClient with on_body only: called once with a 200 answer's header, before its
  // first piece (a relay passes the upstream's fields on to viewers of the object in flight).
  std::function<void(const Response& header)> on_header;
};

using FetchCallback = std::function<void(absl::StatusOr<Response>)>;

// Starts the exchange on `executor`; `done` runs there exactly once. DeadlineExceeded when
// the timeout passes, Unavailable when the connection fails.
void AsyncFetch(boost::asio::any_io_executor executor, ClientRequest request, FetchCallback done);

// Blocking form for tools and tests (runs its own io_context on the calling thread).
absl::StatusOr<Response> Fetch(ClientRequest request);

// One kept-alive HTTP/1.1 connection for the sequential requests of one thread (a relay's
// rendition follower, an origin feed's sender). Not thread-safe: used by one thread at a
// time; Fetch blocks that thread for at most the request's timeout (twice when it retries,
// below). A request for another host:port closes the connection and opens one there; an
// answer with `Connection: close` (or HTTP/1.0) closes it after. A request that fails on a
// reused connection before any byte of the answer arrived (other than by its deadline) is sent once
// more on a fresh connection: the server may have closed the idle connection as the request went
// out (RFC 9110 9.2.2 allows the retry for idempotent methods, which are the only ones the callers
// send: GET and PUT). Any failure closes the connection.
class KeepAliveClient {
 public:
  KeepAliveClient();
  ~KeepAliveClient();
  KeepAliveClient(const KeepAliveClient&) = delete;
  KeepAliveClient& operator=(const KeepAliveClient&) = delete;

  absl::StatusOr<Response> Fetch(const ClientRequest& request);
  // Connections opened so far (a measure of reuse for tests and status).
  uint64_t connections_opened() const { return opened_; }

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
  uint64_t opened_ = 0;
};

}  // namespace meshwork::http
