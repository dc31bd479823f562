#include "central/model/streamer_codec.h"

#include "central/model/json_fields.h"
#include "common/status/status_macros.h"
#include "common/status/status_map.h"

namespace meshwork::central {
namespace {

constexpr std::string_view kTopMembers[] = {
    "id",    "hostname", "role", "zone", "cdn", "backup_session_limit", "alert_thresholds",
    "drain", "status"};
constexpr std::string_view kCdnMembers[] = {"playback_session_limit", "playback_bandwidth_kbit",
                                            "network_bandwidth_kbit"};
constexpr std::string_view kThresholdMembers[] = {"cpu_percent_error", "network_percent_error"};

json LimitJson(const std::optional<uint64_t>& v) { return v ? json(*v) : json(nullptr); }

absl::StatusOr<json> ValidateCdn(const json& body) {
  json cdn = {{"playback_session_limit", nullptr},
              {"playback_bandwidth_kbit", nullptr},
              {"network_bandwidth_kbit", nullptr}};
  auto it = body.find("cdn");
  if (it == body.end() || it->is_null()) return cdn;
  if (!it->is_object()) return InvalidField("cdn", "must be an object or null");
  RETURN_IF_ERROR(RejectUnknownMembers(*it, kCdnMembers, "cdn"));
  for (std::string_view key : kCdnMembers) {
    ASSIGN_OR_RETURN(auto limit, OptionalLimit(*it, key, "cdn"));
    cdn[std::string(key)] = LimitJson(limit);
  }
  return cdn;
}

absl::StatusOr<json> ValidateThresholds(const json& body) {
  json out = {{"cpu_percent_error", nullptr}, {"network_percent_error", nullptr}};
  auto it = body.find("alert_thresholds");
  if (it == body.end() || it->is_null()) return out;
  if (!it->is_object()) return InvalidField("alert_thresholds", "must be an object or null");
  RETURN_IF_ERROR(RejectUnknownMembers(*it, kThresholdMembers, "alert_thresholds"));
  for (std::string_view key : kThresholdMembers) {
    auto v = it->find(std::string(key));
    if (v == it->end() || v->is_null()) continue;
    std::string field = FieldPath("alert_thresholds", key);
    if (!v->is_number()) return InvalidField(field, "must be a number from 0 to 100 or null");
    double d = v->get<double>();
    if (d < 0 || d > 100) return InvalidField(field, "must be between 0 and 100");
    out[std::string(key)] = *v;
  }
  return out;
}

}  // namespace

absl::StatusOr<json> ValidateStreamer(const json& body, std::string_view id) {
  if (!body.is_object()) return InvalidField("body", "must be a JSON object");
  RETURN_IF_ERROR(RejectUnknownMembers(body, kTopMembers, ""));
  if (!IsValidName(id)) {
    return InvalidField("id", "must match [a-z0-9][a-z0-9._-]{0,63}");
  }
  if (auto it = body.find("id"); it != body.end()) {
    if (!it->is_string() || it->get<std::string>() != id) {
      return InvalidField("id", "must equal the id in the path");
    }
  }
  json out;
  out["id"] = std::string(id);

  auto host = body.find("hostname");
  if (host == body.end() || host->is_null()) return InvalidField("hostname", "is required");
  if (!host->is_string() || !IsValidHostname(host->get<std::string>())) {
    return InvalidField("hostname", "must be a host name or an IP address");
  }
  out["hostname"] = *host;

  auto role = body.find("role");
  if (role == body.end() || role->is_null()) return InvalidField("role", "is required");
  if (!role->is_string() || (*role != "ingest" && *role != "origin" && *role != "edge")) {
    return InvalidField("role", "must be one of ingest, origin, edge");
  }
  out["role"] = *role;

  auto zone = body.find("zone");
  if (zone == body.end() || zone->is_null()) {
    out["zone"] = nullptr;
  } else if (!zone->is_string() || !IsValidName(zone->get<std::string>())) {
    return InvalidField("zone", "must be a zone name ([a-z0-9][a-z0-9._-]{0,63}) or null");
  } else {
    out["zone"] = *zone;
  }

  ASSIGN_OR_RETURN(out["cdn"], ValidateCdn(body));
  ASSIGN_OR_RETURN(auto backup, OptionalLimit(body, "backup_session_limit", ""));
  out["backup_session_limit"] = LimitJson(backup);
  ASSIGN_OR_RETURN(out["alert_thresholds"], ValidateThresholds(body));
  // CS-4: a draining node takes no new viewers and comes last in every steering answer.
  out["drain"] = false;
  if (auto drain = body.find("drain"); drain != body.end() && !drain->is_null()) {
    if (!drain->is_boolean()) return InvalidField("drain", "must be a boolean");
    out["drain"] = *drain;
  }
  return out;
}

absl::StatusOr<json> PatchStreamer(const json& current, const json& patch, std::string_view id) {
  if (!patch.is_object()) return InvalidField("body", "a merge patch must be a JSON object");
  RETURN_IF_ERROR(RejectUnknownMembers(patch, kTopMembers, ""));
  if (auto it = patch.find("cdn"); it != patch.end() && it->is_object()) {
    RETURN_IF_ERROR(RejectUnknownMembers(*it, kCdnMembers, "cdn"));
  }
  if (auto it = patch.find("alert_thresholds"); it != patch.end() && it->is_object()) {
    RETURN_IF_ERROR(RejectUnknownMembers(*it, kThresholdMembers, "alert_thresholds"));
  }
  json merged = current;
  json effective = patch;
  effective.erase("status");
  merged.merge_patch(effective);
  return ValidateStreamer(merged, id);
}

}  // namespace meshwork::central
