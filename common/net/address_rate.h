// Events per second per client address (R-3: one client must not spend an allowance meant
// for all — central's steering answers). A client is its IPv4 address (an IPv4-mapped IPv6
// address counts as the IPv4 one) or its IPv6 /64, a subscriber's usual allocation, so that
// one host cannot multiply its allowance by changing the low bits. Clients are hashed into a
// fixed table of kSlots slots: memory does not grow with the number of clients, and clients
// sharing a slot share its allowance (none of them ever gets more than `per_second`).
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

  explicit AddressRate(uint32_t per_second);

  // Counts one event of `client` in second `now_s` (any monotonic count of seconds); false,
  // not counted, when the client's slot has had `per_second` events in that second.
  bool Admit(const IpAddress& client, int64_t now_s);

  // The slot a client counts in (for tests).
  static size_t SlotOf(const IpAddress& client);

 private:
  const uint32_t per_second_;
  std::unique_ptr<std::atomic<uint64_t>[]> slots_;  // (second mod 2^32) << 32 | count
};

}  // namespace meshwork::net
