#include "central/model/stream_masks.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "central/model/json_fields.h"
#include "central/model/object_codecs.h"
#include "common/status/status_macros.h"
#include "common/status/status_map.h"

namespace meshwork::central {
namespace {

// What a mask or a ranged invalidation applies to.
constexpr std::string_view kSelectorMembers[] = {"pipeline", "region", "from_msn", "to_msn"};
constexpr std::string_view kStoredMaskMembers[] = {"id", "pipeline", "region", "from_msn",
                                                   "to_msn"};
constexpr std::string_view kRangeVersionMembers[] = {"from_msn", "to_msn", "pipeline", "region",
                                                     "version"};

// An integer member known to be valid (or absent): its value, `fallback` otherwise.
uint64_t Counter(const json& object, std::string_view key, uint64_t fallback) {
  auto it = object.find(std::string(key));
  if (it == object.end() || !it->is_number_integer()) return fallback;
  return it->get<uint64_t>();
}

// "m<N>", N >= 1 without leading zeros → N.
std::optional<uint64_t> MaskIdNumber(std::string_view id) {
  if (id.size() < 2 || id.size() > 17 || id[0] != 'm' || id[1] == '0') return std::nullopt;
  uint64_t n = 0;
  for (char c : id.substr(1)) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n;
}

// {"pipeline", "region", "from_msn", "to_msn"} with absent members null. `require_target`:
// at least one of pipeline/region (masks).
absl::StatusOr<json> ValidateSelector(const json& body, std::string_view prefix,
                                      bool require_target) {
  if (!body.is_object()) {
    return InvalidField(prefix.empty() ? std::string_view("body") : prefix,
                        "must be a JSON object");
  }
  RETURN_IF_ERROR(RejectUnknownMembers(body, kSelectorMembers, prefix));
  json out = {
      {"pipeline", nullptr}, {"region", nullptr}, {"from_msn", nullptr}, {"to_msn", nullptr}};
  if (auto it = body.find("pipeline"); it != body.end() && !it->is_null()) {
    if (!it->is_string() || !IsValidPipelineId(it->get_ref<const std::string&>())) {
      return InvalidField(FieldPath(prefix, "pipeline"), "must be a pipeline id ([a-z0-9-]{1,32})");
    }
    out["pipeline"] = *it;
  }
  if (auto it = body.find("region"); it != body.end() && !it->is_null()) {
    if (!it->is_string() || !IsValidRegion(it->get_ref<const std::string&>())) {
      return InvalidField(FieldPath(prefix, "region"), "must be a region ([A-Za-z0-9._-]{1,64})");
    }
    out["region"] = *it;
  }
  ASSIGN_OR_RETURN(auto from, OptionalLimit(body, "from_msn", prefix));
  ASSIGN_OR_RETURN(auto to, OptionalLimit(body, "to_msn", prefix));
  if (from && to && *from > *to) {
    return InvalidField(FieldPath(prefix, "to_msn"), "must not be less than from_msn");
  }
  if (from) out["from_msn"] = *from;
  if (to) out["to_msn"] = *to;
  if (require_target && out["pipeline"].is_null() && out["region"].is_null()) {
    return InvalidField(FieldPath(prefix, "pipeline"), "a mask needs a pipeline, a region or both");
  }
  return out;
}

bool SelectsNothing(const json& selector) {
  return selector["pipeline"].is_null() && selector["region"].is_null() &&
         selector["from_msn"].is_null() && selector["to_msn"].is_null();
}

}  // namespace

absl::Status ResolveManagedMembers(const json& body, json& out) {
  out["masks"] = json::array();
  uint64_t highest_id = 0;
  if (auto it = body.find("masks"); it != body.end() && !it->is_null()) {
    if (!it->is_array() || it->size() > kMaxStreamMasks) {
      return InvalidField("masks",
                          absl::StrCat("must be an array of at most ", kMaxStreamMasks, " masks"));
    }
    std::set<uint64_t> ids;
    for (size_t i = 0; i < it->size(); ++i) {
      std::string prefix = absl::StrCat("masks[", i, "]");
      const json& m = (*it)[i];
      if (!m.is_object()) return InvalidField(prefix, "must be a mask object");
      RETURN_IF_ERROR(RejectUnknownMembers(m, kStoredMaskMembers, prefix));
      auto id = m.find("id");
      std::optional<uint64_t> number;
      if (id != m.end() && id->is_string())
        number = MaskIdNumber(id->get_ref<const std::string&>());
      if (!number) return InvalidField(FieldPath(prefix, "id"), "must be a mask id (m<N>)");
      if (!ids.insert(*number).second)
        return InvalidField(FieldPath(prefix, "id"), "is listed twice");
      highest_id = std::max(highest_id, *number);
      json rest = m;
      rest.erase("id");
      ASSIGN_OR_RETURN(json mask, ValidateSelector(rest, prefix, /*require_target=*/true));
      mask["id"] = *id;
      out["masks"].push_back(std::move(mask));
    }
  }
  ASSIGN_OR_RETURN(auto next_id, OptionalLimit(body, "next_mask_id", ""));
  if (next_id && *next_id <= highest_id) {
    return InvalidField("next_mask_id", "must be greater than every mask id");
  }
  out["next_mask_id"] = next_id.value_or(highest_id + 1);
  ASSIGN_OR_RETURN(auto version, OptionalLimit(body, "version", ""));
  if (version && *version == 0) return InvalidField("version", "must be at least 1");
  out["version"] = version.value_or(1);
  out["range_versions"] = json::array();
  if (auto it = body.find("range_versions"); it != body.end() && !it->is_null()) {
    if (!it->is_array() || it->size() > kMaxRangeVersions) {
      return InvalidField("range_versions", absl::StrCat("must be an array of at most ",
                                                         kMaxRangeVersions, " ranges"));
    }
    for (size_t i = 0; i < it->size(); ++i) {
      std::string prefix = absl::StrCat("range_versions[", i, "]");
      const json& r = (*it)[i];
      if (!r.is_object()) return InvalidField(prefix, "must be an object");
      RETURN_IF_ERROR(RejectUnknownMembers(r, kRangeVersionMembers, prefix));
      ASSIGN_OR_RETURN(auto v, OptionalLimit(r, "version", prefix));
      if (!v || *v == 0) return InvalidField(FieldPath(prefix, "version"), "must be at least 1");
      json rest = r;
      rest.erase("version");
      ASSIGN_OR_RETURN(json range, ValidateSelector(rest, prefix, /*require_target=*/false));
      range["version"] = *v;
      out["range_versions"].push_back(std::move(range));
    }
  }
  return absl::OkStatus();
}
absl::StatusOr<json> ValidateMaskBody(const json& body) {
  return ValidateSelector(body, "", /*require_target=*/true);
}

absl::StatusOr<json> AddStreamMask(json& stream, const json& body) {
  ASSIGN_OR_RETURN(json mask, ValidateMaskBody(body));
  json& masks = stream["masks"];
  if (!masks.is_array()) masks = json::array();
  if (masks.size() >= kMaxStreamMasks) {
    return WithField(absl::AbortedError(absl::StrCat("masks: a stream has at most ",
                                                     kMaxStreamMasks, " masks; delete one first")),
                     "masks");
  }
  // Ids are never reused: the counter only grows, and is kept past every id in use.
  uint64_t next = Counter(stream, "next_mask_id", 1);
  for (const json& m : masks) {
    if (m.contains("id") && m["id"].is_string()) {
      next = std::max(next, MaskIdNumber(m["id"].get<std::string>()).value_or(0) + 1);
    }
  }
  mask["id"] = absl::StrCat("m", next);
  masks.push_back(mask);
  stream["next_mask_id"] = next + 1;
  return mask;
}

absl::Status RemoveStreamMask(json& stream, std::string_view id) {
  json& masks = stream["masks"];
  if (masks.is_array()) {
    for (auto it = masks.begin(); it != masks.end(); ++it) {
      if (it->contains("id") && (*it)["id"] == std::string(id)) {
        masks.erase(it);
        return absl::OkStatus();
      }
    }
  }
  return absl::NotFoundError(absl::StrCat("mask \"", std::string(id),
                                          "\" does not exist on stream \"",
                                          stream.value("name", ""), "\""));
}

absl::Status RemoveStreamMasksLike(json& stream, const json& body) {
  ASSIGN_OR_RETURN(json wanted, ValidateMaskBody(body));
  json& masks = stream["masks"];
  json kept = json::array();
  if (masks.is_array()) {
    for (const json& m : masks) {
      json selector = m;
      selector.erase("id");
      if (selector != wanted) kept.push_back(m);
    }
  }
  if (!masks.is_array() || kept.size() == masks.size()) {
    return absl::NotFoundError(absl::StrCat("no mask of stream \"", stream.value("name", ""),
                                            "\" equals ", wanted.dump()));
  }
  masks = std::move(kept);
  return absl::OkStatus();
}

absl::StatusOr<json> InvalidateStream(json& stream, const json& body) {
  if (!body.is_object()) return InvalidField("body", "must be a JSON object");
  ASSIGN_OR_RETURN(json selector, ValidateSelector(body, "", /*require_target=*/false));
  json& ranges = stream["range_versions"];
  if (!ranges.is_array()) ranges = json::array();
  uint64_t highest = Counter(stream, "version", 1);
  for (const json& r : ranges) highest = std::max(highest, Counter(r, "version", 0));
  if (SelectsNothing(selector) || ranges.size() >= kMaxRangeVersions) {
    stream["version"] = highest + 1;
    ranges = json::array();
  } else {
    selector["version"] = highest + 1;
    ranges.push_back(std::move(selector));
  }
  return json{{"version", stream["version"]}, {"range_versions", ranges}};
}

}  // namespace meshwork::central
