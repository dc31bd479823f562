// Thin wrappers over OpenSSL's libcrypto: randomness, HMAC-SHA256, constant-time comparison.

#ifndef MESHWORK_COMMON_CRYPTO_PRIMITIVES_H_
#define MESHWORK_COMMON_CRYPTO_PRIMITIVES_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace meshwork::crypto {

// `n` bytes from OpenSSL's CSPRNG (RAND_bytes). If the generator fails, logs the OpenSSL
// error and aborts: nothing may continue with predictable key material.
std::string RandomBytes(size_t n);

// HMAC-SHA256 of `data` under `key` (any length, including empty): 32 raw bytes.
std::string HmacSha256(std::string_view key, std::string_view data);

// Equality whose running time depends only on the lengths, never on where the contents
// differ (CRYPTO_memcmp). Strings of different lengths are unequal.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace meshwork::crypto

#endif  // MESHWORK_COMMON_CRYPTO_PRIMITIVES_H_
