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

// Streams: {"name", "placement": {"streamers": [id…]} or (C-9) {"count": 1…64, "zone":
//  name|null, "replace_after_s": 1…86400 (60), "bitrate_kbit": n|null, "streamers": [id…] the
//  nodes central chose (placer.h)}, "inputs", "segment_ms", "part_ms",
// "live_window", "input_timeout_ms", "cors",
//  "template": {"availability_start": ms|null, "segment_ms", "part_ms", "retry_deadline_ms",
//               "grace_ms"} (L-4, L-5, L-12; always fully resolved),
//  "pipelines": [pipeline id…] (L-11),
//  "ott": {"enabled": bool, "group": name|null (required when enabled), "backup":
//          "can_replace"|"not_offered", "stale_after_ms": 500…60000|null} (O-1, O-3a, O-15;
//          always fully resolved, null stale_after_ms = 2 × segment_ms on the streamer),
//  server-managed (L-13, L-14): "masks": [{"id", "pipeline", "region", "from_msn", "to_msn"}…],
//  "next_mask_id", "version", "range_versions": [{"from_msn", "to_msn", "pipeline", "region",
//  "version"}…]}, and "timeline_anchor": {"t90k", "wall_ms"}|null (S-5, stream_anchor.h: any
//  well-formed value is accepted from a client and replaced by the stored one), "dvr"
//  (dvr_config.h) and "access" (A-1, access_config.h), each only when present.
// The managed members are validated for shape here (so a stored object validates to itself);
// whether a PUT/PATCH may carry them is CheckStreamManagedMembers' business.
absl::StatusOr<nlohmann::json> ValidateStream(const nlohmann::json& body, std::string_view name);
std::span<const std::string_view> StreamMembers();
// A stream name: [a-z0-9][a-z0-9._-]{0,127}, '/'-separated namespaces of that form.
bool IsValidStreamName(std::string_view name);
// Whether `name` ends like a stream sub-resource ("…/masks", "…/masks/{id}", "…/invalidate"
// after at least one other segment) or is or lies under one of central's own paths ("central",
// "console/…", "steering/…", "vod/…"): such names cannot be given to new streams.
bool IsReservedStreamName(std::string_view name);

// The members of a stream only the server changes (through /masks and /invalidate).
std::span<const std::string_view> StreamManagedMembers();
// PUT/PATCH of a stream: every managed member present in `body` must equal its value in
// `stored` (the defaults when `stored` is null, i.e. a new stream); InvalidArgument naming
// the member otherwise.
absl::Status CheckStreamManagedMembers(const nlohmann::json& body, const nlohmann::json* stored);
// Sets the managed members of `canonical` (the timeline anchor included) to those of `stored`
// (defaults when null).
void KeepStreamManagedMembers(nlohmann::json& canonical, const nlohmann::json* stored);
// A PATCH of a stored stream: the merge patch applied, except that template members that
// only followed top-level ones (template.segment_ms/part_ms, and retry_deadline_ms while it
// equals segment_ms) follow a changed top-level value instead of conflicting with it.
nlohmann::json MergeStreamPatch(const nlohmann::json& stored, const nlohmann::json& patch);

// L-11: [a-z0-9-]{1,32}.
bool IsValidPipelineId(std::string_view id);
// L-13: [A-Za-z0-9._-]{1,64}.
bool IsValidRegion(std::string_view region);

inline constexpr size_t kMaxStreamMasks = 100;
inline constexpr int64_t kMaxPlacementCount = 64;     // C-9
inline constexpr int64_t kDefaultReplaceAfterS = 60;  // C-9
inline constexpr size_t kMaxRangeVersions = 100;

// L-13: a mask body {"pipeline"?, "region"?, "from_msn"?, "to_msn"?} in canonical form (all
// four members, absent ones null). At least one of pipeline/region is required.
absl::StatusOr<nlohmann::json> ValidateMaskBody(const nlohmann::json& body);
// Adds a mask (validated from `body`) to `stream` with a fresh id; returns the stored mask.
// Aborted (409) when the stream already has kMaxStreamMasks masks.
absl::StatusOr<nlohmann::json> AddStreamMask(nlohmann::json& stream, const nlohmann::json& body);
// Removes the mask with `id`; NotFound naming it when absent.
absl::Status RemoveStreamMask(nlohmann::json& stream, std::string_view id);
// Removes every mask equal to the mask `body` describes; NotFound when none is.
absl::Status RemoveStreamMasksLike(nlohmann::json& stream, const nlohmann::json& body);

// L-14: an empty body ({}) bumps the whole stream: version = max(version, range versions) + 1,
// range_versions cleared. A body with any of from_msn/to_msn/pipeline/region (validated like
// a mask, without requiring pipeline/region) appends a range version instead (a whole bump
// when kMaxRangeVersions would be exceeded). Returns {"version", "range_versions"}.
absl::StatusOr<nlohmann::json> InvalidateStream(nlohmann::json& stream, const nlohmann::json& body);

// Z-24: {"name", "placements": [{"streamer", "revision", "available"}…]}.
absl::StatusOr<nlohmann::json> ValidateVod(const nlohmann::json& body, std::string_view name);
std::span<const std::string_view> VodMembers();

}  // namespace meshwork::central
