// A-1 (spec 09): a stream's viewer access policy, as the REST API accepts it:
//
//   "access": {"mode": "open" | "token" | "backend", "allow_cidrs": [CIDR…],
//              "deny_cidrs": [CIDR…], "max_sessions_per_login": null,
//              "backend": {"url": "http://…", "timeout_ms": 2000, "on_error": "deny",
//                          "ttl_s": 60}}
//
// `mode` "open" (the default) admits every viewer; "token" asks for a signed JWT;
// "backend" asks the operator's HTTP service once per new play session (A-6: `backend` is
// required then; `url` http:// or https:// (net::ParseHttpUrl); `timeout_ms`
// 1…kMaxBackendTimeoutMs; `on_error` "deny" or "allow"; `ttl_s` 1…kMaxBackendTtlS, the default
// lifetime of an answer). `allow_cidrs` (when non-empty, only those addresses) and `deny_cidrs`
// (never those) apply in every mode before anything else, to the client address after the
// trusted-proxy rules (T-2); at most kMaxAccessCidrs each, stored canonical.
// `max_sessions_per_login` (A-8: 1…kMaxSessionsPerLogin, or null for no limit) bounds the active
// play sessions of one login on each node (a token's `max_sessions` claim overrides it). Kept in
// canonical form (every default written out) only when present.
#pragma once

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace meshwork::central {

inline constexpr size_t kMaxAccessCidrs = 1024;
inline constexpr int64_t kMaxSessionsPerLogin = 100'000;
inline constexpr int64_t kDefaultBackendTimeoutMs = 2000;
inline constexpr int64_t kMaxBackendTimeoutMs = 30'000;
inline constexpr int64_t kDefaultBackendTtlS = 60;
inline constexpr int64_t kMaxBackendTtlS = 86'400;

// Validates `body`'s "access" member and writes its canonical form into `out`.
absl::Status ResolveAccess(const nlohmann::json& body, nlohmann::json& out);

}  // namespace meshwork::central
