// Client address resolution behind trusted reverse proxies (T-2, T-3).

#ifndef MESHWORK_COMMON_NET_CLIENT_ADDRESS_H_
#define MESHWORK_COMMON_NET_CLIENT_ADDRESS_H_

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include "common/net/cidr.h"
#include "common/net/ip_address.h"

namespace meshwork::net {

// Combined length of X-Forwarded-For values above which they are ignored entirely.
inline constexpr size_t kMaxForwardedForBytes = 8 * 1024;

// The last element of the X-Forwarded-For list, i.e. the address the nearest proxy saw.
//
// `header_values` are the values of every X-Forwarded-For header in arrival order; they form
// one comma-separated list (as if joined with ","). The last element is trimmed of spaces
// and tabs and must be one of:
//   1.2.3.4   2001:db8::1   [2001:db8::1]   [2001:db8::1]:443   1.2.3.4:443
// (addresses as strict as IpAddress::Parse; a port is 1-5 digits, at most 65535, and is
// dropped). Returns nullopt when there is no header, when the last element is empty or
// anything else ("unknown", host names, zone ids, garbage), or when the values together
// exceed kMaxForwardedForBytes. The address is returned as written (an IPv4-mapped
// address stays mapped).
std::optional<IpAddress> LastForwardedFor(std::span<const std::string_view> header_values);

// The address to treat as the client's.
//
// Only when `peer` (unmapped) is inside `trusted` does the last X-Forwarded-For element
// (see LastForwardedFor) replace it; if that element is missing or malformed the peer is
// used. Exactly one hop is honoured: the last element is taken even if it is itself a
// trusted address. An empty `trusted` trusts nobody (T-3). The result is always unmapped
// (an IPv4-mapped IPv6 address comes back as IPv4). X-Real-IP is deliberately not
// consulted.
IpAddress ResolveClientAddress(const IpAddress& peer, const CidrSet& trusted,
                               std::span<const std::string_view> xff_values);

}  // namespace meshwork::net

#endif  // MESHWORK_COMMON_NET_CLIENT_ADDRESS_H_
