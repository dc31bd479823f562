#include "common/net/address_rate.h"

#include <algorithm>
#include <random>

namespace meshwork::net {

namespace {

// A random 64-bit value (std::random_device reads the kernel's CSPRNG on Linux).
uint64_t RandomKey() {
  std::random_device device;
  return (uint64_t{device()} << 32) ^ device();
}

// SplitMix64's finalizer: every input bit moves every output bit.
uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

AddressRate::AddressRate(uint32_t per_second)
    : per_second_(per_second), key_(RandomKey()), slots_(new std::atomic<uint64_t>[kSlots]) {
  for (size_t i = 0; i < kSlots; ++i) slots_[i].store(0, std::memory_order_relaxed);
}

size_t AddressRate::SlotOf(const IpAddress& client) const {
  const IpAddress key = client.Unmapped();
  auto bytes = key.bytes();
  // An IPv4 address whole; an IPv6 one by its first 8 bytes (its /64).
  uint64_t high = 0;
  for (size_t i = 0; i < std::min<size_t>(bytes.size(), 8); ++i) high = (high << 8) | bytes[i];
  return Mix(Mix(high ^ key_) ^ (key.is_v6() ? 0x6 : 0x4) ^ key_) % kSlots;
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
