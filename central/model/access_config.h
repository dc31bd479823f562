// A-1 (spec 09): a stream's viewer access policy, as the REST API accepts it:
//
//   "access": {"mode": "open" | "token", "allow_cidrs": [CIDR…], "deny_cidrs": [CIDR…],
//              "max_sessions_per_login": null}
//
// `mode` "open" (the default) admits every viewer; "token" asks for a signed JWT.
// `allow_cidrs` (when non-empty, only those addresses) and `deny_cidrs` (never those) apply
// in every mode before anything else, to the client address after the trusted-proxy rules
// (T-2); at most kMaxAccessCidrs each, stored canonical. `max_sessions_per_login` (A-8:
// 1…kMaxSessionsPerLogin, or null for no limit) bounds the active play sessions of one login
// on each node (a token's `max_sessions` claim overrides it). Not built yet and refused with a
// field-named 400 rather than accepted and ignored: "mode": "backend". Kept in
// canonical form only when present.
#pragma once

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace meshwork::central {

inline constexpr size_t kMaxAccessCidrs = 1024;
inline constexpr int64_t kMaxSessionsPerLogin = 100'000;

// Validates `body`'s "access" member and writes its canonical form into `out`.
absl::Status ResolveAccess(const nlohmann::json& body, nlohmann::json& out);

}  // namespace meshwork::central
