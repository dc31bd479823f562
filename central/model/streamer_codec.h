// The streamer object of the REST API (M-1): validation and merge patch (T-7). Conversion
// to the protobuf pushed to the node is in streamer_proto.h.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace meshwork::central {

// Validates a PUT body for streamer `id` and returns its canonical form (every member
// present, absent limits as null). The read-only `status` member is ignored. Errors are
// InvalidArgument naming the field.
absl::StatusOr<nlohmann::json> ValidateStreamer(const nlohmann::json& body, std::string_view id);

// Applies a JSON Merge Patch (RFC 7396) to a canonical streamer and validates the result.
// Unknown members in the patch are rejected even when their value is null.
absl::StatusOr<nlohmann::json> PatchStreamer(const nlohmann::json& current,
                                             const nlohmann::json& patch, std::string_view id);

}  // namespace meshwork::central
