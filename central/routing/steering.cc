#include "central/routing/steering.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "central/model/steering_config.h"
#include "prometheus/counter.h"

namespace meshwork::central {
namespace {

using nlohmann::json;

// A pathway id as players send it back: a node id ([a-z0-9._-], at most 64 bytes).
bool IsPathwayId(std::string_view v) {
  if (v.empty() || v.size() > 64) return false;
  return std::all_of(v.begin(), v.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
  });
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX decoded; anything else kept as it is.
std::string PercentDecode(std::string_view v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '%' && i + 2 < v.size() && HexValue(v[i + 1]) >= 0 && HexValue(v[i + 2]) >= 0) {
      out.push_back(static_cast<char>(HexValue(v[i + 1]) * 16 + HexValue(v[i + 2])));
      i += 2;
    } else {
      out.push_back(v[i]);
    }
  }
  return out;
}

}  // namespace

void ParseSteeringQuery(std::string_view query, SteeringRequest& out) {
  std::vector<std::string_view> kept;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    std::string_view key = pair.substr(0, pair.find('='));
    std::string_view value =
        key.size() < pair.size() ? pair.substr(key.size() + 1) : std::string_view();
    if (key == "_HLS_pathway" || key == "_DASH_pathway") {
      // hls.js sends the pathway; dash.js a quoted list of the service locations it used
      // since its last request, the newest last: the newest valid one is the current one.
      const std::string decoded = PercentDecode(value);
      std::string_view list = decoded;
      if (list.size() >= 2 && list.front() == '"' && list.back() == '"') {
        list = list.substr(1, list.size() - 2);
      }
      while (!list.empty()) {
        const size_t comma = list.rfind(',');
        std::string_view id = comma == std::string_view::npos ? list : list.substr(comma + 1);
        if (IsPathwayId(id)) {
          out.current = std::string(id);
          break;
        }
        list = comma == std::string_view::npos ? std::string_view() : list.substr(0, comma);
      }
    }
    if (key.starts_with("_DASH_")) out.dash = true;
    if (key == "format" && value == "dash") out.dash = true;
    if (key.starts_with("_HLS_") || key.starts_with("_DASH_")) continue;  // players add these
    kept.push_back(pair);
  }
  out.base_query.clear();
  for (std::string_view pair : kept) {
    if (!out.base_query.empty()) out.base_query.push_back('&');
    out.base_query.append(pair);
  }
}

PriorityResult PathwayPriority(const std::vector<PathwayNode>& nodes, const std::string& current,
                               int64_t rebalance_percent, bool allow_load_move) {
  PriorityResult result;
  for (const auto& n : nodes) result.priority.push_back(n.id);
  if (current.empty() || nodes.empty() || !nodes.front().eligible) return result;
  auto it = std::find_if(nodes.begin(), nodes.end(),
                         [&current](const PathwayNode& n) { return n.id == current; });
  if (it == nodes.end() || !it->eligible || it == nodes.begin()) return result;
  const PathwayNode& best = nodes.front();
  if (it->zone_rank > best.zone_rank) return result;  // a better zone has a node now
  const uint64_t bound = best.load + best.load * static_cast<uint64_t>(rebalance_percent) / 100 + 1;
  if (it->load > bound && allow_load_move) {
    result.moved_for_load = true;
    return result;
  }
  // Sticky: the current pathway first, the rest in order.
  result.priority.erase(result.priority.begin() + (it - nodes.begin()));
  result.priority.insert(result.priority.begin(), current);
  return result;
}

SteeringService::SteeringService(Options options, RoutingService* routing, ConfigService* config,
                                 const Clock& clock, prometheus::Registry* metrics)
    : options_(std::move(options)),
      routing_(routing),
      config_(config),
      clock_(clock),
      per_client_(static_cast<uint32_t>(
          std::clamp<int64_t>(options_.max_answers_per_client_per_s, 0, UINT32_MAX))) {
  if (!metrics) return;
  answers_ = metrics::LabeledCounters(
      prometheus::BuildCounter()
          .Name("meshwork_steering_answers_total")
          .Help("CS-2: steering manifest requests, by result")
          .Register(*metrics),
      "result", {"ok", "unknown_stream", "no_node", "overload", "client_overload"});
  moves_counter_ = metrics::LabeledCounters(
      prometheus::BuildCounter()
          .Name("meshwork_steering_moves_total")
          .Help("CS-3: answers that moved a viewer off its current pathway, by reason")
          .Register(*metrics),
      "reason", {"ineligible", "zone", "load"});
}

int64_t SteeringService::NowSeconds() const {
  return std::chrono::duration_cast<std::chrono::seconds>(clock_.Monotonic().time_since_epoch())
      .count();
}

bool SteeringService::AdmitAnswer() {
  const int64_t now_s = NowSeconds();
  int64_t seen = second_.load(std::memory_order_relaxed);
  if (seen != now_s && second_.compare_exchange_strong(seen, now_s)) {
    answers_in_second_.store(0, std::memory_order_relaxed);
  }
  return answers_in_second_.fetch_add(1, std::memory_order_relaxed) < options_.max_answers_per_s;
}

bool SteeringService::AdmitMove(const std::string& stream) {
  const int64_t now_s = NowSeconds();
  absl::MutexLock lock(&mu_);
  if (moves_.size() > 100000) moves_.clear();  // bounded: one entry per steered stream
  auto& [second, count] = moves_[stream];
  if (second != now_s) {
    second = now_s;
    count = 0;
  }
  if (count >= options_.max_moves_per_s) return false;
  ++count;
  return true;
}

SteeringService::Answer SteeringService::Steer(const SteeringRequest& request) {
  Answer answer;
  auto fail = [&](int status, const char* result, std::string message, int64_t retry_after) {
    answers_.Increment(result);
    answer.status = status;
    answer.body = {{"error", std::move(message)}};
    answer.retry_after_s = retry_after;
    return answer;
  };
  if (request.client && !per_client_.Admit(*request.client, NowSeconds())) {
    return fail(429, "client_overload", "too many steering requests from this address", 1);
  }
  if (!AdmitAnswer()) return fail(429, "overload", "too many steering requests", 1);
  auto config = config_->Current();
  auto record = config->streams.find(request.stream);
  auto snapshot = routing_->snapshot();
  auto live = routing_->registry().live_streams();
  if (record == config->streams.end() && !live->contains(request.stream)) {
    return fail(410, "unknown_stream", "no such stream in the cluster", 0);
  }
  const SteeringSettings settings = record == config->streams.end()
                                        ? SteeringOf(json::object(), config->steering)
                                        : SteeringOf(record->second.object, config->steering);

  // The zones this viewer may be served from, best first (-1: any, unrestricted mode).
  std::vector<int> chain;
  if (snapshot->restricted()) {
    int zone = request.client ? snapshot->ZoneOf(*request.client) : -1;
    if (zone >= 0) chain = snapshot->Chain(zone);
  }
  std::vector<PathwayNode> nodes;
  std::set<int> listed;
  auto decision = routing_->Route(*snapshot, request.stream, request.client, RouteMode::kListAll);
  if (decision.ok()) {
    for (size_t rank = 0; rank < decision->zones.size(); ++rank) {
      for (const Candidate& c : decision->zones[rank].nodes) {
        nodes.push_back({snapshot->nodes()[c.node].id, static_cast<int>(rank),
                         c.play_sessions.value_or(0), true});
        listed.insert(c.node);
      }
    }
  }
  // Online nodes serving the stream that take no new viewers (over a limit, draining): last,
  // by zone rank and load, the draining ones after every other (CS-4).
  const auto& all = snapshot->nodes();
  std::vector<std::pair<bool, PathwayNode>> tail;  // (draining, node)
  for (int i = 0; i < static_cast<int>(all.size()); ++i) {
    if (listed.contains(i) || !routing_->selector().Serves(*snapshot, *live, i, request.stream)) {
      continue;
    }
    int rank = 0;
    if (snapshot->restricted()) {
      auto at = std::find(chain.begin(), chain.end(), all[i].zone);
      if (at == chain.end()) continue;  // Z-9: never outside the viewer's chain
      rank = static_cast<int>(at - chain.begin());
    } else if (all[i].role == v1::ROLE_ORIGIN) {
      continue;  // Z-10, Z-11: without zones viewers never go to an origin
    }
    tail.push_back(
        {all[i].drain, {all[i].id, rank, all[i].live->play_sessions().value_or(0), false}});
  }
  std::stable_sort(tail.begin(), tail.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first, a.second.zone_rank, a.second.load) <
           std::tie(b.first, b.second.zone_rank, b.second.load);
  });
  for (auto& [draining, node] : tail) nodes.push_back(std::move(node));
  if (nodes.empty()) {
    return fail(503, "no_node", "no node serves this stream for this viewer now", settings.ttl_s);
  }
  // Only a move for load alone uses the stream's move budget.
  PriorityResult order = PathwayPriority(nodes, request.current, settings.rebalance_percent, true);
  if (order.moved_for_load && !AdmitMove(request.stream)) {
    order = PathwayPriority(nodes, request.current, settings.rebalance_percent, false);
  }
  if (!request.current.empty() && order.priority.front() != request.current) {
    auto it = std::find_if(nodes.begin(), nodes.end(),
                           [&](const PathwayNode& n) { return n.id == request.current; });
    moves_counter_.Increment(order.moved_for_load                 ? "load"
                             : it == nodes.end() || !it->eligible ? "ineligible"
                                                                  : "zone");
  }
  answers_.Increment("ok");
  std::string reload = absl::StrCat(*public_base_.Get(), "/steering/", request.stream);
  if (!request.base_query.empty()) absl::StrAppend(&reload, "?", request.base_query);
  answer.body = {{"VERSION", 1}, {"TTL", settings.ttl_s}, {"RELOAD-URI", reload}};
  // DASH: the spec's SERVICE-LOCATION-PRIORITY, and PATHWAY-PRIORITY, the key of the DASH-IF
  // steering manifest that dash.js 5 and Shaka read (the same list under both names).
  if (request.dash) answer.body["SERVICE-LOCATION-PRIORITY"] = order.priority;
  answer.body["PATHWAY-PRIORITY"] = std::move(order.priority);
  return answer;
}

}  // namespace meshwork::central
