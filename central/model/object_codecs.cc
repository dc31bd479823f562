#include "central/model/object_codecs.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "central/model/access_config.h"
#include "central/model/dvr_config.h"
#include "central/model/json_fields.h"
#include "central/model/publish_targets.h"
#include "central/model/publish_tokens.h"
#include "central/model/steering_config.h"
#include "central/model/stream_anchor.h"
#include "central/model/stream_masks.h"
#include "common/net/cidr.h"
#include "common/status/status_macros.h"
#include "common/status/status_map.h"
#include "common/stream/defaults.h"

namespace meshwork::central {
namespace {

constexpr std::string_view kZoneMembers[] = {"name", "routes", "fallback_zone"};
constexpr std::string_view kStreamMembers[] = {"name",
                                               "placement",
                                               "inputs",
                                               "segment_ms",
                                               "part_ms",
                                               "live_window",
                                               "input_timeout_ms",
                                               "cors",
                                               "template",
                                               "pipelines",
                                               "masks",
                                               "next_mask_id",
                                               "version",
                                               "range_versions",
                                               "ott",
                                               "publish_tokens",
                                               "pipeline_tokens",
                                               "timeline_anchor",
                                               "publish",
                                               "dvr",
                                               "access",
                                               "steering"};
// Changed only by the server (L-13 masks, L-14 invalidation).
constexpr std::string_view kManagedMembers[] = {"masks", "next_mask_id", "version",
                                                "range_versions"};
constexpr std::string_view kTemplateMembers[] = {"availability_start", "segment_ms", "part_ms",
                                                 "retry_deadline_ms", "grace_ms"};
constexpr std::string_view kOttMembers[] = {"enabled", "group", "backup", "stale_after_ms",
                                            "min_protocol_version"};
constexpr size_t kMaxPipelines = 16;
constexpr std::string_view kInputSchemes[] = {"publish://", "rtmp://", "udp://", "srt://",
                                              "http://"};

// An optional integer member within [lo, hi] (lo >= 0): nullopt when absent or null.
absl::StatusOr<std::optional<int64_t>> OptionalBoundedInt(const json& object, std::string_view key,
                                                          std::string_view prefix, int64_t lo,
                                                          int64_t hi) {
  auto it = object.find(std::string(key));
  if (it == object.end() || it->is_null()) return std::optional<int64_t>();
  bool in_range = false;
  if (it->is_number_unsigned()) {
    uint64_t v = it->get<uint64_t>();
    in_range = v >= static_cast<uint64_t>(lo) && v <= static_cast<uint64_t>(hi);
  } else if (it->is_number_integer()) {
    int64_t v = it->get<int64_t>();
    in_range = v >= lo && v <= hi;
  }
  if (!in_range) {
    return InvalidField(FieldPath(prefix, key),
                        absl::StrCat("must be an integer from ", lo, " to ", hi));
  }
  return std::optional<int64_t>(it->get<int64_t>());
}

// An optional integer member within [lo, hi], `fallback` when absent or null.
absl::StatusOr<int64_t> BoundedInt(const json& body, const char* key, int64_t lo, int64_t hi,
                                   int64_t fallback) {
  ASSIGN_OR_RETURN(auto value, OptionalBoundedInt(body, key, "", lo, hi));
  return value.value_or(fallback);
}

json ManagedDefault(std::string_view key) {
  if (key == "masks" || key == "range_versions") return json::array();
  return 1;  // next_mask_id, version
}

// L-4, L-5, L-12: the resolved template, and the top-level segment_ms/part_ms it agrees with.
absl::Status ResolveTemplate(const json& body, json& out) {
  json given = json::object();
  if (auto t = body.find("template"); t != body.end() && !t->is_null()) {
    if (!t->is_object()) return InvalidField("template", "must be an object");
    RETURN_IF_ERROR(RejectUnknownMembers(*t, kTemplateMembers, "template"));
    given = *t;
  }
  json resolved = json::object();
  ASSIGN_OR_RETURN(auto start, OptionalLimit(given, "availability_start", "template"));
  resolved["availability_start"] = start ? json(*start) : json(nullptr);
  struct Length {
    const char* key;
    int64_t lo, hi, fallback;
  };
  for (const Length& l : {Length{"segment_ms", 500, 10'000, stream_defaults::kSegmentMs},
                          Length{"part_ms", 100, 2000, stream_defaults::kPartMs}}) {
    ASSIGN_OR_RETURN(auto top, OptionalBoundedInt(body, l.key, "", l.lo, l.hi));
    ASSIGN_OR_RETURN(auto inner, OptionalBoundedInt(given, l.key, "template", l.lo, l.hi));
    if (top && inner && *top != *inner) {
      return InvalidField(FieldPath("template", l.key),
                          absl::StrCat("is ", *inner, " but the stream's ", l.key, " is ", *top,
                                       "; give one of them or the same value in both"));
    }
    int64_t value = inner ? *inner : top ? *top : l.fallback;
    out[l.key] = value;
    resolved[l.key] = value;
  }
  if (out["part_ms"].get<int64_t>() > out["segment_ms"].get<int64_t>()) {
    bool from_template = given.contains("part_ms") && !given["part_ms"].is_null();
    return InvalidField(from_template ? "template.part_ms" : "part_ms",
                        "must not exceed segment_ms");
  }
  ASSIGN_OR_RETURN(auto retry,
                   OptionalBoundedInt(given, "retry_deadline_ms", "template", 100, 600'000));
  resolved["retry_deadline_ms"] = retry.value_or(out["segment_ms"].get<int64_t>());
  ASSIGN_OR_RETURN(auto grace, OptionalBoundedInt(given, "grace_ms", "template", 0, 10'000));
  resolved["grace_ms"] = grace.value_or(stream_defaults::kGraceMs);
  out["template"] = std::move(resolved);
  return absl::OkStatus();
}

// L-11: the ordered pipeline list.
absl::Status ResolvePipelines(const json& body, json& out) {
  out["pipelines"] = json::array();
  auto it = body.find("pipelines");
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_array()) return InvalidField("pipelines", "must be an array of pipeline ids");
  std::set<std::string> seen;
  for (size_t i = 0; i < it->size(); ++i) {
    std::string field = absl::StrCat("pipelines[", i, "]");
    if (i >= kMaxPipelines) {
      return InvalidField(field,
                          absl::StrCat("a stream has at most ", kMaxPipelines, " pipelines"));
    }
    const json& v = (*it)[i];
    if (!v.is_string() || !IsValidPipelineId(v.get_ref<const std::string&>())) {
      return InvalidField(field, "must be a pipeline id ([a-z0-9-]{1,32})");
    }
    if (!seen.insert(v.get<std::string>()).second) return InvalidField(field, "is listed twice");
    out["pipelines"].push_back(v);
  }
  return absl::OkStatus();
}

// O-1, O-3a, O-4, O-15: {"enabled", "group", "backup", "stale_after_ms",
// "min_protocol_version"}, every member present (null where absent). A group name is
// required when enabled; it is not defaulted.
absl::Status ResolveOtt(const json& body, json& out) {
  json resolved = {{"enabled", false},
                   {"group", nullptr},
                   {"backup", "can_replace"},
                   {"stale_after_ms", nullptr},
                   {"min_protocol_version", nullptr}};
  auto it = body.find("ott");
  if (it != body.end() && !it->is_null()) {
    if (!it->is_object()) return InvalidField("ott", "must be an object");
    RETURN_IF_ERROR(RejectUnknownMembers(*it, kOttMembers, "ott"));
    if (auto e = it->find("enabled"); e != it->end() && !e->is_null()) {
      if (!e->is_boolean()) return InvalidField("ott.enabled", "must be a boolean");
      resolved["enabled"] = *e;
    }
    if (auto g = it->find("group"); g != it->end() && !g->is_null()) {
      if (!g->is_string() || !IsValidName(g->get_ref<const std::string&>())) {
        return InvalidField("ott.group", "must be a group name ([a-z0-9][a-z0-9._-]{0,63})");
      }
      resolved["group"] = *g;
    }
    if (auto b = it->find("backup"); b != it->end() && !b->is_null()) {
      if (!b->is_string() || (*b != "can_replace" && *b != "not_offered")) {
        return InvalidField("ott.backup", "must be \"can_replace\" or \"not_offered\"");
      }
      resolved["backup"] = *b;
    }
    ASSIGN_OR_RETURN(auto stale, OptionalBoundedInt(*it, "stale_after_ms", "ott", 500, 60'000));
    if (stale) resolved["stale_after_ms"] = *stale;
    ASSIGN_OR_RETURN(auto minimum,
                     OptionalBoundedInt(*it, "min_protocol_version", "ott", 1, 1'000'000));
    if (minimum) resolved["min_protocol_version"] = *minimum;
  }
  if (resolved["enabled"].get<bool>() && resolved["group"].is_null()) {
    return InvalidField("ott.group", "is required when ott.enabled is true");
  }
  out["ott"] = std::move(resolved);
  return absl::OkStatus();
}

constexpr std::string_view kPlacementMembers[] = {"streamers", "count", "zone", "replace_after_s",
                                                  "bitrate_kbit"};

// C-9: an explicit list ({"streamers"}), or a count central fills within a zone ({"count",
// "zone", "replace_after_s", "bitrate_kbit", "streamers": the nodes chosen so far}).
absl::Status ResolvePlacement(const json& body, json& out) {
  auto it = body.find("placement");
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_object()) return InvalidField("placement", "must be an object");
  RETURN_IF_ERROR(RejectUnknownMembers(*it, kPlacementMembers, "placement"));
  json& placement = out["placement"];
  if (auto list = it->find("streamers"); list != it->end() && !list->is_null()) {
    if (!list->is_array()) return InvalidField("placement.streamers", "must be an array of ids");
    std::set<std::string> seen;
    for (size_t i = 0; i < list->size(); ++i) {
      std::string field = absl::StrCat("placement.streamers[", i, "]");
      const json& v = (*list)[i];
      if (!v.is_string() || !IsValidName(v.get<std::string>())) {
        return InvalidField(field, "must be a streamer id");
      }
      if (!seen.insert(v.get<std::string>()).second) return InvalidField(field, "is listed twice");
      placement["streamers"].push_back(v);
    }
  }
  ASSIGN_OR_RETURN(auto count,
                   OptionalBoundedInt(*it, "count", "placement", 1, kMaxPlacementCount));
  if (!count) {
    for (std::string_view key : {"zone", "replace_after_s", "bitrate_kbit"}) {
      auto member = it->find(std::string(key));
      if (member != it->end() && !member->is_null()) {
        return InvalidField(FieldPath("placement", key), "is only meaningful with placement.count");
      }
    }
    return absl::OkStatus();
  }
  placement["count"] = *count;
  placement["zone"] = nullptr;
  if (auto zone = it->find("zone"); zone != it->end() && !zone->is_null()) {
    if (!zone->is_string() || !IsValidName(zone->get<std::string>())) {
      return InvalidField("placement.zone", "must be a zone name (or null: any zone)");
    }
    placement["zone"] = *zone;
  }
  ASSIGN_OR_RETURN(auto after, OptionalBoundedInt(*it, "replace_after_s", "placement", 1, 86'400));
  placement["replace_after_s"] = after.value_or(kDefaultReplaceAfterS);
  ASSIGN_OR_RETURN(auto bitrate,
                   OptionalBoundedInt(*it, "bitrate_kbit", "placement", 0, 100'000'000));
  placement["bitrate_kbit"] = bitrate ? json(*bitrate) : json(nullptr);
  return absl::OkStatus();
}
constexpr std::string_view kVodMembers[] = {"name", "placements"};
constexpr std::string_view kVodPlacementMembers[] = {"streamer", "revision", "available"};

absl::Status CheckName(const json& body, std::string_view name) {
  if (auto it = body.find("name"); it != body.end()) {
    if (!it->is_string() || it->get<std::string>() != name) {
      return InvalidField("name", "must equal the name in the path");
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::span<const std::string_view> ZoneMembers() { return kZoneMembers; }
std::span<const std::string_view> StreamMembers() { return kStreamMembers; }
std::span<const std::string_view> StreamManagedMembers() { return kManagedMembers; }
std::span<const std::string_view> VodMembers() { return kVodMembers; }

absl::StatusOr<json> ValidateZone(const json& body, std::string_view name) {
  if (!body.is_object()) return InvalidField("body", "must be a JSON object");
  RETURN_IF_ERROR(RejectUnknownMembers(body, kZoneMembers, ""));
  if (!IsValidName(name)) return InvalidField("name", "must match [a-z0-9][a-z0-9._-]{0,63}");
  RETURN_IF_ERROR(CheckName(body, name));
  json out = {{"name", std::string(name)}, {"routes", json::array()}, {"fallback_zone", nullptr}};
  if (auto it = body.find("routes"); it != body.end() && !it->is_null()) {
    if (!it->is_array()) return InvalidField("routes", "must be an array of CIDR strings");
    std::set<std::string> seen;
    for (size_t i = 0; i < it->size(); ++i) {
      std::string field = absl::StrCat("routes[", i, "]");
      const json& v = (*it)[i];
      if (!v.is_string()) return InvalidField(field, "must be a CIDR string");
      auto cidr = net::Cidr::Parse(v.get<std::string>());
      if (!cidr.ok()) return InvalidField(field, std::string(cidr.status().message()));
      std::string canonical = cidr->ToString();
      if (!seen.insert(canonical).second) {
        return InvalidField(field, absl::StrCat("\"", canonical, "\" is listed twice"));
      }
      out["routes"].push_back(canonical);
    }
  }
  if (auto it = body.find("fallback_zone"); it != body.end() && !it->is_null()) {
    if (!it->is_string() || !IsValidName(it->get<std::string>())) {
      return InvalidField("fallback_zone", "must be a zone name or null");
    }
    out["fallback_zone"] = *it;  // may name a zone that does not exist (yet): Z-6
  }
  return out;
}

bool IsValidStreamName(std::string_view name) {
  if (name.empty() || name.size() > stream_defaults::kMaxStreamNameBytes) return false;
  size_t start = 0;
  while (true) {
    size_t slash = name.find('/', start);
    std::string_view part =
        name.substr(start, slash == std::string_view::npos ? name.npos : slash - start);
    if (!IsValidName(part, 128)) return false;
    if (slash == std::string_view::npos) return true;
    start = slash + 1;
  }
}

absl::StatusOr<json> ValidateStream(const json& body, std::string_view name) {
  if (!body.is_object()) return InvalidField("body", "must be a JSON object");
  RETURN_IF_ERROR(RejectUnknownMembers(body, kStreamMembers, ""));
  if (!IsValidStreamName(name)) {
    return InvalidField("name", "must match [a-z0-9][a-z0-9._-]{0,127}, '/'-separated");
  }
  if (IsReservedStreamName(name)) {
    return InvalidField("name",
                        "must not end in /masks, /masks/{id} or /invalidate (the stream API's "
                        "sub-resources) nor be or start with central, console, steering or vod "
                        "(central's own paths)");
  }
  RETURN_IF_ERROR(CheckName(body, name));
  json out = {{"name", std::string(name)}, {"placement", {{"streamers", json::array()}}}};
  out["inputs"] = json::array();
  if (auto in = body.find("inputs"); in != body.end() && !in->is_null()) {
    if (!in->is_array()) return InvalidField("inputs", "must be an array of input URLs");
    for (size_t i = 0; i < in->size(); ++i) {
      std::string field = absl::StrCat("inputs[", i, "]");
      const json& v = (*in)[i];
      if (!v.is_string() || v.get<std::string>().size() > 1024) {
        return InvalidField(field, "must be an input URL string");
      }
      std::string url = v.get<std::string>();
      bool known = std::any_of(std::begin(kInputSchemes), std::end(kInputSchemes),
                               [&url](std::string_view p) { return url.rfind(p, 0) == 0; });
      if (!known) {
        return InvalidField(field, absl::StrCat("\"", url,
                                                "\" must start with publish://, rtmp://, udp://, "
                                                "srt:// or http://"));
      }
      out["inputs"].push_back(url);
    }
  }
  RETURN_IF_ERROR(ResolveTemplate(body, out));  // also segment_ms and part_ms
  ASSIGN_OR_RETURN(out["live_window"],
                   BoundedInt(body, "live_window", 2, 100, stream_defaults::kLiveWindow));
  ASSIGN_OR_RETURN(out["input_timeout_ms"], BoundedInt(body, "input_timeout_ms", 100, 60'000,
                                                       stream_defaults::kInputTimeoutMs));
  RETURN_IF_ERROR(ResolvePipelines(body, out));
  RETURN_IF_ERROR(ResolveManagedMembers(body, out));  // L-13, L-14
  RETURN_IF_ERROR(ResolveOtt(body, out));
  RETURN_IF_ERROR(ResolvePublishTokens(body, out));
  RETURN_IF_ERROR(ResolvePublishTargets(body, out));  // S-23
  RETURN_IF_ERROR(ResolveDvr(body, out));             // D-1
  RETURN_IF_ERROR(ResolveAccess(body, out));
  RETURN_IF_ERROR(ResolveSteering(body, out));        // CS-1, CS-3
  RETURN_IF_ERROR(ResolveTimelineAnchor(body, out));  // S-5, server-managed
  out["cors"] = stream_defaults::kCors;
  if (auto c = body.find("cors"); c != body.end() && !c->is_null()) {
    if (!c->is_string() || c->get<std::string>().empty() ||
        c->get<std::string>().find_first_of("\r\n") != std::string::npos) {
      return InvalidField("cors", "must be an origin (or \"*\")");
    }
    out["cors"] = *c;
  }
  RETURN_IF_ERROR(ResolvePlacement(body, out));  // C-9
  return out;
}

bool IsReservedStreamName(std::string_view name) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t slash = name.find('/', start);
    parts.push_back(
        name.substr(start, slash == std::string_view::npos ? name.npos : slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  size_t n = parts.size();
  // Central's own paths: a stream under one of them could never be redirected to.
  for (std::string_view own : {"central", "console", "steering", "vod"}) {
    if (parts[0] == own) return true;
  }
  if (n >= 2 && (parts[n - 1] == "masks" || parts[n - 1] == "invalidate")) return true;
  return n >= 3 && parts[n - 2] == "masks";
}

absl::Status CheckStreamManagedMembers(const json& body, const json* stored) {
  if (!body.is_object()) return absl::OkStatus();  // the validator rejects it
  for (std::string_view key : kManagedMembers) {
    auto it = body.find(std::string(key));
    if (it == body.end()) continue;
    auto kept = stored ? stored->find(std::string(key)) : json::const_iterator();
    json expected = (stored && kept != stored->end()) ? *kept : ManagedDefault(key);
    if (*it != expected) {
      const char* through = (key == "masks" || key == "next_mask_id") ? "/masks" : "/invalidate";
      return InvalidField(key, absl::StrCat("is managed through ", through,
                                            "; a PUT or PATCH may only repeat its stored value"));
    }
  }
  return absl::OkStatus();
}

void KeepStreamManagedMembers(json& canonical, const json* stored) {
  for (std::string_view key : kManagedMembers) {
    auto kept = stored ? stored->find(std::string(key)) : json::const_iterator();
    canonical[std::string(key)] = (stored && kept != stored->end()) ? *kept : ManagedDefault(key);
  }
  KeepTimelineAnchor(canonical, stored);
}

json MergeStreamPatch(const json& stored, const json& patch) {
  json merged = stored;
  auto t = merged.find("template");
  if (patch.is_object() && t != merged.end() && t->is_object()) {
    auto p = patch.find("template");
    const json* inner = (p != patch.end() && p->is_object()) ? &*p : nullptr;
    auto in_inner = [&](const char* key) { return inner && inner->contains(key); };
    // A retry deadline equal to the segment length was (most likely) the default: it follows.
    bool segment_changes = patch.contains("segment_ms") || in_inner("segment_ms");
    if (segment_changes && !in_inner("retry_deadline_ms") && t->contains("retry_deadline_ms") &&
        t->contains("segment_ms") && (*t)["retry_deadline_ms"] == (*t)["segment_ms"]) {
      t->erase("retry_deadline_ms");
    }
    // A length given in only one place is taken up by the other.
    for (const char* key : {"segment_ms", "part_ms"}) {
      if (patch.contains(key) && !in_inner(key)) t->erase(key);
      if (in_inner(key) && !patch.contains(key)) merged.erase(key);
    }
  }
  merged.merge_patch(patch);
  // C-9: a patch that ends a count placement ("count": null) ends its companions too.
  if (auto p = merged.find("placement");
      p != merged.end() && p->is_object() && p->value("count", json()).is_null()) {
    for (const char* key : {"zone", "replace_after_s", "bitrate_kbit"}) p->erase(key);
  }
  return merged;
}

bool IsValidPipelineId(std::string_view id) {
  if (id.empty() || id.size() > 32) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

bool IsValidRegion(std::string_view region) {
  if (region.empty() || region.size() > 64) return false;
  return std::all_of(region.begin(), region.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

absl::StatusOr<json> ValidateVod(const json& body, std::string_view name) {
  if (!body.is_object()) return InvalidField("body", "must be a JSON object");
  RETURN_IF_ERROR(RejectUnknownMembers(body, kVodMembers, ""));
  if (!IsValidStreamName(name)) {
    return InvalidField("name", "must match [a-z0-9][a-z0-9._-]{0,127}, '/'-separated");
  }
  RETURN_IF_ERROR(CheckName(body, name));
  json out = {{"name", std::string(name)}, {"placements", json::array()}};
  auto it = body.find("placements");
  if (it == body.end() || it->is_null()) return out;
  if (!it->is_array()) return InvalidField("placements", "must be an array");
  std::set<std::string> seen;
  for (size_t i = 0; i < it->size(); ++i) {
    std::string prefix = absl::StrCat("placements[", i, "]");
    const json& p = (*it)[i];
    if (!p.is_object()) return InvalidField(prefix, "must be an object");
    RETURN_IF_ERROR(RejectUnknownMembers(p, kVodPlacementMembers, prefix));
    auto streamer = p.find("streamer");
    if (streamer == p.end() || !streamer->is_string() ||
        !IsValidName(streamer->get<std::string>())) {
      return InvalidField(FieldPath(prefix, "streamer"), "must be a streamer id");
    }
    if (!seen.insert(streamer->get<std::string>()).second) {
      return InvalidField(FieldPath(prefix, "streamer"), "is listed twice");
    }
    ASSIGN_OR_RETURN(auto revision, OptionalLimit(p, "revision", prefix));
    if (!revision) return InvalidField(FieldPath(prefix, "revision"), "is required");
    bool available = true;
    if (auto a = p.find("available"); a != p.end() && !a->is_null()) {
      if (!a->is_boolean())
        return InvalidField(FieldPath(prefix, "available"), "must be a boolean");
      available = a->get<bool>();
    }
    out["placements"].push_back(
        {{"streamer", *streamer}, {"revision", *revision}, {"available", available}});
  }
  return out;
}

}  // namespace meshwork::central
