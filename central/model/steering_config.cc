#include "central/model/steering_config.h"

#include "absl/strings/str_cat.h"
#include "central/model/json_fields.h"
#include "common/status/status_macros.h"
#include "common/status/status_map.h"

namespace meshwork::central {
namespace {

using nlohmann::json;

constexpr std::string_view kSteeringMembers[] = {"enabled", "ttl_s", "rebalance_percent"};

absl::StatusOr<int64_t> BoundedMember(const json& object, const char* key, int64_t lo, int64_t hi,
                                      int64_t fallback) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  const std::string field = FieldPath("steering", key);
  if (!it->is_number_integer()) {
    return InvalidField(field, absl::StrCat("must be an integer from ", lo, " to ", hi));
  }
  int64_t v = it->get<int64_t>();
  if (v < lo || v > hi) {
    return InvalidField(field, absl::StrCat("must be between ", lo, " and ", hi));
  }
  return v;
}

}  // namespace

absl::Status ResolveSteering(const json& body, json& out) {
  auto it = body.find("steering");
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_object()) return InvalidField("steering", "must be an object");
  RETURN_IF_ERROR(RejectUnknownMembers(*it, kSteeringMembers, "steering"));
  SteeringSettings defaults;
  json resolved = {{"enabled", false}};
  if (auto e = it->find("enabled"); e != it->end() && !e->is_null()) {
    if (!e->is_boolean()) return InvalidField("steering.enabled", "must be a boolean");
    resolved["enabled"] = *e;
  }
  ASSIGN_OR_RETURN(resolved["ttl_s"], BoundedMember(*it, "ttl_s", 1, 3600, defaults.ttl_s));
  ASSIGN_OR_RETURN(resolved["rebalance_percent"],
                   BoundedMember(*it, "rebalance_percent", 0, 1000, defaults.rebalance_percent));
  out["steering"] = std::move(resolved);
  return absl::OkStatus();
}

SteeringSettings SteeringOf(const json& stream_object, const json& cluster_default) {
  SteeringSettings s;
  auto it = stream_object.find("steering");
  if (it == stream_object.end() || !it->is_object()) {
    if (!cluster_default.is_object()) return s;
    return SteeringOf(json{{"steering", cluster_default}});
  }
  s.enabled = it->value("enabled", false);
  s.ttl_s = it->value("ttl_s", s.ttl_s);
  s.rebalance_percent = it->value("rebalance_percent", s.rebalance_percent);
  return s;
}

}  // namespace meshwork::central
