#include "common/net/address_rate.h"

#include "common/net/keyed_hash.h"

namespace meshwork::net {

AddressRate::AddressRate(uint32_t per_second)
    : per_second_(per_second), key_(RandomHashKey()), slots_(new std::atomic<uint64_t>[kSlots]) {
  for (size_t i = 0; i < kSlots; ++i) slots_[i].store(0, std::memory_order_relaxed);
}

size_t AddressRate::SlotOf(const IpAddress& client) const {
  bool v6 = false;
  const uint64_t high = client.ClientPrefix(&v6);
  return KeyedMix(high ^ (v6 ? 0x6 : 0x4), key_) % kSlots;
}

bool AddressRate::Admit(const IpAddress& client, int64_t now_s) {
  if (per_second_ == 0) return true;
  std::atomic<uint64_t>& slot = slots_[SlotOf(client)];
  const uint64_t second = static_cast<uint32_t>(now_s);
  uint64_t seen = slot.load(std::memory_order_relaxed);
  for (;;) {
    uint64_t next;
    if ((seen >> 32) == second) {
      if ((seen & 0xffffffffu) >= per_second_) return false;
      next = seen + 1;
    } else {
      next = (second << 32) | 1;  // a new second: this event is its first
    }
    if (slot.compare_exchange_weak(seen, next, std::memory_order_relaxed)) return true;
  }
}

}  // namespace meshwork::net
