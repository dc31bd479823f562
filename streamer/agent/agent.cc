#include "streamer/agent/agent.h"

#include "absl/random/random.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/log/log.h"
#include "common/time/clock.h"
#include "grpcpp/grpcpp.h"
#include "streamer/agent/host_sampler.h"

namespace meshwork::streamer {

Agent::Agent(AgentOptions options, Snapshot<NodeConfig>* config, ReportFiller filler,
             prometheus::Registry* metrics)
    : options_(std::move(options)), config_(config), filler_(std::move(filler)) {
  for (absl::string_view part : absl::StrSplit(options_.central, ',', absl::SkipWhitespace())) {
    centrals_.emplace_back(absl::StripAsciiWhitespace(part));
  }
  if (centrals_.empty()) centrals_.push_back(options_.central);
  if (metrics) {
    revision_gauge_ = &prometheus::BuildGauge()
                           .Name("meshwork_config_revision")
                           .Help("Revision of the configuration this node runs on")
                           .Register(*metrics)
                           .Add({});
    connected_gauge_ = &prometheus::BuildGauge()
                            .Name("meshwork_central_connected")
                            .Help("1 while the control session with central is open")
                            .Register(*metrics)
                            .Add({});
    reports_ = &prometheus::BuildCounter()
                    .Name("meshwork_heartbeats_total")
                    .Help("Load reports sent to central")
                    .Register(*metrics)
                    .Add({});
    reconnects_ = &prometheus::BuildCounter()
                       .Name("meshwork_central_reconnects_total")
                       .Help("Control sessions re-established after a failure")
                       .Register(*metrics)
                       .Add({});
  }
}

Agent::~Agent() { Stop(); }

void Agent::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void Agent::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
    if (active_) active_->TryCancel();
  }
  if (thread_.joinable()) thread_.join();
}

bool Agent::WaitFor(std::chrono::milliseconds d) {
  absl::MutexLock lock(&mu_);
  auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; };
  return !mu_.AwaitWithTimeout(absl::Condition(&stopping), absl::Milliseconds(d.count()));
}

void Agent::Apply(const v1::ConfigUpdate& update) {
  auto current = config_->Get();
  auto next = ApplyUpdate(*current, update);
  config_->Set(next);
  if (options_.on_config) options_.on_config(next);
  if (revision_gauge_) revision_gauge_->Set(static_cast<double>(next->revision));
  log::Info("config_applied", {{"revision", next->revision},
                               {"full", update.full()},
                               {"trusted_proxies", next->trusted_proxies->cidrs().size()}});
}

void Agent::Loop() {
  absl::BitGen rng;
  auto delay = options_.backoff_min;
  bool first = true;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
    }
    if (!first && reconnects_) reconnects_->Increment();
    first = false;
    if (RunOnce()) delay = options_.backoff_min;
    // The session ended or never opened: the next attempt goes to the next central.
    if (centrals_.size() > 1) current_.store((current_.load() + 1) % centrals_.size());
    // Jittered exponential backoff: a random wait in [delay/2, delay], delay doubling.
    auto wait = std::chrono::milliseconds(
        absl::Uniform<int64_t>(rng, delay.count() / 2, delay.count() + 1));
    if (!WaitFor(wait)) return;
    delay = std::min(options_.backoff_max, delay * 2);
  }
}

namespace {

// A unary call to central on a channel of its own, with the cluster token and `deadline`.
template <typename Request, typename Response, typename Method>
absl::StatusOr<Response> CallCentral(const AgentOptions& options, const std::string& central,
                                     const Request& request, Method method, std::string_view name) {
  auto channel = grpc::CreateChannel(central, grpc::InsecureChannelCredentials());
  auto stub = v1::Control::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + options.rpc_deadline);
  const std::string token =
      options.cluster_token ? options.cluster_token->TokenFor(options.registration.node_id()) : "";
  ctx.AddMetadata("authorization", "Bearer " + token);
  Response response;
  grpc::Status status = ((*stub).*method)(&ctx, request, &response);
  if (!status.ok()) {
    return absl::UnavailableError(
        absl::StrCat("central's ", std::string(name), ": ", status.error_message()));
  }
  return response;
}

}  // namespace

absl::StatusOr<v1::UpstreamsResponse> Agent::Upstreams(const std::string& stream) const {
  v1::UpstreamsRequest request;
  request.set_node_id(options_.registration.node_id());
  request.set_stream(stream);
  return CallCentral<v1::UpstreamsRequest, v1::UpstreamsResponse>(
      options_, Central(), request, &v1::Control::Stub::Upstreams, "Upstreams");
}

absl::StatusOr<v1::NodesResponse> Agent::Nodes(const std::vector<std::string>& ids) const {
  v1::NodesRequest request;
  for (const auto& id : ids) request.add_node_ids(id);
  return CallCentral<v1::NodesRequest, v1::NodesResponse>(options_, Central(), request,
                                                          &v1::Control::Stub::Nodes, "Nodes");
}

bool Agent::RunOnce() {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 2000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 2000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  args.SetMaxReceiveMessageSize(options_.max_receive_message_bytes);
  args.SetMaxSendMessageSize(4 << 20);  // reports are small; central accepts 4 MiB
  // A fresh channel per attempt: a channel's own reconnect backoff must not delay us past
  // the 5 s of C-5.
  const std::string central = Central();
  auto channel = grpc::CreateCustomChannel(central, grpc::InsecureChannelCredentials(), args);
  auto stub = v1::Control::NewStub(channel);
  const std::string& node = options_.registration.node_id();
  // M-3: the node's own token when the file has a `node=ID` line for it, else the cluster's.
  const std::string token = options_.cluster_token ? options_.cluster_token->TokenFor(node) : "";
  if (token.empty()) {
    log::Warn("cluster_token_missing",
              {{"path", options_.cluster_token ? options_.cluster_token->path() : ""}});
  }
  const std::string authorization = "Bearer " + token;

  v1::RegisterResponse registered;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + options_.rpc_deadline);
    ctx.AddMetadata("authorization", authorization);
    grpc::Status status = stub->Register(&ctx, options_.registration, &registered);
    if (status.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
        status.error_code() == grpc::StatusCode::PERMISSION_DENIED) {
      log::Warn("register_refused",
                {{"central", central},
                 {"error",
                  "central refused the token of --cluster-token-file: " + status.error_message()},
                 {"path", options_.cluster_token ? options_.cluster_token->path() : ""}});
      return false;
    }
    if (!status.ok()) {
      log::Warn("register_failed", {{"central", central},
                                    {"code", static_cast<int>(status.error_code())},
                                    {"error", status.error_message()}});
      return false;
    }
  }
  Apply(registered.snapshot());
  auto interval = registered.report_interval_ms() > 0
                      ? std::chrono::milliseconds(registered.report_interval_ms())
                      : options_.report_interval;

  grpc::ClientContext ctx;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return true;
    active_ = &ctx;
  }
  ctx.AddMetadata("authorization", authorization);
  auto stream = stub->Session(&ctx);
  v1::SessionMessage hello;
  hello.mutable_hello()->set_node_id(node);
  hello.mutable_hello()->set_revision(config_->Get()->revision);
  bool ok = stream->Write(hello);
  if (ok) {
    connected_.store(true);
    if (connected_gauge_) connected_gauge_->Set(1);
    log::Info("session_open", {{"central", central}, {"node", node}});
  }
  std::atomic<bool> reader_done{false};
  std::thread reader([&] {
    v1::ConfigUpdate update;
    while (stream->Read(&update)) Apply(update);
    reader_done.store(true);
  });
  HostSampler sampler;
  bool healthy = false;  // a report went through
  while (ok && !reader_done.load()) {
    if (!WaitFor(interval)) break;
    v1::SessionMessage msg;
    *msg.mutable_report() = BuildReport();
    auto load = sampler.Sample();
    msg.mutable_report()->set_cpu_percent(load.cpu_percent);
    msg.mutable_report()->set_in_kbit(load.in_kbit);
    msg.mutable_report()->set_out_kbit(load.out_kbit);
    ok = stream->Write(msg);
    healthy |= ok && !reader_done.load();
    if (ok && reports_) reports_->Increment();
  }
  ctx.TryCancel();
  reader.join();
  grpc::Status status = stream->Finish();
  {
    absl::MutexLock lock(&mu_);
    active_ = nullptr;
  }
  if (connected_.exchange(false)) {
    if (connected_gauge_) connected_gauge_->Set(0);
    log::Warn("session_closed", {{"central", central},
                                 {"code", static_cast<int>(status.error_code())},
                                 {"error", status.error_message()}});
  }
  return healthy;
}

v1::LoadReport Agent::BuildReport() {
  v1::LoadReport report;
  report.set_node_clock_unix_ms(UnixMillis(RealClock::Get().Now()));
  report.set_config_revision(config_->Get()->revision);
  report.set_play_sessions(0);  // the filler overwrites these with the real counts
  report.set_publish_sessions(0);
  if (filler_) filler_(report);
  return report;
}

}  // namespace meshwork::streamer
