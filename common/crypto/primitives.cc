#include "common/crypto/primitives.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <climits>
#include <cstdlib>

#include "common/log/log.h"

namespace meshwork::crypto {
namespace {

// OpenSSL wants non-null pointers even for zero-length inputs.
const unsigned char* Bytes(std::string_view s) {
  static const unsigned char kEmpty = 0;
  return s.empty() ? &kEmpty : reinterpret_cast<const unsigned char*>(s.data());
}

[[noreturn]] void Fail(std::string_view what) {
  char reason[256] = "unknown";
  unsigned long code = ERR_get_error();
  if (code != 0) ERR_error_string_n(code, reason, sizeof(reason));
  log::Error("crypto_failure", {{"operation", what}, {"openssl_error", reason}});
  std::abort();
}

}  // namespace

std::string RandomBytes(size_t n) {
  std::string out(n, '\0');
  size_t done = 0;
  while (done < n) {
    int chunk = static_cast<int>(std::min<size_t>(n - done, INT_MAX));
    if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data() + done), chunk) != 1) {
      Fail("RAND_bytes");
    }
    done += static_cast<size_t>(chunk);
  }
  return out;
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  if (key.size() > INT_MAX ||
      HMAC(EVP_sha256(), Bytes(key), static_cast<int>(key.size()), Bytes(data), data.size(), mac,
           &mac_len) == nullptr ||
      mac_len != 32) {
    Fail("HMAC-SHA256");
  }
  return std::string(reinterpret_cast<const char*>(mac), mac_len);
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  if (a.empty()) return true;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace meshwork::crypto
