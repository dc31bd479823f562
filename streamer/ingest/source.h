// Network sources of MPEG-TS bytes for a stream's `inputs` (S-1): `udp://`, `srt://`,
// `http://` pull. (`publish://` push arrives through the publish listener instead.)
//
// A Source runs on its own thread(s) and hands every chunk it receives to its callback, in
// order, from one thread at a time. Callbacks must be quick (they feed a demuxer). A source
// that loses its transport keeps trying to get it back (reconnect with backoff, or simply
// keeps listening) until Stop(); it never gives up on its own.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "absl/status/statusor.h"

namespace meshwork::ingest {

using BytesCallback = std::function<void(std::span<const uint8_t>)>;

class Source {
 public:
  virtual ~Source() = default;  // implementations Stop() in their destructor
  // Stops receiving; idempotent; no callback runs after it returns.
  virtual void Stop() = 0;
  // The URL it was made from (for logs and status).
  virtual const std::string& url() const = 0;
  // Bytes received so far (for metrics and the load report).
  virtual uint64_t bytes_received() const = 0;
};

// Parses `url` and starts receiving. InvalidArgument (naming the URL) for a malformed or
// unsupported URL; Unavailable when a listening socket cannot be bound.
//   udp://HOST:PORT[?localaddr=IP]       unicast (HOST = local bind address, e.g. 0.0.0.0 or
//                                         127.0.0.1) or multicast (HOST in 224.0.0.0/4: join
//                                         the group on `localaddr` or any interface)
//   srt://HOST:PORT?mode=listener|caller[&latency=MS][&streamid=…][&passphrase=…]
//   http://HOST:PORT/path               continuous MPEG-TS pull; reconnects with jittered
//                                         backoff 100 ms … 5 s
absl::StatusOr<std::unique_ptr<Source>> StartSource(const std::string& url, BytesCallback on_bytes);

}  // namespace meshwork::ingest
