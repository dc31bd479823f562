// Validation helpers for REST bodies (M-1): each error names the offending field with its
// full path ("cdn.playback_session_limit", "trusted_proxies[1]") so the API can answer 400
// with `field`.
#pragma once

#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace meshwork::central {

using nlohmann::json;

// "prefix.name" or "name" when prefix is empty.
std::string FieldPath(std::string_view prefix, std::string_view name);

// Parses a request body; InvalidArgument (field "body") when it is not JSON, not an object,
// or nested deeper than kMaxJsonDepth (checked before anything is parsed).
absl::StatusOr<json> ParseObjectBody(std::string_view body);

// InvalidArgument naming the first member of `object` not in `known`.
absl::Status RejectUnknownMembers(const json& object, std::span<const std::string_view> known,
                                  std::string_view prefix);
inline absl::Status RejectUnknownMembers(const json& object,
                                         std::initializer_list<std::string_view> known,
                                         std::string_view prefix) {
  return RejectUnknownMembers(
      object, std::span<const std::string_view>(known.begin(), known.size()), prefix);
}

// An optional non-negative integer limit: absent or null → nullopt; otherwise an integer in
// [0, 2^53]. `field` names it in errors.
absl::StatusOr<std::optional<uint64_t>> OptionalLimit(const json& object, std::string_view key,
                                                      std::string_view prefix);

// A name matching [a-z0-9][a-z0-9._-]{0,max_len-1}.
bool IsValidName(std::string_view name, size_t max_len = 64);

// A host name (RFC 1123 labels) or an IP literal ("203.0.113.7", "[2001:db8::1]").
bool IsValidHostname(std::string_view host);

}  // namespace meshwork::central
