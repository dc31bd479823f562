#include "streamer/access/session_ids.h"

#include <atomic>

#include "common/crypto/base64url.h"
#include "common/crypto/primitives.h"

namespace meshwork::streamer {
namespace {

// Each table gets its own serial: a memo filled for one table (its key) never answers for
// another, even one built later at the same address.
std::atomic<uint64_t> next_serial{1};

struct Memo {
  uint64_t table = 0;
  std::string token;
  std::string id;
  std::shared_ptr<const std::string> found;  // Find's answer for `id`
};

}  // namespace

SessionIds::SessionIds(size_t capacity)
    : key_(crypto::RandomBytes(32)),
      capacity_(capacity == 0 ? 1 : capacity),
      serial_(next_serial.fetch_add(1, std::memory_order_relaxed)) {}

std::string SessionIds::IdOf(std::string_view token) const {
  std::string mac = crypto::HmacSha256(key_, token);
  return crypto::Base64UrlEncode(std::string_view(mac).substr(0, kIdChars * 3 / 4));
}

void SessionIds::Sweep(int64_t now_unix_s) {
  absl::erase_if(by_id_,
                 [now_unix_s](const auto& kv) { return kv.second.exp_unix_s <= now_unix_s; });
  next_sweep_s_ = now_unix_s + 10;
}

std::string SessionIds::Issue(std::string_view token, int64_t exp_unix_s, int64_t now_unix_s) {
  thread_local Memo memo;
  if (memo.table == serial_ && memo.token == token && !memo.id.empty()) return memo.id;
  std::string id = IdOf(token);
  {
    absl::MutexLock lock(&mu_);
    auto it = by_id_.find(id);
    if (it != by_id_.end()) {
      it->second.exp_unix_s = std::max(it->second.exp_unix_s, exp_unix_s);
    } else {
      if (by_id_.size() >= capacity_ && now_unix_s >= next_sweep_s_) Sweep(now_unix_s);
      if (by_id_.size() >= capacity_) return "";
      by_id_.emplace(id, Entry{std::make_shared<const std::string>(token), exp_unix_s});
    }
  }
  if (token.size() <= 4096) memo = Memo{serial_, std::string(token), id, nullptr};
  return id;
}

const std::string* SessionIds::Find(std::string_view id) {
  if (id.size() != kIdChars) return nullptr;
  thread_local Memo memo;
  if (memo.table == serial_ && memo.found && memo.id == id) return memo.found.get();
  std::shared_ptr<const std::string> found;
  {
    absl::MutexLock lock(&mu_);
    auto it = by_id_.find(std::string(id));
    if (it == by_id_.end()) return nullptr;
    found = it->second.token;
  }
  memo = Memo{serial_, "", std::string(id), std::move(found)};
  return memo.found.get();
}

size_t SessionIds::size() const {
  absl::MutexLock lock(&mu_);
  return by_id_.size();
}

}  // namespace meshwork::streamer
