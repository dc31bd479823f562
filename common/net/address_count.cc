#include "common/net/address_count.h"

#include <cstdlib>

#include "common/net/keyed_hash.h"

namespace meshwork::net {

AddressCount::AddressCount(uint32_t limit) : limit_(limit), counts_(16, KeyHash{RandomHashKey()}) {}

AddressCount::Ticket& AddressCount::Ticket::operator=(Ticket&& other) noexcept {
  if (this != &other) {
    Release();
    owner_ = other.owner_;
    prefix_ = other.prefix_;
    v6_ = other.v6_;
    other.owner_ = nullptr;
  }
  return *this;
}

void AddressCount::Ticket::Release() {
  if (owner_ == nullptr) return;
  owner_->Release(Key{prefix_, v6_});
  owner_ = nullptr;
}

size_t AddressCount::KeyHash::operator()(const Key& k) const {
  // Keyed: clients choose their addresses, and must not be able to pile into one bucket. A
  // collision costs a longer bucket, never a shared count (the key compares exactly).
  return static_cast<size_t>(KeyedMix(k.prefix ^ (k.v6 ? 0x6 : 0x4), key));
}

bool AddressCount::Acquire(const IpAddress& client, Ticket* ticket) {
  if (limit_ == 0) {
    *ticket = Ticket();
    return true;
  }
  Key key{};
  key.prefix = client.ClientPrefix(&key.v6);
  {
    std::lock_guard<std::mutex> lock(mu_);
    uint32_t& n = counts_[key];
    if (n >= limit_) return false;
    ++n;
  }
  Ticket fresh;
  fresh.owner_ = this;
  fresh.prefix_ = key.prefix;
  fresh.v6_ = key.v6;
  *ticket = std::move(fresh);
  return true;
}

void AddressCount::Release(const Key& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = counts_.find(key);
  // A ticket is only made by a counted Acquire: a missing entry is a bookkeeping bug.
  if (it == counts_.end() || it->second == 0) std::abort();
  if (--it->second == 0) counts_.erase(it);
}

uint32_t AddressCount::Count(const IpAddress& client) const {
  Key key{};
  key.prefix = client.ClientPrefix(&key.v6);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = counts_.find(key);
  return it == counts_.end() ? 0 : it->second;
}

size_t AddressCount::Clients() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_.size();
}

}  // namespace meshwork::net
