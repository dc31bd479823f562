#include "central/model/stream_anchor.h"

#include "central/model/json_fields.h"
#include "common/status/status_map.h"

namespace meshwork::central {

absl::Status ResolveTimelineAnchor(const json& body, json& out) {
  out["timeline_anchor"] = nullptr;
  auto it = body.find("timeline_anchor");
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  const char* shape =
      "must be null or {\"t90k\": integer, \"wall_ms\": integer} with wall_ms a Unix time in ms";
  if (!it->is_object()) return InvalidField("timeline_anchor", shape);
  if (absl::Status s = RejectUnknownMembers(*it, {"t90k", "wall_ms"}, "timeline_anchor"); !s.ok())
    return s;
  auto t = it->find("t90k");
  auto w = it->find("wall_ms");
  if (t == it->end() || w == it->end() || !t->is_number_integer() || !w->is_number_integer()) {
    return InvalidField("timeline_anchor", shape);
  }
  TimelineAnchor anchor{t->get<int64_t>(), w->get<int64_t>()};
  if (!IsPlausibleAnchor(anchor)) return InvalidField("timeline_anchor", shape);
  out["timeline_anchor"] = TimelineAnchorJson(anchor);
  return absl::OkStatus();
}

std::optional<TimelineAnchor> StreamTimelineAnchor(const json& stream) {
  auto it = stream.find("timeline_anchor");
  if (it == stream.end() || !it->is_object()) return std::nullopt;
  auto t = it->find("t90k");
  auto w = it->find("wall_ms");
  if (t == it->end() || w == it->end() || !t->is_number_integer() || !w->is_number_integer()) {
    return std::nullopt;
  }
  return TimelineAnchor{t->get<int64_t>(), w->get<int64_t>()};
}

json TimelineAnchorJson(const std::optional<TimelineAnchor>& anchor) {
  if (!anchor) return nullptr;
  return {{"t90k", anchor->t90k}, {"wall_ms", anchor->wall_ms}};
}

void KeepTimelineAnchor(json& canonical, const json* stored) {
  canonical["timeline_anchor"] =
      TimelineAnchorJson(stored ? StreamTimelineAnchor(*stored) : std::nullopt);
}

bool ShouldReplaceAnchor(const std::optional<TimelineAnchor>& kept,
                         const TimelineAnchor& proposal) {
  if (!kept) return true;
  if (*kept == proposal) return false;
  if (AnchorPredicts(*kept, proposal.t90k, proposal.wall_ms)) return false;
  return proposal.wall_ms > kept->wall_ms;
}

}  // namespace meshwork::central
