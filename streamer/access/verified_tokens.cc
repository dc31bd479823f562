#include "streamer/access/verified_tokens.h"

#include <openssl/sha.h>

namespace meshwork::streamer {
namespace {

std::string Digest(std::string_view token) {
  std::string out(SHA256_DIGEST_LENGTH, '\0');
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(),
         reinterpret_cast<unsigned char*>(out.data()));
  return out;
}

}  // namespace

std::shared_ptr<const crypto::JwtClaims> VerifiedTokens::Find(std::string_view token,
                                                              int64_t now_unix_s,
                                                              const crypto::JwtKeySet* keys) {
  const std::string digest = Digest(token);
  absl::MutexLock lock(&mu_);
  auto it = by_digest_.find(digest);
  if (it == by_digest_.end()) return nullptr;
  if (it->second->keys.get() != keys ||
      it->second->claims->exp + crypto::kJwtSkewSeconds <= now_unix_s) {
    lru_.erase(it->second);
    by_digest_.erase(it);
    return nullptr;
  }
  lru_.splice(lru_.begin(), lru_, it->second);
  ++hits_;
  return lru_.front().claims;
}

void VerifiedTokens::Insert(std::string_view token, const crypto::JwtClaims& claims,
                            std::shared_ptr<const crypto::JwtKeySet> keys) {
  std::string digest = Digest(token);
  absl::MutexLock lock(&mu_);
  if (auto it = by_digest_.find(digest); it != by_digest_.end()) {
    it->second->claims = std::make_shared<const crypto::JwtClaims>(claims);
    it->second->keys = std::move(keys);
    lru_.splice(lru_.begin(), lru_, it->second);
    return;
  }
  lru_.push_front(
      Entry{digest, std::make_shared<const crypto::JwtClaims>(claims), std::move(keys)});
  by_digest_[std::move(digest)] = lru_.begin();
  while (lru_.size() > capacity_) {
    by_digest_.erase(lru_.back().digest);
    lru_.pop_back();
  }
}

void VerifiedTokens::Clear() {
  absl::MutexLock lock(&mu_);
  lru_.clear();
  by_digest_.clear();
}

size_t VerifiedTokens::size() const {
  absl::MutexLock lock(&mu_);
  return lru_.size();
}

uint64_t VerifiedTokens::hits() const {
  absl::MutexLock lock(&mu_);
  return hits_;
}

}  // namespace meshwork::streamer
