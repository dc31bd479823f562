#include "central/cluster/node_registry.h"

#include <algorithm>
#include <ctime>
#include <optional>

#include "absl/strings/str_format.h"
#include "central/model/streamer_codec.h"
#include "common/log/log.h"
#include "common/net/http_url.h"
#include "common/time/rfc3339.h"
#include "meshwork/v1/report_json.h"

namespace meshwork::central {
namespace {

std::string Rfc3339(Clock::TimePoint t) { return Rfc3339Millis(UnixMillis(t)); }

}  // namespace

NodeRegistry::NodeRegistry(const Clock& clock, std::chrono::milliseconds offline_after,
                           Store* store, prometheus::Registry* metrics)
    : clock_(clock),
      offline_after_(offline_after),
      report_writer_(store ? std::make_unique<ReportWriter>(store) : nullptr) {
  if (metrics) {
    heartbeats_ = &prometheus::BuildCounter()
                       .Name("meshwork_heartbeats_total")
                       .Help("Load reports received from nodes")
                       .Register(*metrics)
                       .Add({});
    auto& nodes = prometheus::BuildGauge()
                      .Name("meshwork_nodes")
                      .Help("Known nodes by state (C-4)")
                      .Register(*metrics);
    online_gauge_ = &nodes.Add({{"state", "online"}});
    offline_gauge_ = &nodes.Add({{"state", "offline"}});
    auto& transitions = prometheus::BuildCounter()
                            .Name("meshwork_node_transitions_total")
                            .Help("Node state changes, by the state entered")
                            .Register(*metrics);
    went_online_ = &transitions.Add({{"to", "online"}});
    went_offline_ = &transitions.Add({{"to", "offline"}});
    sessions_gauge_ = &prometheus::BuildGauge()
                           .Name("meshwork_control_sessions")
                           .Help("Attached control sessions")
                           .Register(*metrics)
                           .Add({});
  }
}

NodeRegistry::~NodeRegistry() { sweeper_.Stop(); }

void NodeRegistry::StartSweeper(std::chrono::milliseconds period) {
  sweeper_.Start(period, [this] { Sweep(); });
}

void NodeRegistry::Registered(const v1::RegisterRequest& request) {
  absl::MutexLock lock(&mu_);
  RegisteredLocked(nodes_[request.node_id()], request);
}

void NodeRegistry::RegisteredLocked(Node& node, const v1::RegisterRequest& request) {
  node.registration = request;
  node.registered = true;
  NodeEndpoints endpoints;
  endpoints.public_port = request.public_port();
  // Untrusted like every registration field: a host name or address only, else ignored.
  if (net::IsHostName(request.internal_address())) {
    endpoints.internal_host = request.internal_address();
  } else if (!request.internal_address().empty()) {
    log::Warn("internal_address_ignored", {{"node", request.node_id()}});
  }
  for (const auto& l : request.listeners()) {
    if (l.name() == "publish") {
      if (l.scheme() == "http" && endpoints.publish_port == 0) endpoints.publish_port = l.port();
      continue;
    }
    if (l.scheme() == "https" && endpoints.https_port == 0) endpoints.https_port = l.port();
    if (l.scheme() == "http" && endpoints.http_port == 0) endpoints.http_port = l.port();
  }
  node.live->SetEndpoints(endpoints);
}

std::shared_ptr<LiveNode> NodeRegistry::Live(const std::string& node_id) {
  absl::MutexLock lock(&mu_);
  return nodes_[node_id].live;
}

void NodeRegistry::RefreshLiveStreamsLocked() {
  auto now = clock_.Monotonic();
  auto next = std::make_shared<StreamSet>();
  for (const auto& [id, node] : nodes_) {
    if (!node.live->Online(now, offline_after_)) continue;
    auto working = node.live->working_streams();
    if (working) next->insert(working->begin(), working->end());
  }
  if (*next != *live_streams_.Get()) live_streams_.Set(std::move(next));
}

void NodeRegistry::Attach(const std::string& node_id, std::shared_ptr<NodeChannel> channel,
                          size_t max_sessions) {
  std::optional<v1::OttGroupViews> views;
  std::string sent;
  std::vector<std::shared_ptr<NodeChannel>> evicted;
  {
    absl::MutexLock lock(&mu_);
    Node& node = nodes_[node_id];
    // The oldest first; each stays listed until it ends and Detaches.
    for (size_t i = 0; i + max_sessions <= node.channels.size() && max_sessions > 0; ++i) {
      evicted.push_back(node.channels[i]);
    }
    if (node.remote) {  // it moved here from another central
      node.remote = false;
      node.live->RemoveSession();
    }
    node.channels.push_back(channel);
    node.live->AddSession();
    if (sessions_gauge_) sessions_gauge_->Increment();
    // Empty ones too once the node had some: views emptied since its Register snapshot must
    // reach it (a delta never carries them).
    if (node.ott_views.groups_size() > 0 || node.had_views) views = node.ott_views;
    sent = node.ott_views_bytes;
  }
  // Sent outside the lock, so a SetOttViews in between may already have sent a newer view on
  // this channel: send again until what was sent last is the current view.
  while (views) {
    channel->OttViewsChanged(*views);
    views.reset();
    absl::MutexLock lock(&mu_);
    Node& node = nodes_[node_id];
    if (node.ott_views_bytes != sent) {
      views = node.ott_views;
      sent = node.ott_views_bytes;
    }
  }
  for (auto& old : evicted) old->Evict();
}

NodeStates NodeRegistry::OttNodeStates() const {
  absl::ReaderMutexLock lock(&mu_);
  NodeStates out;
  for (const auto& [id, node] : nodes_) {
    NodeState& state = out[id];
    state.registered = node.registered;
    if (node.registered) state.registration = node.registration;
    state.has_report = node.has_report;
    if (node.has_report) {
      state.report = node.report;
      state.report_received_unix_ms = UnixMillis(node.report_wall);
    }
    state.online = OnlineLocked(node);
  }
  return out;
}

void NodeRegistry::SetOttViews(std::map<std::string, v1::OttGroupViews> views) {
  std::vector<std::pair<std::vector<std::shared_ptr<NodeChannel>>, v1::OttGroupViews>> sends;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [id, node] : nodes_) {
      auto it = views.find(id);
      v1::OttGroupViews next = it == views.end() ? v1::OttGroupViews() : std::move(it->second);
      std::string bytes = next.SerializeAsString();
      if (bytes == node.ott_views_bytes) continue;
      node.had_views |= next.groups_size() > 0;
      node.ott_views = std::move(next);
      node.ott_views_bytes = std::move(bytes);
      if (!node.channels.empty()) sends.emplace_back(node.channels, node.ott_views);
    }
  }
  for (auto& [channels, v] : sends) {
    for (auto& c : channels) c->OttViewsChanged(v);
  }
}

v1::OttGroupViews NodeRegistry::OttViews(const std::string& node_id) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = nodes_.find(node_id);
  return it == nodes_.end() ? v1::OttGroupViews() : it->second.ott_views;
}

std::string NodeRegistry::TimelineFingerprint(const std::string& node_id,
                                              const std::string& stream) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = nodes_.find(node_id);
  if (it == nodes_.end() || !it->second.has_report) return "";
  for (const auto& s : it->second.report.streams()) {
    if (s.name() == stream) return s.timeline_fingerprint();
  }
  return "";
}

void NodeRegistry::Detach(const std::string& node_id, const NodeChannel* channel) {
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(node_id);
  if (it == nodes_.end()) return;
  auto& channels = it->second.channels;
  auto removed = std::remove_if(channels.begin(), channels.end(),
                                [channel](const auto& c) { return c.get() == channel; });
  if (removed != channels.end()) {
    channels.erase(removed, channels.end());
    it->second.live->RemoveSession();
    if (sessions_gauge_) sessions_gauge_->Decrement();
  }
}

void NodeRegistry::Report(const std::string& node_id, const v1::LoadReport& report) {
  v1::SharedNodeState shared;
  {
    absl::MutexLock lock(&mu_);
    Node& node = nodes_[node_id];
    ApplyReportLocked(node, report);
    if (node.registered) *shared.mutable_registration() = node.registration;
  }
  if (heartbeats_) heartbeats_->Increment();
  if (report_listener_) report_listener_(node_id, report);
  if (report_writer_) {
    *shared.mutable_report() = report;
    report_writer_->Put(node_id, shared.SerializeAsString());  // written on its own thread
  }
}

void NodeRegistry::RemoteReport(const std::string& node_id,
                                const std::optional<std::string>& value) {
  v1::SharedNodeState shared;
  if (value && !shared.ParseFromString(*value)) {
    log::Warn("remote_report_invalid", {{"node", node_id}});
    return;
  }
  absl::MutexLock lock(&mu_);
  Node& node = nodes_[node_id];
  // Attached here and reporting: this central's own view wins. A session here whose reports
  // stopped (its link died silently; gRPC notices only when it next writes) yields to what
  // another central hears from the node.
  if (!node.channels.empty() && OnlineLocked(node)) return;
  if (!value) {
    if (node.remote) {
      node.remote = false;
      node.live->RemoveSession();
    }
    return;
  }
  if (shared.has_registration()) RegisteredLocked(node, shared.registration());
  ApplyReportLocked(node, shared.report());
  if (!node.remote) {
    node.remote = true;
    node.live->AddSession();
  }
}

void NodeRegistry::ApplyReportLocked(Node& node, const v1::LoadReport& report) {
  {
    node.report = report;
    node.has_report = true;
    node.report_at = clock_.Monotonic();
    node.report_wall = clock_.Now();
    std::vector<std::string> working;
    for (const auto& s : report.streams()) {
      if (s.working()) working.push_back(s.name());
    }
    std::sort(working.begin(), working.end());
    working.erase(std::unique(working.begin(), working.end()), working.end());
    auto live = live_streams_.Get();
    bool new_stream = std::any_of(working.begin(), working.end(),
                                  [&live](const std::string& s) { return !live->contains(s); });
    node.live->SetReport(
        node.report_at,
        report.has_play_sessions() ? std::optional<uint64_t>(report.play_sessions()) : std::nullopt,
        report.has_out_kbit() ? std::optional<uint64_t>(report.out_kbit()) : std::nullopt,
        std::move(working));
    if (new_stream) RefreshLiveStreamsLocked();
  }
}

bool NodeRegistry::OnlineLocked(const Node& node) const {
  return node.live->Online(clock_.Monotonic(), offline_after_);
}

bool NodeRegistry::IsOnline(const std::string& node_id) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = nodes_.find(node_id);
  return it != nodes_.end() && OnlineLocked(it->second);
}

nlohmann::json NodeRegistry::StatusJson(const std::string& node_id) const {
  absl::ReaderMutexLock lock(&mu_);
  nlohmann::json status = {{"online", false}, {"report", nullptr}};
  auto it = nodes_.find(node_id);
  if (it == nodes_.end()) return status;
  const Node& node = it->second;
  status["online"] = OnlineLocked(node);
  if (node.registered) {
    const auto& r = node.registration;
    status["version"] = r.version();
    status["protocol_version"] = r.protocol_version();
    status["addresses"] = r.addresses();
    nlohmann::json listeners = nlohmann::json::array();
    for (const auto& l : r.listeners()) {
      listeners.push_back({{"name", l.name()}, {"scheme", l.scheme()}, {"port", l.port()}});
    }
    status["listeners"] = listeners;
  }
  if (node.has_report) {
    const auto& rep = node.report;
    status["revision"] = rep.config_revision();
    double age = std::chrono::duration<double>(clock_.Monotonic() - node.report_at).count();
    status["report"] = {
        {"at", Rfc3339(node.report_wall)},
        {"age_s", age},
        {"node_clock", Rfc3339Millis(rep.node_clock_unix_ms())},
        {"play_sessions",
         rep.has_play_sessions() ? nlohmann::json(rep.play_sessions()) : nlohmann::json()},
        {"publish_sessions",
         rep.has_publish_sessions() ? nlohmann::json(rep.publish_sessions()) : nlohmann::json()},
        {"out_kbit", rep.has_out_kbit() ? nlohmann::json(rep.out_kbit()) : nlohmann::json()},
        {"in_kbit", rep.has_in_kbit() ? nlohmann::json(rep.in_kbit()) : nlohmann::json()},
        {"cpu_percent",
         rep.has_cpu_percent() ? nlohmann::json(rep.cpu_percent()) : nlohmann::json()},
        {"backup_sessions", rep.backup_sessions()},
        {"refusals", rep.refusals()},
        {"streams", v1::StreamsJson(rep)}};
  }
  return status;
}

void NodeRegistry::ConfigChanged(std::shared_ptr<const ClusterConfig> config) {
  std::vector<std::shared_ptr<NodeChannel>> channels;
  {
    absl::ReaderMutexLock lock(&mu_);
    for (const auto& [id, node] : nodes_) {
      channels.insert(channels.end(), node.channels.begin(), node.channels.end());
    }
  }
  for (auto& c : channels) c->ConfigChanged(config);
}

void NodeRegistry::Sweep() {
  absl::MutexLock lock(&mu_);
  double online = 0, offline = 0;
  for (auto& [id, node] : nodes_) {
    bool now_online = OnlineLocked(node);
    if (now_online != node.online) {
      node.online = now_online;
      if (now_online) {
        log::Info("node_online", {{"node", id}});
        if (went_online_) went_online_->Increment();
      } else {
        log::Warn("node_offline",
                  {{"node", id},
                   {"session", node.channels.empty() ? "down" : "up"},
                   {"last_report_age_ms",
                    node.has_report ? std::chrono::duration_cast<std::chrono::milliseconds>(
                                          clock_.Monotonic() - node.report_at)
                                          .count()
                                    : -1}});
        if (went_offline_) went_offline_->Increment();
      }
    }
    (now_online ? online : offline) += 1;
  }
  RefreshLiveStreamsLocked();
  if (online_gauge_) online_gauge_->Set(online);
  if (offline_gauge_) offline_gauge_->Set(offline);
}

}  // namespace meshwork::central
