// M-3: a stream's publish tokens, as the REST API accepts them.
//
//   "publish_tokens":  ["…", …]            admit every publish to the stream (push, objects)
//   "pipeline_tokens": {"a": ["…", …], …}  admit that pipeline's objects
//
// Several tokens per list let an operator rotate without a cut. A token is 16 to 256
// characters of [A-Za-z0-9._~+/=-] (URL- and header-safe). At most 8 per list. Both members
// are kept in canonical form only when non-empty, so streams without tokens look as before.
#pragma once

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace meshwork::central {

// Validates the two members of `body` and writes their canonical form into `out`.
absl::Status ResolvePublishTokens(const nlohmann::json& body, nlohmann::json& out);

}  // namespace meshwork::central
