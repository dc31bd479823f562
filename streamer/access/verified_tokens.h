// A-5 (spec 09): a node verifies a viewer token once. A verified token's claims are kept
// until the token expires (its `exp` plus the skew), so a player's playlist reloads and
// segment requests cost a lookup, not a signature check. Bounded: at most `capacity` tokens,
// the least recently used one dropped beyond it. Tokens are kept by their SHA-256 digest,
// never in clear. A key set replaced (rotation, a retired kid) clears the cache: a token
// verified under a retired key must be checked again.
//
// Thread-safe (one mutex; lookups are short). Time comes from the caller (Unix seconds).
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "absl/synchronization/mutex.h"
#include "common/crypto/jwt.h"

namespace meshwork::streamer {

class VerifiedTokens {
 public:
  explicit VerifiedTokens(size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  // The claims of `token` if it was verified under `keys` before and has not expired at
  // `now_unix_s` (shared, not copied: a lookup allocates nothing); null otherwise. An entry
  // from another key set is never answered, even one inserted after a Clear() by a check
  // that began before the rotation.
  std::shared_ptr<const crypto::JwtClaims> Find(std::string_view token, int64_t now_unix_s,
                                                const crypto::JwtKeySet* keys);
  // Keeps the claims of a token VerifyJwt accepted under `keys` (held, so that its address
  // is not reused while an entry names it).
  void Insert(std::string_view token, const crypto::JwtClaims& claims,
              std::shared_ptr<const crypto::JwtKeySet> keys);
  // Forgets every token (the key set changed).
  void Clear();

  size_t size() const;
  uint64_t hits() const;

 private:
  struct Entry {
    std::string digest;
    std::shared_ptr<const crypto::JwtClaims> claims;
    std::shared_ptr<const crypto::JwtKeySet> keys;  // verified under these
  };
  const size_t capacity_;
  mutable absl::Mutex mu_;
  std::list<Entry> lru_ ABSL_GUARDED_BY(mu_);  // most recent first
  std::unordered_map<std::string, std::list<Entry>::iterator> by_digest_ ABSL_GUARDED_BY(mu_);
  uint64_t hits_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace meshwork::streamer
