#include "central/model/json_fields.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/json/bounded_json.h"
#include "common/net/ip_address.h"
#include "common/status/status_map.h"

namespace meshwork::central {

std::string FieldPath(std::string_view prefix, std::string_view name) {
  if (prefix.empty()) return std::string(name);
  return absl::StrCat(absl::string_view(prefix.data(), prefix.size()), ".",
                      absl::string_view(name.data(), name.size()));
}

absl::StatusOr<json> ParseObjectBody(std::string_view body) {
  // Depth first: merge patches, copies and comparisons recurse once per level.
  auto parsed = ParseBoundedJson(body, "body");
  if (!parsed.ok()) return parsed.status();
  if (!parsed->is_object()) return InvalidField("body", "request body must be a JSON object");
  return parsed;
}

absl::Status RejectUnknownMembers(const json& object, std::span<const std::string_view> known,
                                  std::string_view prefix) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (std::find(known.begin(), known.end(), it.key()) == known.end()) {
      std::string field = FieldPath(prefix, it.key());
      return InvalidField(field, "unknown member");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<uint64_t>> OptionalLimit(const json& object, std::string_view key,
                                                      std::string_view prefix) {
  auto it = object.find(std::string(key));
  if (it == object.end() || it->is_null()) return std::optional<uint64_t>();
  std::string field = FieldPath(prefix, key);
  if (it->is_number_unsigned()) {
    uint64_t v = it->get<uint64_t>();
    if (v > (uint64_t{1} << 53)) return InvalidField(field, "must be at most 2^53");
    return std::optional<uint64_t>(v);
  }
  if (it->is_number_integer()) {  // signed storage: negative, or built in C++ from an int
    int64_t v = it->get<int64_t>();
    if (v < 0) return InvalidField(field, "must not be negative");
    if (static_cast<uint64_t>(v) > (uint64_t{1} << 53)) {
      return InvalidField(field, "must be at most 2^53");
    }
    return std::optional<uint64_t>(static_cast<uint64_t>(v));
  }
  if (it->is_number_float()) {
    double d = it->get<double>();
    if (d < 0) return InvalidField(field, "must not be negative");
    return InvalidField(field, "must be an integer");
  }
  return InvalidField(field, "must be a non-negative integer or null");
}

bool IsValidName(std::string_view name, size_t max_len) {
  if (name.empty() || name.size() > max_len) return false;
  auto lower_or_digit = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!lower_or_digit(name[0])) return false;
  for (char c : name) {
    if (!lower_or_digit(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

bool IsValidHostname(std::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  if (host.front() == '[' && host.back() == ']') {
    auto ip = net::IpAddress::Parse(host.substr(1, host.size() - 2));
    return ip.ok() && !ip->is_v4();
  }
  if (net::IpAddress::Parse(host).ok()) return true;
  size_t label = 0;
  for (size_t i = 0; i <= host.size(); ++i) {
    if (i == host.size() || host[i] == '.') {
      if (label == 0 || label > 63) return false;
      if (host[i - 1] == '-' || host[i - label] == '-') return false;
      label = 0;
      continue;
    }
    char c = host[i];
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    if (!ok) return false;
    ++label;
  }
  return true;
}

}  // namespace meshwork::central
