#include "central/model/object_codecs.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "central/model/json_fields.h"
#include "common/net/cidr.h"
#include "common/status/status_macros.h"
#include "common/status/status_map.h"

namespace meshwork::central {
namespace {

constexpr std::string_view kZoneMembers[] = {"name", "routes", "fallback_zone"};
constexpr std::string_view kStreamMembers[] = {
    "name",    "placement",   "inputs",           "segment_ms",
    "part_ms", "live_window", "input_timeout_ms", "cors"};
constexpr std::string_view kInputSchemes[] = {"publish://", "udp://", "srt://", "http://"};

// An optional integer member within [lo, hi], `fallback` when absent or null.
absl::StatusOr<int64_t> BoundedInt(const json& body, const char* key, int64_t lo, int64_t hi,
                                   int64_t fallback) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return fallback;
  if (!it->is_number_integer() || it->get<int64_t>() < lo || it->get<int64_t>() > hi) {
    return InvalidField(key, absl::StrCat("must be an integer from ", lo, " to ", hi));
  }
  return it->get<int64_t>();
}
constexpr std::string_view kPlacementMembers[] = {"streamers"};
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
  if (name.empty() || name.size() > 512) return false;
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
                                                "\" must start with publish://, udp://, srt:// or "
                                                "http://"));
      }
      out["inputs"].push_back(url);
    }
  }
  ASSIGN_OR_RETURN(out["segment_ms"], BoundedInt(body, "segment_ms", 500, 10'000, 2000));
  ASSIGN_OR_RETURN(out["part_ms"], BoundedInt(body, "part_ms", 100, 2000, 500));
  ASSIGN_OR_RETURN(out["live_window"], BoundedInt(body, "live_window", 2, 100, 6));
  ASSIGN_OR_RETURN(out["input_timeout_ms"],
                   BoundedInt(body, "input_timeout_ms", 100, 60'000, 3000));
  if (out["part_ms"].get<int64_t>() > out["segment_ms"].get<int64_t>()) {
    return InvalidField("part_ms", "must not exceed segment_ms");
  }
  out["cors"] = "*";
  if (auto c = body.find("cors"); c != body.end() && !c->is_null()) {
    if (!c->is_string() || c->get<std::string>().empty() ||
        c->get<std::string>().find_first_of("\r\n") != std::string::npos) {
      return InvalidField("cors", "must be an origin (or \"*\")");
    }
    out["cors"] = *c;
  }
  auto it = body.find("placement");
  if (it == body.end() || it->is_null()) return out;
  if (!it->is_object()) return InvalidField("placement", "must be an object");
  RETURN_IF_ERROR(RejectUnknownMembers(*it, kPlacementMembers, "placement"));
  auto list = it->find("streamers");
  if (list == it->end() || list->is_null()) return out;
  if (!list->is_array()) return InvalidField("placement.streamers", "must be an array of ids");
  std::set<std::string> seen;
  for (size_t i = 0; i < list->size(); ++i) {
    std::string field = absl::StrCat("placement.streamers[", i, "]");
    const json& v = (*list)[i];
    if (!v.is_string() || !IsValidName(v.get<std::string>())) {
      return InvalidField(field, "must be a streamer id");
    }
    if (!seen.insert(v.get<std::string>()).second) return InvalidField(field, "is listed twice");
    out["placement"]["streamers"].push_back(v);
  }
  return out;
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
