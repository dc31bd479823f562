// gRPC meshwork.v1.Control (C-1…C-4) on the callback API.
//
// Authentication (M-3): every RPC needs `authorization: Bearer <cluster token>` metadata, the
// token being one of the lines of the cluster token file. Without it, Register answers
// UNAUTHENTICATED before looking at the request (no configuration, no viewing key, nothing
// stored), and Session is finished with UNAUTHENTICATED by a stateless reactor before any
// message is read. Each refusal counts in `meshwork_control_auth_failures_total{rpc}` and is
// logged (at most one line a second, with the number of refusals since the last line and the
// peer's address); the presented value is never logged.
//
// Register runs its (synced) store write on the blocking pool and finishes from there.
// Each Session is a reactor: reads are always outstanding (hello, then reports); writes go
// through a queue so config pushes from any thread never block and never overlap.
#pragma once

#include <atomic>
#include <functional>
#include <optional>

#include "boost/asio/thread_pool.hpp"
#include "central/cluster/node_registry.h"
#include "central/model/config_service.h"
#include "central/routing/routing_service.h"
#include "common/crypto/token_file.h"
#include "common/log/log.h"
#include "common/time/clock.h"
#include "meshwork/v1/control.grpc.pb.h"
#include "meshwork/v1/protocol.h"
#include "prometheus/counter.h"
#include "prometheus/registry.h"

namespace meshwork::central {

inline constexpr uint32_t kReportIntervalMs = 1000;

class ControlService final : public meshwork::v1::Control::CallbackService {
 public:
  // All pointers must outlive the service. `cluster_tokens` is required; `metrics` may be
  // null (no counters then). `clock` paces the refusal log lines.
  ControlService(ConfigService* config, NodeRegistry* registry, boost::asio::thread_pool* pool,
                 crypto::TokenFile* cluster_tokens, prometheus::Registry* metrics,
                 const Clock& clock = RealClock::Get());

  // meshwork::v1::Control::CallbackService
  grpc::ServerUnaryReactor* Register(grpc::CallbackServerContext* context,
                                     const meshwork::v1::RegisterRequest* request,
                                     meshwork::v1::RegisterResponse* response) override;
  grpc::ServerBidiReactor<meshwork::v1::SessionMessage, meshwork::v1::ConfigUpdate>* Session(
      grpc::CallbackServerContext* context) override;
  // S-19: answered inline from the routing snapshot (no store read, no blocking).
  grpc::ServerUnaryReactor* Upstreams(grpc::CallbackServerContext* context,
                                      const meshwork::v1::UpstreamsRequest* request,
                                      meshwork::v1::UpstreamsResponse* response) override;
  // S-23: answered inline from the routing snapshot.
  grpc::ServerUnaryReactor* Nodes(grpc::CallbackServerContext* context,
                                  const meshwork::v1::NodesRequest* request,
                                  meshwork::v1::NodesResponse* response) override;
  // Where Upstreams and Nodes look; set once before the server starts. Without it Upstreams answers
  // UNAVAILABLE.
  void set_routing(const RoutingService* routing) { routing_ = routing; }
  // Called with the call's peer (ServerContext::peer()) whenever a call presents a valid
  // cluster token (GrpcGate::Vouch: such a connection is kept). Set once before the server
  // starts; any gRPC thread calls it.
  void set_on_authenticated(std::function<void(const std::string& peer)> fn) {
    on_authenticated_ = std::move(fn);
  }
  // Sessions one node id holds at once (default 4; a newer one ends the oldest); set
  // before the server starts.
  void set_max_sessions_per_node(size_t n) { max_sessions_per_node_ = n; }

 private:
  // Who the call's token speaks for when the file accepts it: "" for a cluster-wide token, a
  // node id for a node's own (`node=ID` line); otherwise nullopt, the refusal counted and
  // logged. Any gRPC thread.
  std::optional<std::string> Authenticate(const grpc::CallbackServerContext& context,
                                          std::string_view rpc);
  bool Authenticated(const grpc::CallbackServerContext& context, std::string_view rpc) {
    return Authenticate(context, rpc).has_value();
  }
  // Counts a refused call and logs it (one line a second at most). Any gRPC thread.
  void Refused(std::string_view rpc, const std::string& peer, std::string_view token,
               const std::string& node);

  ConfigService* config_;
  NodeRegistry* registry_;
  boost::asio::thread_pool* pool_;
  crypto::TokenFile* cluster_tokens_;
  const Clock& clock_;
  const RoutingService* routing_ = nullptr;
  prometheus::Counter* register_refused_ = nullptr;
  prometheus::Counter* session_refused_ = nullptr;
  prometheus::Counter* upstreams_refused_ = nullptr;
  prometheus::Counter* nodes_refused_ = nullptr;
  log::Throttle refusal_log_{1000};  // one refusal line a second (clock_'s monotonic time)
  std::function<void(const std::string&)> on_authenticated_;
  size_t max_sessions_per_node_ = 4;
};

// M-3: whether `principal` (ControlService::Authenticate) may register or open a Session as
// node `node_id`: a node's own token for that node alone, and a cluster-wide token for any
// node the file gives no token of its own. PERMISSION_DENIED naming the node otherwise.
grpc::Status MayActAsNode(crypto::TokenFile& cluster_tokens, const std::string& principal,
                          const std::string& node_id);

// Who the call's `Authorization: Bearer <token>` speaks for (TokenFile::Principal), nullopt
// when it carries none the file accepts.
std::optional<std::string> CallPrincipal(const grpc::CallbackServerContext& context,
                                         crypto::TokenFile* cluster_tokens);
// Whether the call carries `Authorization: Bearer <token>` with a token the file accepts.
bool CarriesClusterToken(const grpc::CallbackServerContext& context,
                         crypto::TokenFile* cluster_tokens);

}  // namespace meshwork::central
