#include "tools/simnodes/sim_node.h"

#include <algorithm>

#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "meshwork/v1/protocol.h"

namespace meshwork::sim {

namespace {

using std::chrono::milliseconds;
using SteadyTime = std::chrono::steady_clock::time_point;

constexpr milliseconds kBackoffMin{100};
constexpr milliseconds kBackoffMax{5000};

}  // namespace

// kNew: not yet counted anywhere. kOpening: registered, the hello not yet written.
enum class SimCluster::NodeState : int { kNew, kWaiting, kRegistering, kOpening, kOpen, kKilled };

// One simulated node. Guarded by the cluster's mu_; shared with its in-flight calls, which
// may outlive its place in nodes_ (a killed id added again gets a new Node).
struct SimCluster::Node {
  SimNodeSpec spec;
  v1::Control::Stub* stub = nullptr;  // fixed at creation
  NodeState state = NodeState::kNew;
  SteadyTime next_attempt;
  milliseconds backoff = kBackoffMin;
  uint64_t revision = 0;                // of the last configuration received
  RegisterCall* registering = nullptr;  // while a Register call is in flight
  Session* session = nullptr;           // the current session, until its OnDone
  SteadyTime next_report;
};

struct SimCluster::RegisterCall {
  std::shared_ptr<Node> node;
  v1::Control::Stub* stub = nullptr;
  grpc::ClientContext ctx;
  v1::RegisterRequest request;
  v1::RegisterResponse response;
};

// The reactor of one node's Session. Lifetime: created once Register succeeded, deleted in
// OnDone. OnDone cannot run while the hold taken in Start() is present, and only the ticker
// thread (or the cluster's destructor, after the ticker stopped) removes that hold, after
// which nothing more is started on the stream. The same thread is the only one to start
// report writes, so it never starts one on a finished stream.
class SimCluster::Session final
    : public grpc::ClientBidiReactor<v1::SessionMessage, v1::ConfigUpdate> {
 public:
  Session(SimCluster* cluster, std::shared_ptr<Node> node)
      : cluster_(cluster), node_(std::move(node)) {}

  void Start(v1::Control::Stub* stub, const std::string& authorization, const std::string& node_id,
             uint64_t revision) {
    ctx_.AddMetadata("authorization", authorization);
    hello_.mutable_hello()->set_node_id(node_id);
    hello_.mutable_hello()->set_revision(revision);
    stub->async()->Session(&ctx_, this);
    AddHold();
    hello_in_flight_ = true;
    write_pending_.store(true);
    StartWrite(&hello_);
    StartRead(&in_);
    StartCall();
  }

  // Any thread, while the reactor exists (the caller holds the cluster's mu_ and the
  // session is still listed, so OnDone has not finished).
  void Cancel() { ctx_.TryCancel(); }

  Node& node() const { return *node_; }
  bool broken() const { return broken_.load(); }
  bool write_pending() const { return write_pending_.load(); }

  // Ticker only, while no write is pending: fill the report, mark, then SendReport().
  v1::LoadReport* PrepareReport() {
    out_.Clear();
    write_pending_.store(true);
    return out_.mutable_report();
  }
  void SendReport() { StartWrite(&out_); }

  bool hold_released = false;  // guarded by the cluster's mu_

  void OnWriteDone(bool ok) override {
    const bool hello = hello_in_flight_;
    hello_in_flight_ = false;
    if (ok) {
      cluster_->SessionWriteDone(node_, this, hello);
    } else {
      broken_.store(true);
    }
    write_pending_.store(false);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {  // central finished the stream, the connection broke, or we cancelled
      broken_.store(true);
      return;
    }
    cluster_->SessionUpdate(node_, in_);
    StartRead(&in_);
  }

  void OnDone(const grpc::Status&) override {
    SimCluster* cluster = cluster_;
    cluster->SessionDone(node_, this);
    delete this;
    cluster->SessionDeleted();
  }

 private:
  SimCluster* const cluster_;
  const std::shared_ptr<Node> node_;
  grpc::ClientContext ctx_;
  v1::SessionMessage hello_;
  v1::SessionMessage out_;
  v1::ConfigUpdate in_;
  bool hello_in_flight_ = false;  // set before a write starts, read in its OnWriteDone
  std::atomic<bool> write_pending_{false};
  std::atomic<bool> broken_{false};
};

SimCluster::SimCluster(std::string central_grpc_address, std::string cluster_token,
                       milliseconds report_interval)
    : central_(std::move(central_grpc_address)),
      authorization_("Bearer " + cluster_token),
      interval_(std::max(report_interval, milliseconds(1))) {
  ticker_ = std::thread([this] { TickerLoop(); });
}

SimCluster::~SimCluster() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (ticker_.joinable()) ticker_.join();

  std::vector<Session*> releases;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [id, node] : nodes_) {
      if (node->registering) node->registering->ctx.TryCancel();
    }
    auto registers_done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return registers_in_flight_ == 0;
    };
    mu_.Await(absl::Condition(&registers_done));
    // No Register callback runs any more, so sessions_ is complete and no longer grows.
    for (Session* session : sessions_) {
      session->Cancel();
      if (!session->hold_released) {
        session->hold_released = true;
        releases.push_back(session);
      }
    }
  }
  for (Session* session : releases) session->RemoveHold();

  absl::MutexLock lock(&mu_);
  auto all_deleted = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return reactors_ == 0; };
  mu_.Await(absl::Condition(&all_deleted));
}

void SimCluster::SetBeforeReport(std::function<void(SimNodeSpec&)> hook) {
  absl::MutexLock lock(&mu_);
  before_report_ = std::move(hook);
}

void SimCluster::Add(const SimNodeSpec& spec) {
  std::vector<RegisterCall*> calls;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    auto it = nodes_.find(spec.id);
    if (it != nodes_.end() && it->second->state != NodeState::kKilled) {
      it->second->spec = spec;
      return;
    }
    auto node = std::make_shared<Node>();
    node->spec = spec;
    if (node->spec.hostname.empty()) node->spec.hostname = spec.id;
    node->stub = StubForNextNodeLocked();
    const auto now = std::chrono::steady_clock::now();
    node->next_attempt = now;
    SetStateLocked(*node, NodeState::kWaiting);
    nodes_[spec.id] = std::move(node);
    calls = TakeRegistrationsLocked(now);
  }
  StartRegistrations(calls);
}

void SimCluster::Update(const std::string& id, const std::function<void(SimNodeSpec&)>& change) {
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(id);
  if (it == nodes_.end()) return;
  SimNodeSpec& spec = it->second->spec;
  change(spec);
  spec.id = id;
}

void SimCluster::Kill(const std::string& id) {
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(id);
  if (it == nodes_.end()) return;
  Node& node = *it->second;
  if (node.state == NodeState::kKilled) return;
  if (node.registering) node.registering->ctx.TryCancel();
  if (node.session) node.session->Cancel();  // the ticker then removes its hold
  SetStateLocked(node, NodeState::kKilled);
}

bool SimCluster::WaitRegistered(milliseconds timeout) {
  absl::MutexLock lock(&mu_);
  auto all_open = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return open_ == live_; };
  return mu_.AwaitWithTimeout(absl::Condition(&all_open), absl::FromChrono(timeout));
}

SimStats SimCluster::stats() const {
  SimStats stats;
  {
    absl::MutexLock lock(&mu_);
    stats.nodes = live_;
    stats.waiting = waiting_;
    stats.registering = registers_in_flight_;
    stats.opening = opening_;
    stats.open = open_;
  }
  stats.reports_sent = reports_sent_.load();
  stats.reports_skipped = reports_skipped_.load();
  stats.config_updates_received = updates_received_.load();
  stats.register_failures = register_failures_.load();
  stats.sessions_lost = sessions_lost_.load();
  return stats;
}

size_t SimCluster::nodes() const {
  absl::MutexLock lock(&mu_);
  return live_;
}

size_t SimCluster::sessions_open() const {
  absl::MutexLock lock(&mu_);
  return open_;
}

void SimCluster::SetStateLocked(Node& node, NodeState next) {
  auto count = [this](NodeState state, int delta) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (state == NodeState::kOpen) open_ += delta;
    if (state == NodeState::kWaiting) waiting_ += delta;
    if (state == NodeState::kOpening) opening_ += delta;
    if (state != NodeState::kNew && state != NodeState::kKilled) live_ += delta;
  };
  count(node.state, -1);
  node.state = next;
  count(next, +1);
}

v1::Control::Stub* SimCluster::StubForNextNodeLocked() {
  const size_t index = nodes_added_++ / kNodesPerChannel;
  while (stubs_.size() <= index) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 2000);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 2000);
    args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
    args.SetInt(GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, 64 << 20);
    // A subchannel pool of its own plus a distinct argument: every channel of the pool gets
    // its own connection instead of sharing one.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetInt("meshwork.sim_channel_index", static_cast<int>(stubs_.size()));
    auto channel = grpc::CreateCustomChannel(central_, grpc::InsecureChannelCredentials(), args);
    stubs_.push_back(v1::Control::NewStub(channel));
  }
  return stubs_[index].get();
}

std::vector<SimCluster::RegisterCall*> SimCluster::TakeRegistrationsLocked(SteadyTime now) {
  std::vector<RegisterCall*> calls;
  if (stopping_ || waiting_ == 0) return calls;
  for (auto& [id, node] : nodes_) {
    if (registers_in_flight_ >= kMaxRegistersInFlight) break;
    if (node->state != NodeState::kWaiting || node->next_attempt > now) continue;
    auto* call = new RegisterCall;
    call->node = node;
    call->stub = node->stub;
    const SimNodeSpec& spec = node->spec;
    v1::RegisterRequest& request = call->request;
    request.set_node_id(spec.id);
    request.set_version("sim");
    request.set_protocol_version(meshwork::v1::kProtocolVersion);
    request.set_role(spec.role);
    request.set_hostname(spec.hostname);
    request.add_addresses("127.0.0.1");
    v1::Listener* listener = request.add_listeners();
    listener->set_name("http");
    listener->set_scheme("http");
    listener->set_port(spec.http_port);
    call->ctx.set_deadline(std::chrono::system_clock::now() + kRegisterDeadline);
    call->ctx.AddMetadata("authorization", authorization_);
    node->registering = call;
    SetStateLocked(*node, NodeState::kRegistering);
    ++registers_in_flight_;
    calls.push_back(call);
  }
  return calls;
}

void SimCluster::StartRegistrations(const std::vector<RegisterCall*>& calls) {
  for (RegisterCall* call : calls) {
    call->stub->async()->Register(
        &call->ctx, &call->request, &call->response,
        [this, call](grpc::Status status) { OnRegistered(call, status); });
  }
}

void SimCluster::OnRegistered(RegisterCall* call, const grpc::Status& status) {
  std::shared_ptr<Node> node = call->node;
  Session* session = nullptr;
  std::string node_id;
  uint64_t revision = 0;
  {
    absl::MutexLock lock(&mu_);
    node->registering = nullptr;
    if (node->state == NodeState::kRegistering && !stopping_) {
      if (status.ok()) {
        node->revision = call->response.snapshot().revision();
        node_id = node->spec.id;
        revision = node->revision;
        // The node's session from here on (so Kill can cancel it and the hello's completion
        // finds it), but not listed for the ticker before it holds its hold.
        session = new Session(this, node);
        node->session = session;
        ++reactors_;
        SetStateLocked(*node, NodeState::kOpening);
      } else {
        register_failures_.fetch_add(1);
        RetryLaterLocked(*node, std::chrono::steady_clock::now());
      }
    }
  }
  v1::Control::Stub* stub = call->stub;
  delete call;

  if (session) session->Start(stub, authorization_, node_id, revision);
  std::vector<RegisterCall*> more;
  {
    absl::MutexLock lock(&mu_);
    if (session) {
      sessions_.insert(session);
      if (node->state == NodeState::kKilled || stopping_) session->Cancel();
    }
    --registers_in_flight_;  // last: the destructor waits for it
    more = TakeRegistrationsLocked(std::chrono::steady_clock::now());
  }
  StartRegistrations(more);
}

void SimCluster::RetryLaterLocked(Node& node, SteadyTime now) {
  const auto wait = milliseconds(
      absl::Uniform<int64_t>(rng_, node.backoff.count() / 2, node.backoff.count() + 1));
  node.backoff = std::min(kBackoffMax, node.backoff * 2);
  node.next_attempt = now + wait;
  SetStateLocked(node, NodeState::kWaiting);
}

void SimCluster::TickerLoop() {
  const milliseconds tick = std::clamp(interval_ / 20, milliseconds(5), milliseconds(50));
  while (true) {
    std::vector<Session*> sends;
    std::vector<Session*> releases;
    std::vector<RegisterCall*> registrations;
    {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(&stopping_), absl::FromChrono(tick));
      if (stopping_) return;
      const auto now = std::chrono::steady_clock::now();
      for (Session* session : sessions_) {
        if (session->hold_released) continue;
        Node& node = session->node();
        if (node.state == NodeState::kKilled || session->broken() || node.session != session) {
          session->hold_released = true;
          releases.push_back(session);
          continue;
        }
        if (node.state != NodeState::kOpen || now < node.next_report) continue;
        node.next_report += interval_;
        if (node.next_report <= now) node.next_report = now + interval_;  // no catch-up burst
        if (session->write_pending()) {
          reports_skipped_.fetch_add(1);
          continue;
        }
        if (before_report_) {
          const std::string id = node.spec.id;
          before_report_(node.spec);
          node.spec.id = id;
        }
        BuildReportLocked(node, *session->PrepareReport());
        sends.push_back(session);
      }
      registrations = TakeRegistrationsLocked(now);
    }
    // Outside the lock: reactions may run on other threads meanwhile and need it. Every
    // session here still holds its hold, so none can have been deleted.
    for (Session* session : sends) session->SendReport();
    for (Session* session : releases) session->RemoveHold();
    StartRegistrations(registrations);
  }
}

void SimCluster::BuildReportLocked(Node& node, v1::LoadReport& report) {
  const SimNodeSpec& spec = node.spec;
  report.set_node_clock_unix_ms(
      std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
  if (spec.play_sessions.has_value()) report.set_play_sessions(*spec.play_sessions);
  report.set_publish_sessions(0);
  if (spec.out_kbit.has_value()) report.set_out_kbit(*spec.out_kbit);
  report.set_in_kbit(0);
  report.set_cpu_percent(spec.cpu_percent);
  report.set_config_revision(node.revision);
  for (const SimStream& stream : spec.streams) {
    v1::StreamReport* s = report.add_streams();
    s->set_name(stream.name);
    s->set_working(stream.working);
  }
}

void SimCluster::SessionWriteDone(const std::shared_ptr<Node>& node, Session* session, bool hello) {
  if (!hello) {
    reports_sent_.fetch_add(1);
    return;
  }
  absl::MutexLock lock(&mu_);
  if (node->session == session && node->state == NodeState::kOpening) {
    node->backoff = kBackoffMin;
    node->next_report = std::chrono::steady_clock::now();  // first report at the next tick
    SetStateLocked(*node, NodeState::kOpen);
  }
}

void SimCluster::SessionUpdate(const std::shared_ptr<Node>& node, const v1::ConfigUpdate& update) {
  updates_received_.fetch_add(1);
  absl::MutexLock lock(&mu_);
  node->revision = update.revision();
}

void SimCluster::SessionDone(const std::shared_ptr<Node>& node, Session* session) {
  absl::MutexLock lock(&mu_);
  sessions_.erase(session);
  if (node->session != session) return;
  node->session = nullptr;
  if (node->state == NodeState::kKilled || stopping_) return;
  // Central ended the session or the connection broke: register again, as a streamer does.
  sessions_lost_.fetch_add(1);
  RetryLaterLocked(*node, std::chrono::steady_clock::now());
}

void SimCluster::SessionDeleted() {
  absl::MutexLock lock(&mu_);
  --reactors_;
}

}  // namespace meshwork::sim
