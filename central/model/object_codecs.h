// Validation of the zone, stream and VOD objects of the REST API (M-1, Z-1…Z-6, Z-13, Z-24).
// Each returns the canonical form (every member present) or InvalidArgument naming the
// field. Cross-object rules (Z-3: a prefix belongs to one zone) are checked by
// ConfigService, which sees the whole configuration.
#pragma once

#include <span>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace meshwork::central {

// Z-1/Z-2/Z-6: {"name", "routes": [CIDR…] (canonical, no duplicates), "fallback_zone": name|null}.
absl::StatusOr<nlohmann::json> ValidateZone(const nlohmann::json& body, std::string_view name);
std::span<const std::string_view> ZoneMembers();

// Streams, minimal for routing: {"name", "placement": {"streamers": [id…]}}.
absl::StatusOr<nlohmann::json> ValidateStream(const nlohmann::json& body, std::string_view name);
std::span<const std::string_view> StreamMembers();
// A stream name: [a-z0-9][a-z0-9._-]{0,127}, '/'-separated namespaces of that form.
bool IsValidStreamName(std::string_view name);

// Z-24: {"name", "placements": [{"streamer", "revision", "available"}…]}.
absl::StatusOr<nlohmann::json> ValidateVod(const nlohmann::json& body, std::string_view name);
std::span<const std::string_view> VodMembers();

}  // namespace meshwork::central
