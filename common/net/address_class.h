// Classification of addresses as private (not globally routable / not a real public client)
// or public (O-11). Used e.g. to decide whether a client address is worth geo-locating and
// whether a configured endpoint is internal.

#ifndef MESHWORK_COMMON_NET_ADDRESS_CLASS_H_
#define MESHWORK_COMMON_NET_ADDRESS_CLASS_H_

#include "common/net/ip_address.h"

namespace meshwork::net {

// True when `address` is in one of these ranges, false otherwise ("public"):
//   IPv4: 10/8, 172.16/12, 192.168/16 (RFC 1918), 100.64/10 (CGNAT, RFC 6598),
//         127/8 (loopback), 169.254/16 (link-local), 0.0.0.0 (unspecified);
//   IPv6: ::1 (loopback), fe80::/10 (link-local), fc00::/7 (unique local, RFC 4193),
//         :: (unspecified).
// An IPv4-mapped IPv6 address is classified as its IPv4 address.
bool IsPrivate(const IpAddress& address);

}  // namespace meshwork::net

#endif  // MESHWORK_COMMON_NET_ADDRESS_CLASS_H_
