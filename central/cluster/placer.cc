#include "central/cluster/placer.h"

#include <algorithm>
#include <limits>
#include <set>

#include "absl/strings/str_join.h"
#include "common/log/log.h"

namespace meshwork::central {
namespace {

using nlohmann::json;

constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();

bool IsCountPlaced(const json& stream) {
  auto p = stream.find("placement");
  return p != stream.end() && p->is_object() && p->value("count", json()).is_number_integer();
}

std::vector<std::string> Listed(const json& stream) {
  std::vector<std::string> out;
  for (const auto& id : stream["placement"]["streamers"]) out.push_back(id.get<std::string>());
  return out;
}

// Whether the configured node `id` may hold the stream at all: known, not an edge, in the zone.
bool Suitable(const ClusterConfig& config, const std::string& id, const json& zone) {
  auto it = config.streamers.find(id);
  if (it == config.streamers.end()) return false;
  const json& node = it->second.object;
  if (node.value("role", std::string()) == "edge") return false;
  return zone.is_null() || node.value("zone", json()) == zone;
}

bool Online(const NodeStates& nodes, const std::string& id) {
  auto it = nodes.find(id);
  return it != nodes.end() && it->second.online;
}

struct NodeUse {
  int64_t need_kbit = 0;
  int streams = 0;
};

// What the other streams already use of each node.
std::map<std::string, NodeUse> UseByNode(const ClusterConfig& config, const NodeStates& nodes,
                                         const std::string& except) {
  std::map<std::string, NodeUse> use;
  for (const auto& [name, record] : config.streams) {
    if (name == except) continue;
    int64_t need = PlacementNeedKbit(name, record.object, nodes);
    for (const auto& id : record.object["placement"]["streamers"]) {
      NodeUse& u = use[id.get<std::string>()];
      u.need_kbit += need;
      u.streams += 1;
    }
  }
  return use;
}

int64_t Budget(const ClusterConfig& config, const std::string& id) {
  const json& limit =
      config.streamers.at(id).object.at("cdn").value("network_bandwidth_kbit", json());
  return limit.is_number() ? limit.get<int64_t>() : kUnlimited;
}

}  // namespace

int64_t PlacementNeedKbit(const std::string& name, const json& stream, const NodeStates& nodes) {
  // Only the nodes the stream is placed on speak for its bitrate, and no report's figure is
  // taken past kMaxStreamKbit: a made-up or broken report cannot make the stream unplaceable.
  std::vector<std::string> placed;
  if (auto p = stream.find("placement"); p != stream.end() && p->is_object()) {
    if (auto list = p->find("streamers"); list != p->end() && list->is_array()) {
      for (const auto& id : *list) {
        if (id.is_string()) placed.push_back(id.get<std::string>());
      }
    }
  }
  int64_t bitrate = 0;
  for (const std::string& id : placed) {
    auto it = nodes.find(id);
    if (it == nodes.end() || !it->second.has_report) continue;
    for (const auto& s : it->second.report.streams()) {
      if (s.name() != name) continue;
      int64_t total = 0;
      for (const auto& r : s.renditions()) {
        total = std::min<int64_t>(
            kMaxStreamKbit, total + static_cast<int64_t>(std::min<uint64_t>(
                                        r.bitrate_kbit(), static_cast<uint64_t>(kMaxStreamKbit))));
      }
      bitrate = std::max(bitrate, total);
    }
  }
  if (bitrate == 0) {
    const json& declared = stream["placement"].value("bitrate_kbit", json());
    if (declared.is_number()) bitrate = declared.get<int64_t>();
  }
  int64_t outputs = 0;
  if (auto p = stream.find("publish"); p != stream.end() && p->is_array()) {
    outputs = static_cast<int64_t>(p->size());
  }
  return bitrate * (1 + outputs);
}

PlacementDecision PlaceByCount(const PlacementView& view, const std::string& name,
                               const json& stream) {
  const json& placement = stream["placement"];
  const size_t count = placement["count"].get<size_t>();
  const json& zone = placement["zone"];
  const int64_t replace_after_ms = placement["replace_after_s"].get<int64_t>() * 1000;

  PlacementDecision out;
  for (const auto& id : Listed(stream)) {
    if (!Suitable(view.config, id, zone)) continue;
    auto since = view.offline_since_ms.find(id);
    bool waited = !Online(view.nodes, id) && since != view.offline_since_ms.end() &&
                  view.now_ms - since->second >= replace_after_ms;
    (waited ? out.replaced : out.streamers).push_back(id);
  }
  // More kept than the count (it was lowered): offline nodes go first, from the end.
  for (size_t i = out.streamers.size(); i > 0 && out.streamers.size() > count; --i) {
    if (!Online(view.nodes, out.streamers[i - 1]))
      out.streamers.erase(out.streamers.begin() + (i - 1));
  }
  if (out.streamers.size() > count) out.streamers.resize(count);
  if (out.streamers.size() >= count) return out;

  const int64_t need = PlacementNeedKbit(name, stream, view.nodes);
  const auto use = UseByNode(view.config, view.nodes, name);
  struct Candidate {
    int64_t unused;
    int streams;
    std::string id;
  };
  std::vector<Candidate> candidates;
  std::set<std::string> taken(out.streamers.begin(), out.streamers.end());
  taken.insert(out.replaced.begin(), out.replaced.end());
  for (const auto& [id, record] : view.config.streamers) {
    if (taken.contains(id) || !Suitable(view.config, id, zone) || !Online(view.nodes, id)) {
      continue;
    }
    int64_t budget = Budget(view.config, id);
    auto u = use.find(id);
    NodeUse used = u == use.end() ? NodeUse{} : u->second;
    int64_t unused = budget == kUnlimited ? kUnlimited : budget - used.need_kbit;
    if (budget == 0 || unused < need) continue;
    candidates.push_back({unused, used.streams, id});
  }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.unused != b.unused) return a.unused > b.unused;
    if (a.streams != b.streams) return a.streams < b.streams;
    return a.id < b.id;
  });
  for (const auto& c : candidates) {
    if (out.streamers.size() >= count) break;
    out.streamers.push_back(c.id);
  }
  return out;
}

Placer::Placer(ConfigService* config, NodesFn nodes, const Clock& clock,
               prometheus::Registry* metrics)
    : config_(config),
      nodes_(std::move(nodes)),
      clock_(clock),
      started_ms_(UnixMillis(clock.Now())) {
  if (metrics) {
    replaced_total_ = &prometheus::BuildCounter()
                           .Name("meshwork_placement_replaced_total")
                           .Help("C-9: nodes replaced in a count placement after replace_after_s")
                           .Register(*metrics)
                           .Add({});
  }
}

Placer::~Placer() { Stop(); }

void Placer::Start(std::chrono::milliseconds period) {
  timer_.Start(period, [this] { Tick(); });
}

void Placer::Stop() { timer_.Stop(); }

void Placer::NoteOffline(const ClusterConfig& config, const NodeStates& nodes, int64_t now_ms) {
  for (const auto& [id, record] : config.streamers) {
    if (Online(nodes, id)) {
      offline_since_ms_.erase(id);
    } else if (!offline_since_ms_.contains(id)) {
      // A node this central never saw has been offline, as far as it knows, since it started.
      offline_since_ms_[id] = nodes.contains(id) ? now_ms : started_ms_;
    }
  }
}

void Placer::Fill(const ClusterConfig& current, const std::string& name, json& stream) {
  if (!IsCountPlaced(stream)) return;
  NodeStates nodes = nodes_();
  int64_t now_ms = UnixMillis(clock_.Now());
  absl::MutexLock lock(&mu_);
  NoteOffline(current, nodes, now_ms);
  PlacementDecision decision =
      PlaceByCount({current, nodes, offline_since_ms_, now_ms}, name, stream);
  stream["placement"]["streamers"] = decision.streamers;
}

std::vector<std::string> Placer::Tick() {
  auto config = config_->Current();
  NodeStates nodes = nodes_();
  int64_t now_ms = UnixMillis(clock_.Now());
  std::vector<std::pair<std::string, PlacementDecision>> changes;
  {
    absl::MutexLock lock(&mu_);
    NoteOffline(*config, nodes, now_ms);
    if (is_leader_ && !is_leader_()) return {};
    for (const auto& [name, record] : config->streams) {
      if (!IsCountPlaced(record.object)) continue;
      PlacementDecision decision =
          PlaceByCount({*config, nodes, offline_since_ms_, now_ms}, name, record.object);
      if (decision.streamers != Listed(record.object)) changes.emplace_back(name, decision);
    }
  }
  std::vector<std::string> written;
  for (const auto& [name, decision] : changes) {
    // The write decides again under the configuration's lock (Fill); this only asks for it.
    auto stored =
        config_->MutateObject(ObjectKind::kStream, name, [](json&) { return absl::OkStatus(); });
    if (!stored.ok()) {
      log::Warn("placement_write_failed",
                {{"stream", name}, {"error", stored.status().ToString()}});
      continue;
    }
    written.push_back(name);
    const auto before = Listed(config->streams.at(name).object);
    const auto after = Listed(*stored);
    std::vector<std::string> gone;
    for (const auto& id : before) {
      if (std::find(after.begin(), after.end(), id) == after.end()) gone.push_back(id);
    }
    if (replaced_total_) replaced_total_->Increment(static_cast<double>(gone.size()));
    log::Info("stream_placed", {{"stream", name},
                                {"streamers", absl::StrJoin(after, ",")},
                                {"removed", absl::StrJoin(gone, ",")}});
  }
  return written;
}

}  // namespace meshwork::central
