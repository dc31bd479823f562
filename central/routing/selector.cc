#include "central/routing/selector.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "common/status/absl_view.h"

namespace meshwork::central {
namespace {

// Unknown session counts sort after every known one.
// Nodes whose own copy works first (CS-2: a placed node whose input is dead is still a
// candidate — a viewer may be held there until its publisher comes, Z-13 — but after every
// node that can play the stream now), then the fewest Play sessions.
std::pair<bool, uint64_t> SortKey(const Candidate& c) {
  return {c.held, c.play_sessions.value_or(std::numeric_limits<uint64_t>::max())};
}

}  // namespace

bool Selector::OnlineWithinLimits(const RouteNode& node,
                                  std::chrono::steady_clock::time_point now) const {
  if (!node.live || !node.live->Online(now, offline_after_)) return false;
  if (node.drain) return false;  // CS-4
  // Z-16/Z-17: a limit excludes the node at or above it, or when the metric is missing.
  if (node.session_limit) {
    auto v = node.live->play_sessions();
    if (!v || *v >= *node.session_limit) return false;
  }
  if (node.bandwidth_limit) {
    auto v = node.live->out_kbit();
    if (!v || *v >= *node.bandwidth_limit) return false;
  }
  return true;
}

bool Selector::Eligible(const RoutingSnapshot& snapshot, const LiveStreams& live, int index,
                        std::string_view stream) const {
  return Eligible(snapshot, live, index, stream, clock_.Monotonic());
}

bool Selector::Eligible(const RoutingSnapshot& snapshot, const LiveStreams& live, int index,
                        std::string_view stream, std::chrono::steady_clock::time_point now) const {
  return OnlineWithinLimits(snapshot.nodes()[index], now) &&
         Serves(snapshot, live, index, stream, now);
}

bool Selector::Serves(const RoutingSnapshot& snapshot, const LiveStreams& live, int index,
                      std::string_view stream) const {
  return Serves(snapshot, live, index, stream, clock_.Monotonic());
}

bool Selector::Serves(const RoutingSnapshot& snapshot, const LiveStreams& live, int index,
                      std::string_view stream, std::chrono::steady_clock::time_point now) const {
  const RouteNode& node = snapshot.nodes()[index];
  if (!node.live || !node.live->Online(now, offline_after_)) return false;
  if (node.role == v1::ROLE_EDGE) return live.contains(AbslView(stream));
  return snapshot.PlacedOn(stream, index) || node.live->Serves(stream);
}

void Selector::Collect(const RoutingSnapshot& snapshot, const LiveStreams& live,
                       const std::vector<int>& nodes, std::string_view stream,
                       std::chrono::steady_clock::time_point now,
                       std::vector<Candidate>& out) const {
  out.clear();
  for (int i : nodes) {
    if (Eligible(snapshot, live, i, stream, now)) {
      const RouteNode& node = snapshot.nodes()[i];
      out.push_back(Candidate{i, node.live->play_sessions(),
                              node.role != v1::ROLE_EDGE && !node.live->Serves(stream)});
    }
  }
  // A stable insertion sort: std::stable_sort allocates a buffer on every call, and a zone
  // or role holds a handful of candidates (P-2: every redirect sorts).
  for (size_t i = 1; i < out.size(); ++i) {
    Candidate c = out[i];
    size_t j = i;
    for (; j > 0 && SortKey(c) < SortKey(out[j - 1]); --j) out[j] = out[j - 1];
    out[j] = c;
  }
}

int Selector::Pick(const std::vector<Candidate>& sorted, std::atomic<uint64_t>* rotation) {
  if (sorted.empty()) return -1;
  size_t tied = 1;
  while (tied < sorted.size() && SortKey(sorted[tied]) == SortKey(sorted[0])) ++tied;
  if (tied == 1 || rotation == nullptr) return sorted[0].node;
  uint64_t turn = rotation->fetch_add(1, std::memory_order_relaxed);
  return sorted[turn % tied].node;
}

absl::StatusOr<RouteDecision> Selector::Route(const RoutingSnapshot& snapshot,
                                              const LiveStreams& live, std::string_view stream,
                                              const std::optional<net::IpAddress>& client,
                                              RouteMode mode) const {
  if (!snapshot.StreamConfigured(stream) && !live.contains(AbslView(stream))) {
    return absl::NotFoundError(
        absl::StrCat("stream \"", std::string(stream), "\" is unknown to the cluster"));
  }
  RouteDecision decision;
  decision.restricted = snapshot.restricted();
  const bool rotate = mode != RouteMode::kListAll;
  const auto now = clock_.CoarseMonotonic();  // against heartbeats seconds apart
  // kSelect sorts each zone's candidates in this thread's scratch list instead of a list of
  // the decision's own (its capacity is kept from one redirect to the next).
  thread_local std::vector<Candidate> scratch;
  auto candidates = [&](ZoneCandidates& zc) -> std::vector<Candidate>& {
    return mode == RouteMode::kSelect ? scratch : zc.nodes;
  };
  auto keep = [&](ZoneCandidates&& zc) {
    if (mode != RouteMode::kSelect) decision.zones.push_back(std::move(zc));
  };
  if (decision.restricted) {
    // Z-8/Z-9: the client's zone and its fallback chain; nothing else.
    if (!client) {
      return absl::UnavailableError("restricted mode: the client address is unknown");
    }
    decision.client_zone = snapshot.ZoneOf(*client);
    if (decision.client_zone < 0) {
      return absl::UnavailableError(
          absl::StrCat("restricted mode: no route matches the client ", client->ToString()));
    }
    for (int zone : snapshot.Chain(decision.client_zone)) {
      ZoneCandidates zc{zone, {}};
      std::vector<Candidate>& nodes = candidates(zc);
      Collect(snapshot, live, snapshot.zones()[zone].nodes, stream, now, nodes);
      if (decision.selected < 0 && !nodes.empty()) {
        decision.selected = Pick(nodes, rotate ? &snapshot.Rotation(zone) : nullptr);
      }
      keep(std::move(zc));
      if (decision.selected >= 0 && mode != RouteMode::kListAll) break;  // Z-12
    }
  } else {
    // Z-10: edges first; ingest only when no edge is eligible; never origin.
    for (v1::Role role : {v1::ROLE_EDGE, v1::ROLE_INGEST}) {
      ZoneCandidates zc{-1, {}};
      std::vector<Candidate>& nodes = candidates(zc);
      Collect(snapshot, live, snapshot.nodes_with_role(role), stream, now, nodes);
      if (nodes.empty()) continue;
      decision.selected = Pick(nodes, rotate ? &snapshot.RoleRotation(role) : nullptr);
      keep(std::move(zc));
      break;
    }
  }
  if (decision.selected < 0) {
    return absl::UnavailableError(
        absl::StrCat("no eligible node for stream \"", std::string(stream), "\""));
  }
  return decision;
}

absl::StatusOr<int> Selector::ChooseVod(const RoutingSnapshot& snapshot, const nlohmann::json& vod,
                                        const std::optional<net::IpAddress>& client) const {
  std::vector<int> chain;
  if (snapshot.restricted()) {
    if (!client) return absl::UnavailableError("restricted mode: the client address is unknown");
    int zone = snapshot.ZoneOf(*client);
    if (zone < 0) {
      return absl::UnavailableError(
          absl::StrCat("restricted mode: no route matches the client ", client->ToString()));
    }
    chain = snapshot.Chain(zone);
  }
  struct Option {
    int node;
    uint64_t revision;
    size_t chain_position;
    uint64_t sessions;
  };
  std::vector<Option> options;
  for (const auto& p : vod["placements"]) {
    if (!p["available"].get<bool>()) continue;
    int node = snapshot.NodeIndex(p["streamer"].get<std::string>());
    if (node < 0) continue;
    const RouteNode& n = snapshot.nodes()[node];
    size_t position = 0;
    if (snapshot.restricted()) {
      auto it = std::find(chain.begin(), chain.end(), n.zone);
      if (n.zone < 0 || it == chain.end()) continue;  // a forbidden node: never (Z-24)
      position = static_cast<size_t>(it - chain.begin());
    }
    if (!OnlineWithinLimits(n, clock_.Monotonic())) continue;
    options.push_back({node, p["revision"].get<uint64_t>(), position,
                       n.live->play_sessions().value_or(std::numeric_limits<uint64_t>::max())});
  }
  if (options.empty()) return absl::UnavailableError("no allowed node holds an available replica");
  // Highest revision, then chain order, then load.
  std::stable_sort(options.begin(), options.end(), [](const Option& a, const Option& b) {
    if (a.revision != b.revision) return a.revision > b.revision;
    if (a.chain_position != b.chain_position) return a.chain_position < b.chain_position;
    return a.sessions < b.sessions;
  });
  return options.front().node;
}

}  // namespace meshwork::central
