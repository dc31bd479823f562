// RTMP and RTMPS ingest listeners (S-1 rtmp): `rtmp://NODE[:PORT]/{app}/{stream key}` into
// the stream placed here whose inputs include an `rtmp://` URL.
//
// Each connection runs one rtmp::ServerSession. A publish is admitted only when the stream
// is placed on this node and takes an rtmp:// input, and its key carries a valid publish
// token where the stream has tokens (M-3: `{stream}?token=T` or `{stream}-T`); that is
// decided before any media is accepted. A second publisher of a live stream is refused
// unless it holds the token, which makes it take over (the first one's connection is then
// closed), as for HTTP push.
//
// Limits: `max_connections` at once (more are closed at accept), `handshake_timeout` from
// accept until the publish starts (TLS handshake, RTMP handshake, connect, publish),
// `idle_timeout` without a byte once publishing, `max_pending_write` bytes queued to a
// client that does not read (it is closed), and the chunk limits of rtmp::ChunkLimits.
//
// Threading: one io_context thread owns the acceptor and every connection; media goes from
// it into the stream's pipeline (which has its own lock). Start/Stop/ReloadTls from any
// thread; Stop() joins the thread, after which no callback runs.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/time/clock.h"
#include "prometheus/registry.h"
#include "streamer/delivery/publish_auth.h"
#include "streamer/packager/stream_manager.h"

namespace meshwork::streamer {

struct RtmpListenerOptions {
  std::string name = "rtmp";  // "rtmps" with TLS; in logs and metrics
  std::string listen;         // ADDR:PORT (port 0: any free port)
  std::string app = "live";
  // RTMPS when both are set (PEM files, as for HTTPS; ReloadTls() rereads them).
  std::string tls_cert_file;
  std::string tls_key_file;
  size_t max_connections = 256;
  // Of them, from one client address and not yet admitted to publish (handshake, connect,
  // publish in progress): beyond it a new connection is closed at accept.
  size_t max_unpublished_per_address = 16;
  std::chrono::milliseconds handshake_timeout{10000};
  std::chrono::milliseconds idle_timeout{30000};
  size_t max_pending_write = 1 << 20;
  const Clock* clock = nullptr;  // deadlines (Monotonic); null = the real clock
};

class RtmpListener {
 public:
  // Binds and starts serving. InvalidArgument for a bad address or unreadable certificate,
  // Unavailable when the port cannot be bound. `streams`, `auth` and `registry` (may be
  // null) must outlive the listener.
  static absl::StatusOr<std::unique_ptr<RtmpListener>> Start(RtmpListenerOptions options,
                                                             StreamManager* streams,
                                                             const PublishAuth* auth,
                                                             prometheus::Registry* registry);
  ~RtmpListener();  // Stop()

  void Stop();               // closes the acceptor and every connection; idempotent
  absl::Status ReloadTls();  // new connections use the reread certificate
  uint16_t port() const;
  std::string bound_address() const;

  class Impl;

 private:
  explicit RtmpListener(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace meshwork::streamer
