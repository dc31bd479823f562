// A viewer's login (spec 09: a token's `sub`, an auth backend's `login`, a revocation's key), as
// every part of the cluster accepts it: 1…256 bytes without control characters. Header-only, so
// that the fuzz configuration's parsers use the same rule without a library.
#pragma once

#include <string_view>

namespace meshwork::auth {

inline constexpr size_t kMaxLoginBytes = 256;

inline bool IsValidLogin(std::string_view login) {
  if (login.empty() || login.size() > kMaxLoginBytes) return false;
  for (unsigned char c : login) {
    if (c < 0x20 || c == 0x7f) return false;
  }
  return true;
}

}  // namespace meshwork::auth
