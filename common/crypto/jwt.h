// A-3, A-4 (spec 09): viewer tokens — JSON Web Tokens (RFC 7519) in compact form, signed with
// HS256 (a shared secret) or ES256 (an ECDSA P-256 public key), keys chosen by `kid`.
//
// Our own parser (the format is three base64url parts; a few dozen lines), OpenSSL for the
// signatures, so that what is accepted is exactly what is written here: the header's `alg`
// must be HS256 or ES256 *and* the algorithm of the key its `kid` names (no `none`, no
// algorithm confusion: an ES256 key's PEM is never taken as an HMAC secret), `typ` when
// present must be "JWT", `crit` is refused, the token is at most kMaxJwtBytes, the JSON parts
// nest at most 8 deep. Claims read: `exp` (required), `nbf`, `sub` (the login), `streams`
// (names or "prefix/*"), `ip` (a CIDR, checked by the caller), `max_sessions`, `dvr`; others
// are ignored. Times are checked with a skew (30 s by default).
//
// Refusals are PermissionDenied whose message is a reason code: "malformed", "algorithm",
// "unknown_kid", "signature", "no_exp", "expired", "not_yet_valid", "claims" (a claim of
// the wrong type, or a `sub` that is not a login: 1…256 bytes without control characters).
// An `exp` past kLatestExp is read as kLatestExp. Secrets never appear in messages.
//
// Thread-safe: a JwtKeySet is immutable once built (held by shared_ptr and replaced whole).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace meshwork::crypto {

inline constexpr size_t kMaxJwtBytes = 8192;
inline constexpr int64_t kJwtSkewSeconds = 30;
// The latest `exp` kept (9999-12-31T23:59:59Z): a later one is read as this.
inline constexpr int64_t kLatestExp = 253'402'300'799;

enum class JwtAlg { kHs256, kEs256 };

class JwtKeySet {
 public:
  JwtKeySet();
  ~JwtKeySet();
  JwtKeySet(JwtKeySet&&) noexcept;
  JwtKeySet& operator=(JwtKeySet&&) noexcept;

  // InvalidArgument (naming the problem, never the secret) for an empty kid or secret.
  absl::Status AddHs256(const std::string& kid, std::string secret);
  // The PEM must hold an EC public key on P-256 (prime256v1); InvalidArgument otherwise.
  absl::Status AddEs256(const std::string& kid, std::string_view public_key_pem);

  bool empty() const { return keys_.empty(); }
  size_t size() const { return keys_.size(); }

  struct Key;  // opaque outside jwt.cc

 private:
  friend struct JwtVerifier;
  std::map<std::string, std::unique_ptr<Key>> keys_;
};

struct JwtClaims {
  std::string kid;
  int64_t exp = 0;
  std::optional<int64_t> nbf;
  std::string sub;                   // the login; empty when absent
  std::vector<std::string> streams;  // empty: the claim was absent
  bool streams_claimed = false;
  std::optional<std::string> ip;  // a CIDR, unchecked here
  std::optional<int64_t> max_sessions;
  bool dvr = false;
};

// Verifies `token` against `keys` at `now_unix_s`.
absl::StatusOr<JwtClaims> VerifyJwt(std::string_view token, const JwtKeySet& keys,
                                    int64_t now_unix_s, int64_t skew_s = kJwtSkewSeconds);

// Whether the claims allow `stream`: no `streams` claim allows every stream; else a name
// equal to it, or "prefix/*" with `stream` under prefix/.
bool JwtAllowsStream(const JwtClaims& claims, std::string_view stream);

// For tests and tools: a signed HS256 token of `payload_json` under `kid`/`secret`.
std::string SignJwtHs256(std::string_view payload_json, std::string_view kid,
                         std::string_view secret);

}  // namespace meshwork::crypto
