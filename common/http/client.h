// A small HTTP/1.1 client on Beast: one request per connection, a deadline on the whole
// exchange, a bound on the response body. Hosts are numeric addresses or names resolved by
// the system resolver.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "boost/asio/any_io_executor.hpp"
#include "common/http/types.h"

namespace meshwork::http {

struct ClientRequest {
  std::string host;  // "127.0.0.1" or "[::1]" or a name
  uint16_t port = 80;
  Verb method = Verb::get;
  std::string target = "/";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::chrono::milliseconds timeout{5000};
  uint64_t body_limit_bytes = 64 * 1024 * 1024;
};

using FetchCallback = std::function<void(absl::StatusOr<Response>)>;

// Starts the exchange on `executor`; `done` runs there exactly once. DeadlineExceeded when
// the timeout passes, Unavailable when the connection fails.
void AsyncFetch(boost::asio::any_io_executor executor, ClientRequest request, FetchCallback done);

// Blocking form for tools and tests (runs its own io_context on the calling thread).
absl::StatusOr<Response> Fetch(ClientRequest request);

}  // namespace meshwork::http
