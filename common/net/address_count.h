// Open connections per client: an exact count per IPv4 address or IPv6 /64
// (`IpAddress::ClientPrefix`), so that one client cannot hold every connection a listener
// takes. A connection holds a `Ticket` while it is open; the ticket's destruction gives its
// place back.
// Thread-safe: Acquire and a ticket's release take one short mutex (per connection opened
// and closed, never per request). The counter must outlive every ticket it gave.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "common/net/ip_address.h"

namespace meshwork::net {

class AddressCount {
 public:
  // One connection's place; empty (counts nothing) when default-made, moved from, or given
  // by a counter without a limit.
  class Ticket {
   public:
    Ticket() = default;
    Ticket(Ticket&& other) noexcept { *this = std::move(other); }
    Ticket& operator=(Ticket&& other) noexcept;
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;
    ~Ticket() { Release(); }

   private:
    friend class AddressCount;
    void Release();
    AddressCount* owner_ = nullptr;
    uint64_t prefix_ = 0;
    bool v6_ = false;
  };

  // `limit` connections per client; 0: no limit (every Acquire succeeds, nothing counted).
  explicit AddressCount(uint32_t limit);

  // True and `*ticket` set when `client` holds fewer than `limit` places; false (and
  // `*ticket` left as it was) when it holds them all.
  bool Acquire(const IpAddress& client, Ticket* ticket);

  // Places `client` holds now, and clients holding any (for tests and metrics).
  uint32_t Count(const IpAddress& client) const;
  size_t Clients() const;
  uint32_t limit() const { return limit_; }

 private:
  struct Key {
    uint64_t prefix;
    bool v6;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    uint64_t key;  // random per counter
    size_t operator()(const Key& k) const;
  };
  void Release(const Key& key);

  const uint32_t limit_;
  mutable std::mutex mu_;
  std::unordered_map<Key, uint32_t, KeyHash> counts_;  // guarded by mu_; no zero entries
};

}  // namespace meshwork::net
