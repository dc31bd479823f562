// central's gRPC port. gRPC 1.51 does not bound what one client can make it hold
// (streams opened before the client acknowledges SETTINGS, unfinished header blocks:
// frame_gate.h), so central does not let gRPC listen: the gate accepts each TCP connection
// itself, refuses it beyond `max_connections` in all or `max_per_address` from one client
// address, and relays it to gRPC over a socket pair (grpc::AddInsecureChannelFromFd),
// reading the client's frame headers on the way (`ClientFrameCheck`). A client that breaks
// a rule gets a GOAWAY naming it and is disconnected before the offending frame reaches
// gRPC; one that has not acknowledged the server's SETTINGS within `handshake_timeout` gets
// GOAWAY SETTINGS_TIMEOUT. Each direction relays through one buffer of `buffer_bytes` and
// reads again only once it was written: a peer that stops reading stops its sender.
// A connection must also carry, within `auth_timeout`, a call that presents the cluster token
// (the services say so through Vouch()); one that does not — a client holding streams open
// without ever authenticating, or a Routing.Route client without the token — gets GOAWAY
// (NO_ERROR, rule `auth_timeout`) and is closed: an unauthenticated client cannot keep what
// its streams make gRPC hold.
//
// gRPC sees every connection as coming from a socket pair; the gate logs the client's
// address with each refusal (`grpc_gate_refused`) and counts them in
// `meshwork_grpc_gate_refused_total{rule}`; `meshwork_grpc_gate_connections` is the number
// relayed now.
//
// Threading: one thread of its own runs the acceptor and every relay. Start() and Stop()
// from one owning thread, each once; Stop() joins the thread and closes every connection,
// and must come before the gRPC server is destroyed. Handshake and drain deadlines are
// Asio timers on the real clock; the flood windows read the injected `Clock`.
#pragma once

#include <grpcpp/server.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "central/rpc/frame_gate.h"
#include "common/time/clock.h"
#include "prometheus/registry.h"

namespace meshwork::central {

struct GrpcGateOptions {
  std::string listen = "127.0.0.1:0";  // host:port
  size_t max_connections = 4096;
  size_t max_per_address = 64;
  std::chrono::milliseconds handshake_timeout{10'000};
  std::chrono::milliseconds auth_timeout{10'000};  // 0: no such deadline
  size_t buffer_bytes = 32 * 1024;
  FrameGateLimits limits;
};

class GrpcGate {
 public:
  GrpcGate(GrpcGateOptions options, const Clock& clock, prometheus::Registry* metrics);
  ~GrpcGate();
  GrpcGate(const GrpcGate&) = delete;
  GrpcGate& operator=(const GrpcGate&) = delete;

  // Binds the listener and starts relaying to `server` (built and started, no listening
  // port of its own needed). Returns the bound port.
  absl::StatusOr<int> Start(grpc::Server* server);
  void Stop();
  // A call on the connection gRPC names `peer` (grpc::ServerContext::peer(), "fd:N" for the
  // gate's connections) presented a valid cluster token: the connection is kept past
  // auth_timeout. Thread-safe; callable from gRPC's threads before Start() and after Stop()
  // (then it does nothing).
  void Vouch(const std::string& peer);

  struct Impl;  // the acceptor, the relays' io_context and thread (grpc_gate.cc)

 private:
  absl::Mutex mu_;  // guards impl_ against Vouch() while Stop() resets it
  std::unique_ptr<Impl> impl_ ABSL_GUARDED_BY(mu_);
};

}  // namespace meshwork::central
