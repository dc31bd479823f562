// Events per second per client address (R-3: one client must not spend an allowance meant
// for all — central's steering answers). A client is its IPv4 address (an IPv4-mapped IPv6
// address counts as the IPv4 one) or its IPv6 /64, a subscriber's usual allocation, so that
// one host cannot multiply its allowance by changing the low bits. Clients are hashed into a
// fixed table of kSlots slots: memory does not grow with the number of clients, and clients
// sharing a slot share its allowance (none of them ever gets more than `per_second`). The
// slot is a hash keyed by a random value per process, so that a client choosing addresses
// cannot aim at another client's slot.
//
// Thread-safe without a lock: each slot is one atomic word holding the second and the count.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "common/net/ip_address.h"

namespace meshwork::net {

class AddressRate {
 public:
  static constexpr size_t kSlots = 4096;

  // `per_second` 0: no limit (Admit always true).
  explicit AddressRate(uint32_t per_second);

  // Counts one event of `client` in second `now_s` (any monotonic count of seconds); false,
  // not counted, when the client's slot has had `per_second` events in that second.
  bool Admit(const IpAddress& client, int64_t now_s);

  // The slot a client counts in (for tests).
  size_t SlotOf(const IpAddress& client) const;

 private:
  const uint32_t per_second_;
  const uint64_t key_;                              // random per object: the hash's key
  std::unique_ptr<std::atomic<uint64_t>[]> slots_;  // (second mod 2^32) << 32 | count
};

}  // namespace meshwork::net
