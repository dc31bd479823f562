#include "common/net/address_class.h"

#include <cstdint>
#include <span>

namespace meshwork::net {
namespace {

// Whether the top `length` bits of `value` equal those of `prefix`.
constexpr bool InV4(uint32_t value, uint32_t prefix, int length) {
  uint32_t mask = length == 0 ? 0 : ~uint32_t{0} << (32 - length);
  return (value & mask) == prefix;
}

bool IsPrivateV4(uint32_t v) {
  return InV4(v, 0x0a000000, 8) ||   // 10.0.0.0/8
         InV4(v, 0xac100000, 12) ||  // 172.16.0.0/12
         InV4(v, 0xc0a80000, 16) ||  // 192.168.0.0/16
         InV4(v, 0x64400000, 10) ||  // 100.64.0.0/10
         InV4(v, 0x7f000000, 8) ||   // 127.0.0.0/8
         InV4(v, 0xa9fe0000, 16) ||  // 169.254.0.0/16
         v == 0;                     // 0.0.0.0
}

bool IsPrivateV6(std::span<const uint8_t> b) {
  if ((b[0] & 0xfe) == 0xfc) return true;                  // fc00::/7
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return true;  // fe80::/10
  for (int i = 0; i < 15; ++i) {
    if (b[i] != 0) return false;
  }
  return b[15] == 0 || b[15] == 1;  // :: and ::1
}

}  // namespace

bool IsPrivate(const IpAddress& address) {
  IpAddress a = address.Unmapped();
  return a.is_v4() ? IsPrivateV4(a.v4_host_order()) : IsPrivateV6(a.bytes());
}

}  // namespace meshwork::net
