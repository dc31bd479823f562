#include "central/cluster/anchor_keeper.h"

#include <algorithm>
#include <cstdlib>

#include "central/model/stream_anchor.h"
#include "common/log/log.h"

namespace meshwork::central {

namespace {
constexpr int64_t kMaxAnchorSkewMs = 24 * 3600 * 1000;  // from central's clock
constexpr int64_t kMinWriteIntervalMs = 1000;           // per stream
}  // namespace

namespace {

bool PlacedOn(const nlohmann::json& stream, const std::string& node_id) {
  auto placement = stream.find("placement");
  if (placement == stream.end() || !placement->is_object()) return false;
  auto list = placement->find("streamers");
  if (list == placement->end() || !list->is_array()) return false;
  return std::any_of(list->begin(), list->end(),
                     [&](const nlohmann::json& id) { return id == node_id; });
}

}  // namespace

void AnchorKeeper::LogIgnored(const std::string& node_id, const std::string& stream,
                              const char* reason, const TimelineAnchor& proposal) {
  int64_t now = UnixMillis(clock_.Now());
  int64_t next = next_log_ms_.load();
  if (now < next || !next_log_ms_.compare_exchange_strong(next, now + 10'000)) return;
  log::Warn("timeline_anchor_ignored", {{"node", node_id},
                                        {"stream", stream},
                                        {"reason", reason},
                                        {"t90k", proposal.t90k},
                                        {"wall_ms", proposal.wall_ms}});
}

void AnchorKeeper::OnReport(const std::string& node_id, const v1::LoadReport& report) {
  std::shared_ptr<const ClusterConfig> config;
  for (const auto& s : report.streams()) {
    if (!s.has_timeline_anchor()) continue;
    TimelineAnchor proposal{s.timeline_anchor().t90k(), s.timeline_anchor().wall_unix_ms()};
    if (!config) config = config_->Current();
    auto it = config->streams.find(s.name());
    if (it == config->streams.end() || !PlacedOn(it->second.object, node_id)) {
      LogIgnored(node_id, s.name(), "stream not placed on the node", proposal);
      continue;
    }
    const int64_t now_ms = UnixMillis(clock_.Now());
    if (!IsPlausibleAnchor(proposal) || std::abs(proposal.wall_ms - now_ms) > kMaxAnchorSkewMs) {
      LogIgnored(node_id, s.name(), "implausible", proposal);
      continue;
    }
    if (!ShouldReplaceAnchor(StreamTimelineAnchor(it->second.object), proposal)) continue;
    {
      absl::MutexLock lock(&mu_);
      auto last = last_write_ms_.find(s.name());
      if (last != last_write_ms_.end() && now_ms - last->second < kMinWriteIntervalMs) continue;
      if (!pending_.insert(s.name()).second) continue;
      last_write_ms_[s.name()] = now_ms;
    }
    std::string stream = s.name();
    post_([this, stream, node_id, proposal] { Write(stream, node_id, proposal); });
  }
}

void AnchorKeeper::Write(const std::string& stream, const std::string& node_id,
                         TimelineAnchor proposal) {
  std::optional<TimelineAnchor> previous;
  bool changed = false;
  auto result = config_->MutateObject(ObjectKind::kStream, stream, [&](nlohmann::json& object) {
    previous = StreamTimelineAnchor(object);
    if (!ShouldReplaceAnchor(previous, proposal)) return absl::OkStatus();  // lost a race
    object["timeline_anchor"] = TimelineAnchorJson(proposal);
    changed = true;
    return absl::OkStatus();
  });
  {
    absl::MutexLock lock(&mu_);
    pending_.erase(stream);
  }
  if (!result.ok()) {
    log::Warn("timeline_anchor_write_failed",
              {{"stream", stream}, {"error", result.status().ToString()}});
    return;
  }
  if (!changed) return;
  log::Info("timeline_anchor_kept", {{"stream", stream},
                                     {"node", node_id},
                                     {"t90k", proposal.t90k},
                                     {"wall_ms", proposal.wall_ms},
                                     {"replaced", previous.has_value()}});
}

}  // namespace meshwork::central
