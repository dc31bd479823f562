// A keyed 64-bit hash for tables indexed by what a client chooses (its address): with the key
// random per table, a client cannot aim at another's slot or pile its entries into one bucket.
#pragma once

#include <cstdint>
#include <random>

namespace meshwork::net {

// A random 64-bit key (std::random_device reads the kernel's CSPRNG on Linux).
inline uint64_t RandomHashKey() {
  std::random_device device;
  return (uint64_t{device()} << 32) ^ device();
}

// SplitMix64's finalizer (every input bit moves every output bit), applied twice around the key.
inline uint64_t KeyedMix(uint64_t x, uint64_t key) {
  auto mix = [](uint64_t v) {
    v ^= v >> 30;
    v *= 0xbf58476d1ce4e5b9ull;
    v ^= v >> 27;
    v *= 0x94d049bb133111ebull;
    return v ^ (v >> 31);
  };
  return mix(mix(x ^ key) ^ key);
}

}  // namespace meshwork::net
