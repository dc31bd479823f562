#include "central/rpc/control_service.h"

#include "absl/strings/str_cat.h"
#include "boost/asio/post.hpp"
#include "central/cluster/config_push.h"
#include "central/model/json_fields.h"
#include "common/log/log.h"
#include "common/status/grpc_status.h"
#include "common/status/status_map.h"
#include "common/sync/bounded_queue.h"

namespace meshwork::central {
namespace {

constexpr char kUnauthenticated[] =
    "a valid cluster token is required (metadata authorization: Bearer <token>)";

// A Session refused before it started: finished at once, holds nothing, reads nothing.
class RefusedSession final : public grpc::ServerBidiReactor<v1::SessionMessage, v1::ConfigUpdate> {
 public:
  RefusedSession() { Finish(grpc::Status(grpc::StatusCode::UNAUTHENTICATED, kUnauthenticated)); }
  void OnDone() override { delete this; }
};

// Write queue bound: a node that stops reading gets its session closed instead of letting
// central buffer without limit.
constexpr size_t kMaxQueuedUpdates = 64;
// One load report (A-9's 5 000 login sessions are ~375 KB; a thousand streams ~100 KB):
// below the 1 MiB central shares through etcd with the node's registration beside it.
constexpr size_t kMaxReportBytes = 768u << 10;
// And their bytes: a node that stops reading holds at most this much of central's memory.
constexpr size_t kMaxQueuedBytes = 32u << 20;

class SessionReactor;

// The registry's handle on a reactor. The reactor may finish at any time; `alive` guards
// every call into it.
class ReactorChannel final : public NodeChannel {
 public:
  explicit ReactorChannel(SessionReactor* reactor) : reactor_(reactor) {}
  void ConfigChanged(std::shared_ptr<const ClusterConfig> config) override;
  void OttViewsChanged(const v1::OttGroupViews& views) override;
  void Evict() override;
  void Orphan() {
    absl::MutexLock lock(&mu_);
    reactor_ = nullptr;
  }

 private:
  absl::Mutex mu_;
  SessionReactor* reactor_ ABSL_GUARDED_BY(mu_);
};

class SessionReactor final : public grpc::ServerBidiReactor<v1::SessionMessage, v1::ConfigUpdate> {
 public:
  // `may_act_as(node)`: whether the call's token may open a Session as that node (M-3).
  SessionReactor(ConfigService* config, NodeRegistry* registry, size_t max_sessions,
                 std::function<grpc::Status(const std::string&)> may_act_as)
      : config_(config),
        registry_(registry),
        max_sessions_(max_sessions),
        may_act_as_(std::move(may_act_as)) {
    channel_ = std::make_shared<ReactorChannel>(this);
    StartRead(&in_);
  }

  // Pushes what changed since the last revision sent. Any thread; never blocks.
  void Push(const ClusterConfig& config) {
    absl::MutexLock lock(&mu_);
    if (finished_ || node_id_.empty()) return;
    if (config.revision <= sent_revision_) return;
    v1::OttGroupViews views;
    if (sent_revision_ == 0 || sent_revision_ > config.revision) {
      views = registry_->OttViews(node_id_);  // a full update carries them
    }
    v1::ConfigUpdate update = BuildConfigUpdate(config, node_id_, sent_revision_, &views);
    sent_revision_ = config.revision;
    // A change to another node's settings (or anything this node does not receive) is not
    // sent: with N nodes registering that would be N² messages. The node's revision then
    // lags, which is harmless: on reconnect it gets every section changed since it.
    if (!HasSections(update)) return;
    EnqueueLocked(std::move(update));
  }

  // O-6/O-15: the node's OTT group views, on their own, at the revision already sent. Any
  // thread; never blocks.
  void PushOttViews(const v1::OttGroupViews& views) {
    absl::MutexLock lock(&mu_);
    if (finished_ || node_id_.empty()) return;
    EnqueueLocked(OttViewsUpdate(sent_revision_, views));
  }

  // A newer session of this node replaced this one (NodeRegistry::Attach). Any thread.
  void Evict() {
    absl::MutexLock lock(&mu_);
    if (finished_) return;
    log::Warn("session_replaced", {{"node", node_id_}, {"reason", "a newer session of the node"}});
    FinishLocked(
        grpc::Status(grpc::StatusCode::ABORTED, "replaced by a newer session of the node"));
  }

  // grpc::ServerBidiReactor
  void OnReadDone(bool ok) override {
    if (!ok) {  // the node closed its side or the connection broke
      absl::MutexLock lock(&mu_);
      FinishLocked(grpc::Status::OK);
      return;
    }
    if (in_.has_hello()) {
      if (!OnHello(in_.hello())) return;
    } else if (in_.has_report()) {
      std::string node;
      {
        absl::MutexLock lock(&mu_);
        node = node_id_;
      }
      if (node.empty()) {
        absl::MutexLock lock(&mu_);
        FinishLocked(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                                  "the first Session message must be a hello"));
        return;
      }
      // a report is a few KiB per hundred streams; one past kMaxReportBytes (a node
      // gone wrong, or a stolen token) ends the session instead of costing every central
      // its sorting, sharing (etcd refuses large requests) and routing.
      if (in_.report().ByteSizeLong() > kMaxReportBytes) {
        absl::MutexLock lock(&mu_);
        FinishLocked(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                                  absl::StrCat("a load report of ", in_.report().ByteSizeLong(),
                                               " bytes: at most ", kMaxReportBytes)));
        return;
      }
      registry_->Report(node, in_.report());
    }
    StartRead(&in_);
  }

  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    queue_.Pop();
    if (!ok) {
      FinishLocked(grpc::Status::OK);
      return;
    }
    if (!queue_.empty() && !finished_) {
      StartWrite(&queue_.front());
    } else {
      writing_ = false;
    }
  }

  void OnDone() override {
    std::string node;
    {
      absl::MutexLock lock(&mu_);
      node = node_id_;
    }
    channel_->Orphan();
    if (!node.empty()) {
      registry_->Detach(node, channel_.get());
      log::Info("session_closed", {{"node", node}});
    }
    delete this;
  }

  void OnCancel() override {
    absl::MutexLock lock(&mu_);
    FinishLocked(grpc::Status::CANCELLED);
  }

 private:
  bool OnHello(const v1::SessionHello& hello) {
    {
      absl::MutexLock lock(&mu_);
      if (!node_id_.empty()) {
        FinishLocked(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "hello sent twice"));
        return false;
      }
      if (!IsValidName(hello.node_id())) {
        FinishLocked(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                  "node_id must match [a-z0-9][a-z0-9._-]{0,63}"));
        return false;
      }
    }
    if (grpc::Status allowed = may_act_as_(hello.node_id()); !allowed.ok()) {
      absl::MutexLock lock(&mu_);
      FinishLocked(std::move(allowed));
      return false;
    }
    // a session is for a node that registered (its streamer object exists); one node id
    // holds a few sessions at most, the newest winning (each has a queue of updates).
    if (!config_->Current()->streamers.contains(hello.node_id())) {
      absl::MutexLock lock(&mu_);
      FinishLocked(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                                "node " + hello.node_id() + " has not registered"));
      return false;
    }
    {
      absl::MutexLock lock(&mu_);
      node_id_ = hello.node_id();
      sent_revision_ = hello.revision();
    }
    registry_->Attach(hello.node_id(), channel_, max_sessions_);
    log::Info("session_open", {{"node", hello.node_id()}, {"revision", hello.revision()}});
    Push(*config_->Current());
    return true;
  }

  void EnqueueLocked(v1::ConfigUpdate update) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const size_t bytes = update.ByteSizeLong();
    // (An update larger than the byte bound on its own is still sent when nothing is queued.)
    if (!queue_.empty() && !queue_.Fits(bytes)) {
      log::Warn("session_overflow", {{"node", node_id_}});
      FinishLocked(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "config queue overflow"));
      return;
    }
    queue_.Push(std::move(update), bytes);
    if (!writing_) {
      writing_ = true;
      StartWrite(&queue_.front());
    }
  }

  void FinishLocked(grpc::Status status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_) return;
    finished_ = true;
    Finish(std::move(status));
  }

  ConfigService* config_;
  NodeRegistry* registry_;
  const size_t max_sessions_;
  const std::function<grpc::Status(const std::string&)> may_act_as_;
  std::shared_ptr<ReactorChannel> channel_;
  v1::SessionMessage in_;
  absl::Mutex mu_;
  std::string node_id_ ABSL_GUARDED_BY(mu_);
  uint64_t sent_revision_ ABSL_GUARDED_BY(mu_) = 0;
  // Counted in ByteSizeLong; the front is the update being written.
  BoundedQueue<v1::ConfigUpdate> queue_ ABSL_GUARDED_BY(mu_){kMaxQueuedUpdates, kMaxQueuedBytes};
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

void ReactorChannel::ConfigChanged(std::shared_ptr<const ClusterConfig> config) {
  absl::MutexLock lock(&mu_);
  if (reactor_) reactor_->Push(*config);
}

void ReactorChannel::Evict() {
  absl::MutexLock lock(&mu_);
  if (reactor_) reactor_->Evict();
}

void ReactorChannel::OttViewsChanged(const v1::OttGroupViews& views) {
  absl::MutexLock lock(&mu_);
  if (reactor_) reactor_->PushOttViews(views);
}

}  // namespace

ControlService::ControlService(ConfigService* config, NodeRegistry* registry,
                               boost::asio::thread_pool* pool, crypto::TokenFile* cluster_tokens,
                               prometheus::Registry* metrics, const Clock& clock)
    : config_(config),
      registry_(registry),
      pool_(pool),
      cluster_tokens_(cluster_tokens),
      clock_(clock) {
  if (metrics) {
    auto& family = prometheus::BuildCounter()
                       .Name("meshwork_control_auth_failures_total")
                       .Help("Control-channel calls refused for a missing or wrong cluster token")
                       .Register(*metrics);
    register_refused_ = &family.Add({{"rpc", "register"}});
    session_refused_ = &family.Add({{"rpc", "session"}});
    upstreams_refused_ = &family.Add({{"rpc", "upstreams"}});
    nodes_refused_ = &family.Add({{"rpc", "nodes"}});
  }
}

std::optional<std::string> CallPrincipal(const grpc::CallbackServerContext& context,
                                         crypto::TokenFile* cluster_tokens) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) return std::nullopt;
  return cluster_tokens->Principal(
      crypto::BearerToken(std::string_view(it->second.data(), it->second.size())));
}

bool CarriesClusterToken(const grpc::CallbackServerContext& context,
                         crypto::TokenFile* cluster_tokens) {
  return CallPrincipal(context, cluster_tokens).has_value();
}

grpc::Status MayActAsNode(crypto::TokenFile& cluster_tokens, const std::string& principal,
                          const std::string& node_id) {
  if (principal.empty() ? !cluster_tokens.HasOwnToken(node_id) : principal == node_id) {
    return grpc::Status::OK;
  }
  return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                      principal.empty()
                          ? "node " + node_id + " has a token of its own: present it"
                          : "this token is node " + principal + "'s, not node " + node_id + "'s");
}

std::optional<std::string> ControlService::Authenticate(const grpc::CallbackServerContext& context,
                                                        std::string_view rpc) {
  std::optional<std::string> principal = CallPrincipal(context, cluster_tokens_);
  if (principal) {
    if (on_authenticated_) on_authenticated_(context.peer());
    return principal;
  }
  const bool presented = context.client_metadata().count("authorization") > 0;
  Refused(rpc, context.peer(), presented ? "rejected" : "absent", "");
  return std::nullopt;
}

void ControlService::Refused(std::string_view rpc, const std::string& peer, std::string_view token,
                             const std::string& node) {
  prometheus::Counter* counter = rpc == "register"    ? register_refused_
                                 : rpc == "upstreams" ? upstreams_refused_
                                 : rpc == "nodes"     ? nodes_refused_
                                                      : session_refused_;
  if (counter) counter->Increment();
  // One line a second at most: a flood of refusals must not become a flood of log lines.
  const int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(clock_.Monotonic().time_since_epoch())
          .count();
  uint64_t earlier = 0;
  if (refusal_log_.Allow(now_ms, &earlier)) {
    log::Warn("control_auth_failed", {{"rpc", rpc},
                                      {"peer", peer},
                                      {"token", token},
                                      {"node", node},
                                      {"unlogged_before", earlier}});
  }
}

grpc::ServerUnaryReactor* ControlService::Upstreams(grpc::CallbackServerContext* context,
                                                    const v1::UpstreamsRequest* request,
                                                    v1::UpstreamsResponse* response) {
  auto* reactor = context->DefaultReactor();
  if (!Authenticated(*context, "upstreams")) {
    reactor->Finish(grpc::Status(grpc::StatusCode::UNAUTHENTICATED, kUnauthenticated));
    return reactor;
  }
  if (routing_ == nullptr) {
    reactor->Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "routing is not ready"));
    return reactor;
  }
  auto snapshot = routing_->snapshot();
  for (const RouteNode* node :
       routing_->Upstreams(*snapshot, request->stream(), request->node_id())) {
    auto* u = response->add_upstreams();
    u->set_node_id(node->id);
    u->set_base_url(RoutingService::InternalUrl(*node));
    if (node->zone >= 0) u->set_zone(snapshot->zones()[node->zone].name);
    u->set_timeline_fingerprint(registry_->TimelineFingerprint(node->id, request->stream()));
  }
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* ControlService::Nodes(grpc::CallbackServerContext* context,
                                                const v1::NodesRequest* request,
                                                v1::NodesResponse* response) {
  auto* reactor = context->DefaultReactor();
  if (!Authenticated(*context, "nodes")) {
    reactor->Finish(grpc::Status(grpc::StatusCode::UNAUTHENTICATED, kUnauthenticated));
    return reactor;
  }
  if (routing_ == nullptr || request->node_ids_size() > 64) {
    reactor->Finish(
        routing_ == nullptr
            ? grpc::Status(grpc::StatusCode::UNAVAILABLE, "routing is not ready")
            : grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "node_ids: at most 64 per call"));
    return reactor;
  }
  auto snapshot = routing_->snapshot();
  auto now = registry_->clock().Monotonic();
  for (const auto& id : request->node_ids()) {
    int index = snapshot->NodeIndex(id);
    if (index < 0) continue;
    const RouteNode& node = snapshot->nodes()[index];
    auto* out = response->add_nodes();
    out->set_node_id(node.id);
    out->set_base_url(RoutingService::InternalUrl(node));
    out->set_publish_url(RoutingService::PublishUrl(node));
    out->set_online(node.live && node.live->Online(now, registry_->offline_after()));
  }
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* ControlService::Register(grpc::CallbackServerContext* context,
                                                   const v1::RegisterRequest* request,
                                                   v1::RegisterResponse* response) {
  auto* reactor = context->DefaultReactor();
  const std::optional<std::string> principal = Authenticate(*context, "register");
  if (!principal) {
    reactor->Finish(grpc::Status(grpc::StatusCode::UNAUTHENTICATED, kUnauthenticated));
    return reactor;
  }
  if (!IsValidName(request->node_id())) {
    reactor->Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                 "node_id must match [a-z0-9][a-z0-9._-]{0,63}"));
    return reactor;
  }
  if (grpc::Status allowed = MayActAsNode(*cluster_tokens_, *principal, request->node_id());
      !allowed.ok()) {
    Refused("register", context->peer(), "not this node's", request->node_id());
    reactor->Finish(allowed);
    return reactor;
  }
  if (request->role() == v1::ROLE_UNSPECIFIED) {
    reactor->Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "role is required"));
    return reactor;
  }
  if (request->protocol_version() != v1::kProtocolVersion) {
    log::Warn("register_protocol_mismatch",
              {{"node", request->node_id()}, {"protocol_version", request->protocol_version()}});
  }
  boost::asio::post(*pool_, [this, reactor, request, response] {
    auto created =
        config_->EnsureStreamer(request->node_id(), request->hostname(), request->role());
    if (!created.ok()) {
      reactor->Finish(ToGrpcStatus(created.status()));
      return;
    }
    registry_->Registered(*request);
    auto config = config_->Current();
    v1::OttGroupViews views = registry_->OttViews(request->node_id());
    *response->mutable_snapshot() = BuildConfigUpdate(*config, request->node_id(), 0, &views);
    response->set_report_interval_ms(kReportIntervalMs);
    log::Info("node_registered", {{"node", request->node_id()},
                                  {"hostname", request->hostname()},
                                  {"version", request->version()},
                                  {"revision", config->revision}});
    reactor->Finish(grpc::Status::OK);
  });
  return reactor;
}

grpc::ServerBidiReactor<v1::SessionMessage, v1::ConfigUpdate>* ControlService::Session(
    grpc::CallbackServerContext* context) {
  std::optional<std::string> principal = Authenticate(*context, "session");
  if (!principal) return new RefusedSession();
  return new SessionReactor(
      config_, registry_, max_sessions_per_node_,
      [this, principal = std::move(*principal), peer = context->peer()](const std::string& node) {
        grpc::Status allowed = MayActAsNode(*cluster_tokens_, principal, node);
        if (!allowed.ok()) Refused("session", peer, "not this node's", node);
        return allowed;
      });
}

}  // namespace meshwork::central
