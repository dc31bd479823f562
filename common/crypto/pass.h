// Viewing passes (O-7): a node that redirects a viewer to a backup node hands it a pass,
// signed with the cluster's viewing key, that any member holding the key can check offline.
//
// Token text: base64url(payload) "." base64url(HMAC-SHA256(key secret, payload)), both parts
// unpadded. The payload is binary, big-endian, and consumed exactly:
//
//   "MWP1"                      4 bytes: format name and version 1
//   key_id, stream, group, issuer
//                               each a uint32 byte length followed by that many bytes (any
//                               bytes, including '.', '\0' and non-UTF-8)
//   issued_unix_s, expires_unix_s
//                               each an int64, two's complement, 8 bytes
//
// Every field is length-delimited, so distinct claims always give distinct payloads, and a
// payload with trailing or missing bytes is malformed. A token longer than kMaxPassTokenBytes
// is rejected before any decoding.

#ifndef MESHWORK_COMMON_CRYPTO_PASS_H_
#define MESHWORK_COMMON_CRYPTO_PASS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/crypto/base64url.h"
#include "common/crypto/primitives.h"

namespace meshwork::crypto {

// The cluster's viewing key (O-7). The secret must never reach a log, metric or API answer.
struct ViewingKey {
  std::string id;      // short id, e.g. "k3"; travels in every pass
  std::string secret;  // 32 random bytes (RandomBytes(32))
};

struct PassClaims {
  std::string key_id;  // id of the ViewingKey that signed the pass
  std::string stream;
  std::string group;
  std::string issuer;  // id of the issuing node
  int64_t issued_unix_s = 0;
  int64_t expires_unix_s = 0;

  bool operator==(const PassClaims&) const = default;
};

inline constexpr size_t kMaxPassTokenBytes = 2048;
inline constexpr int64_t kDefaultPassSkewSeconds = 240;

// The token for `claims` under `key`; `claims.key_id` is written as given (normally key.id).
std::string SignPass(const PassClaims& claims, const ViewingKey& key);

// Checks `token` as a pass for `stream` at `now_unix_s` against the keys this node holds (the
// current key and, during a rotation overlap, the previous one). Returns the claims, or
// PermissionDenied with one of these messages, checked in this order:
//   "malformed pass"             too long, not two base64url parts, bad payload encoding
//   "unknown key id <id>"        no held key has the pass's key id (the id is escaped and
//                                cut to 32 bytes)
//   "bad signature"              no held key with that id produced the signature (a key
//                                with an empty secret never verifies)
//   "pass is for another stream" the claims name a different stream (bytewise)
//   "pass expired"               now > expires_unix_s + skew
//   "pass not yet valid"         issued_unix_s > now + skew
// A negative `skew_s` counts as 0. No message ever contains key material.
absl::StatusOr<PassClaims> VerifyPass(std::string_view token, std::string_view stream,
                                      const std::vector<ViewingKey>& keys, int64_t now_unix_s,
                                      int64_t skew_s = kDefaultPassSkewSeconds);

}  // namespace meshwork::crypto

#endif  // MESHWORK_COMMON_CRYPTO_PASS_H_
