// The server-managed members of a stream object (L-13 masks, L-14 cache versions): their
// validation as part of a stream, and the operations of the masks and invalidation API. Split
// from object_codecs.cc, whose header declares the API operations.
#pragma once

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace meshwork::central {

// Resolves "masks", "next_mask_id", "version" and "range_versions" of a stream `body` into
// `out` (absent ones take their defaults), so that a stored stream validates to itself.
absl::Status ResolveManagedMembers(const nlohmann::json& body, nlohmann::json& out);

}  // namespace meshwork::central
