// A-3 (spec 09): the short session id a node writes into the URIs of a token-protected
// stream's media playlists, MPDs and archive answers in place of the viewer's whole token. A
// JWT is ~200 characters; put into each of a playlist's dozen URIs it makes a 1 KiB
// playlist three times larger (P-17), so the node writes `sid=<16 characters>` instead and
// keeps here which token each id stands for.
//
// An id is the node's HMAC-SHA256 of the token under a key drawn at start, cut to 96 bits
// and base64url-encoded: the same token always gets the same id on one node (a player's
// concurrent requests agree), it cannot be guessed or forged, and it tells nothing about the
// token. A request that presents an id is checked exactly as if it presented the token
// (signature cache, expiry, stream, address, revocation, retired keys), so the id grants
// nothing the token does not. Ids are this node's only: URIs that lead to another node
// (O-6 backups, O-3 redirects, central) carry the token itself, and a restarted node knows
// no ids (403 `session_unknown`; the player's master playlist still holds the token).
//
// Bounded: at most `capacity` ids; an id is kept until its token expires. When the table is
// full of unexpired ids, Issue returns empty and the node carries the token itself (nothing
// is evicted, so no admitted viewer's id stops working).
//
// Thread-safe: one mutex around the table; Issue and Find on a thread that repeats its last
// token or id answer from a thread-local memo without the lock (the id↔token relation never
// changes for the node's key, so the memo cannot go stale).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace meshwork::streamer {

class SessionIds {
 public:
  static constexpr size_t kIdChars = 16;  // 96 bits

  explicit SessionIds(size_t capacity);

  // The id standing for `token` (verified by the caller, valid until `exp_unix_s`), kept
  // until then; empty when the table is full.
  std::string Issue(std::string_view token, int64_t exp_unix_s, int64_t now_unix_s);
  // The token `id` stands for, or null (never issued here, expired and swept, or not an id).
  // Held by the calling thread's memo until its next Find (no shared count is touched on a
  // repeated id).
  const std::string* Find(std::string_view id);

  size_t size() const;

 private:
  struct Entry {
    std::shared_ptr<const std::string> token;
    int64_t exp_unix_s = 0;
  };
  std::string IdOf(std::string_view token) const;
  // Drops the expired ids.
  void Sweep(int64_t now_unix_s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string key_;
  const size_t capacity_;
  const uint64_t serial_;  // tells this table's thread-local memos from another's
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> by_id_ ABSL_GUARDED_BY(mu_);
  int64_t next_sweep_s_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace meshwork::streamer
