#include "central/routing/routing_service.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "common/metrics/metrics.h"
#include "common/net/ip_address.h"
#include "common/status/absl_view.h"
#include "common/stream/defaults.h"
#include "meshwork/v1/role_names.h"

namespace meshwork::central {

RoutingService::RoutingService(NodeRegistry* registry, prometheus::Registry* metrics)
    : registry_(registry),
      selector_(registry->clock(), registry->offline_after()),
      snapshot_(RoutingSnapshot::Build(
          ClusterConfig(), [](const std::string&) { return std::shared_ptr<const LiveNode>(); })) {
  if (metrics) {
    build_seconds_ = &prometheus::BuildHistogram()
                          .Name("meshwork_routing_snapshot_build_seconds")
                          .Help("Time to rebuild the routing snapshot after a config change")
                          .Register(*metrics)
                          .Add({}, metrics::LatencyBuckets());
    decision_seconds_ = std::make_shared<metrics::ThreadHistogram>(
        prometheus::BuildHistogram()
            .Name("meshwork_routing_decision_seconds")
            .Help("Time to make one viewer routing decision")
            .Register(*metrics),
        metrics::LatencyBuckets());
    metrics::AddCollectHook(*metrics, decision_seconds_);
  }
}

void RoutingService::ConfigChanged(const ClusterConfig& config) {
  auto start = std::chrono::steady_clock::now();
  auto next = RoutingSnapshot::Build(
      config, [this](const std::string& id) -> std::shared_ptr<const LiveNode> {
        return registry_->Live(id);
      });
  snapshot_.Set(next);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (build_seconds_) build_seconds_->Observe(seconds);
  log::Debug("routing_snapshot_built", {{"revision", config.revision},
                                        {"zones", next->zones().size()},
                                        {"nodes", next->nodes().size()},
                                        {"seconds", seconds}});
}

absl::StatusOr<RouteDecision> RoutingService::Route(std::string_view stream,
                                                    const std::optional<net::IpAddress>& client,
                                                    RouteMode mode) const {
  auto snapshot = snapshot_.Get();
  return Route(*snapshot, stream, client, mode);
}

RoutingService::State RoutingService::ReadState() const {
  thread_local Snapshot<RoutingSnapshot>::ReadCache snapshot_cache;
  thread_local Snapshot<NodeRegistry::StreamSet>::ReadCache live_cache;
  return State{snapshot_.Read(snapshot_cache), registry_->ReadLiveStreams(live_cache)};
}

absl::StatusOr<RouteDecision> RoutingService::Route(const RoutingSnapshot& snapshot,
                                                    std::string_view stream,
                                                    const std::optional<net::IpAddress>& client,
                                                    RouteMode mode) const {
  auto live = registry_->live_streams();
  return Route(snapshot, *live, stream, client, mode);
}

absl::StatusOr<RouteDecision> RoutingService::Route(const RoutingSnapshot& snapshot,
                                                    const NodeRegistry::StreamSet& live,
                                                    std::string_view stream,
                                                    const std::optional<net::IpAddress>& client,
                                                    RouteMode mode) const {
  const Clock& clock = registry_->clock();
  auto start = clock.Monotonic();
  auto decision = selector_.Route(snapshot, live, stream, client, mode);
  if (decision_seconds_) {
    decision_seconds_->Observe(std::chrono::duration<double>(clock.Monotonic() - start).count());
  }
  return decision;
}

std::vector<const RouteNode*> RoutingService::Upstreams(const RoutingSnapshot& snapshot,
                                                        std::string_view stream,
                                                        const std::string& edge_id) const {
  std::vector<int> chain;
  if (int edge = snapshot.NodeIndex(edge_id); edge >= 0) {
    chain = snapshot.Chain(snapshot.nodes()[edge].zone);
  }
  auto rank = [&chain](int zone) {
    auto at = std::find(chain.begin(), chain.end(), zone);
    return zone >= 0 && at != chain.end() ? at - chain.begin() : std::ssize(chain);
  };
  auto now = registry_->clock().Monotonic();
  std::vector<std::pair<std::ptrdiff_t, const RouteNode*>> found;
  for (const auto& node : snapshot.nodes()) {
    if (node.role != v1::ROLE_INGEST && node.role != v1::ROLE_ORIGIN) continue;
    if (node.id == edge_id || !node.live) continue;
    if (!node.live->Online(now, registry_->offline_after()) || !node.live->Serves(stream)) continue;
    found.emplace_back(rank(node.zone), &node);
  }
  // Within a zone, origins first: they hold every pipeline's objects and are where a site's
  // edges are meant to take the stream from (seed 002); ingest nodes next.
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    bool ao = a.second->role == v1::ROLE_ORIGIN, bo = b.second->role == v1::ROLE_ORIGIN;
    if (ao != bo) return ao;
    return a.second->id < b.second->id;
  });
  std::vector<const RouteNode*> out;
  if (int edge = snapshot.NodeIndex(edge_id);
      edge >= 0 && snapshot.nodes()[edge].role == v1::ROLE_EDGE) {
    int parent = ParentEdge(snapshot, stream, snapshot.nodes()[edge].zone, [&](const RouteNode& n) {
      return CanBeParent(n, now, registry_->offline_after());
    });
    if (parent >= 0 && parent != edge) out.push_back(&snapshot.nodes()[parent]);
  }
  for (const auto& [r, node] : found) out.push_back(node);
  return out;
}

int RoutingService::ParentEdge(const RoutingSnapshot& snapshot, std::string_view stream, int zone,
                               const std::function<bool(const RouteNode&)>& eligible) {
  if (zone < 0 || zone >= std::ssize(snapshot.zones())) return -1;
  // FNV-1a 64: stable across processes and builds (every central must agree).
  auto weight = [stream](std::string_view id) {
    uint64_t h = 14695981039346656037ull;
    auto mix = [&h](std::string_view s) {
      for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    };
    mix(stream);
    mix(std::string_view("\0", 1));
    mix(id);
    return h;
  };
  int best = -1;
  uint64_t best_weight = 0;
  for (int index : snapshot.zones()[zone].nodes) {
    const RouteNode& node = snapshot.nodes()[index];
    if (node.role != v1::ROLE_EDGE || !eligible(node)) continue;
    uint64_t w = weight(node.id);
    if (best < 0 || w > best_weight) {
      best = index;
      best_weight = w;
    }
  }
  return best;
}

std::string RoutingService::NodeUrl(const RouteNode& node, std::string_view scheme) {
  std::string url;
  url.reserve(scheme.size() + 3 + node.hostname.size() + 2 + 6);
  AppendNodeUrl(node, scheme, url);
  return url;
}

void RoutingService::AppendNodeUrl(const RouteNode& node, std::string_view scheme,
                                   std::string& url) {
  uint32_t port = 0;
  if (node.live) {
    auto endpoints = node.live->endpoints();
    port =
        scheme == "https" && endpoints->https_port ? endpoints->https_port : endpoints->http_port;
    if (endpoints->public_port) port = endpoints->public_port;
  }
  const std::string& host = node.hostname;
  // Only an IPv6 literal is bracketed, and only it holds ':' (every redirect comes here: the
  // address parse runs only then).
  bool bracket = false;
  if (host.find(':') != std::string::npos) {
    auto ip = net::IpAddress::Parse(host);
    bracket = ip.ok() && !ip->is_v4();
  }
  bool default_port =
      port == 0 || (scheme == "http" && port == 80) || (scheme == "https" && port == 443);
  url.append(scheme).append("://");
  if (bracket) url.push_back('[');
  url.append(host);
  if (bracket) url.push_back(']');
  if (!default_port) absl::StrAppend(&url, ":", port);
}

namespace {

// The host other nodes reach `node` at: its internal address, else its hostname; bracketed
// when it is an IPv6 address.
std::string InternalHost(const RouteNode& node) {
  std::string host = node.hostname;
  if (node.live && !node.live->endpoints()->internal_host.empty()) {
    host = node.live->endpoints()->internal_host;
  }
  auto ip = net::IpAddress::Parse(host);
  if (ip.ok() && !ip->is_v4()) host = absl::StrCat("[", host, "]");
  return host;
}

}  // namespace

std::string RoutingService::InternalUrl(const RouteNode& node) {
  auto endpoints = node.live ? node.live->endpoints() : nullptr;
  if (!endpoints || endpoints->internal_host.empty() || endpoints->http_port == 0) {
    return NodeUrl(node, "http");
  }
  // The listener's own port: a public port forward (--public_port) is for viewers.
  return absl::StrCat("http://", InternalHost(node), ":", endpoints->http_port);
}

std::string RoutingService::PublishUrl(const RouteNode& node) {
  uint32_t port = node.live ? node.live->endpoints()->publish_port : 0;
  if (port == 0) return "";
  return absl::StrCat("http://", InternalHost(node), ":", port);
}

nlohmann::json RoutingService::DecisionJson(const RoutingSnapshot& snapshot,
                                            const RouteDecision& decision,
                                            std::string_view scheme) const {
  nlohmann::json zones = nlohmann::json::array();
  for (const auto& zc : decision.zones) {
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto& c : zc.nodes) {
      const RouteNode& node = snapshot.nodes()[c.node];
      nodes.push_back({{"id", node.id},
                       {"role", std::string(v1::RoleName(node.role))},
                       {"url", NodeUrl(node, scheme)},
                       {"play_sessions",
                        c.play_sessions ? nlohmann::json(*c.play_sessions) : nlohmann::json()}});
    }
    zones.push_back(
        {{"name", zc.zone >= 0 ? nlohmann::json(snapshot.zones()[zc.zone].name) : nlohmann::json()},
         {"nodes", nodes}});
  }
  nlohmann::json out = {{"restricted", decision.restricted}, {"zones", zones}};
  out["client_zone"] = decision.client_zone >= 0
                           ? nlohmann::json(snapshot.zones()[decision.client_zone].name)
                           : nlohmann::json();
  if (decision.selected >= 0) {
    const RouteNode& node = snapshot.nodes()[decision.selected];
    out["selected"] = {{"id", node.id}, {"url", NodeUrl(node, scheme)}};
  }
  return out;
}

std::optional<std::string_view> RoutingService::StreamOfPath(const RoutingSnapshot& snapshot,
                                                             const NodeRegistry::StreamSet& live,
                                                             std::string_view path) {
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  // Longest known prefix first: "a/b/c/file" tries "a/b/c", then "a/b", then "a"; none
  // longer than a stream name can be (a path of thousands of segments costs no more).
  size_t end = path.rfind('/', stream_defaults::kMaxStreamNameBytes);
  while (end != std::string_view::npos && end > 0) {
    std::string_view candidate = path.substr(0, end);
    if (snapshot.StreamConfigured(candidate) || live.contains(AbslView(candidate))) {
      return candidate;
    }
    end = path.rfind('/', end - 1);
  }
  return std::nullopt;
}

}  // namespace meshwork::central
