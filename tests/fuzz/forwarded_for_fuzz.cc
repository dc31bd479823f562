// Fuzzes X-Forwarded-For handling: the input is split on '\n' into header values.
//
// Properties (a violation traps):
//  * a returned address prints to text that parses back to the same value;
//  * ResolveClientAddress returns an unmapped address; for an untrusted peer it is the
//    peer, for a trusted one it is the unmapped LastForwardedFor result or the peer.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/net/cidr.h"
#include "common/net/client_address.h"
#include "common/net/ip_address.h"

namespace {

using meshwork::net::CidrSet;
using meshwork::net::IpAddress;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

void CheckRoundTrip(const IpAddress& a) {
  absl::StatusOr<IpAddress> again = IpAddress::Parse(a.ToString());
  Check(again.ok() && *again == a);
}

const CidrSet& TrustedSet() {
  static const CidrSet* set = [] {
    absl::StatusOr<CidrSet> parsed =
        CidrSet::Parse({"10.0.0.0/8", "192.168.0.0/16", "fd00::/8", "::1/128"}, "trusted");
    Check(parsed.ok());
    return new CidrSet(*parsed);
  }();
  return *set;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> values;
  size_t start = 0;
  while (true) {
    size_t newline = input.find('\n', start);
    if (newline == std::string_view::npos) {
      values.push_back(input.substr(start));
      break;
    }
    values.push_back(input.substr(start, newline - start));
    start = newline + 1;
  }

  std::optional<IpAddress> last = meshwork::net::LastForwardedFor(values);
  if (last) CheckRoundTrip(*last);

  const CidrSet& trusted = TrustedSet();
  const IpAddress peers[] = {IpAddress::V4(0x0a000001),                // 10.0.0.1, trusted
                             IpAddress::V4(0xcb007107),                // 203.0.113.7, untrusted
                             *IpAddress::Parse("::ffff:192.168.1.1"),  // mapped, trusted
                             *IpAddress::Parse("2001:db8::1")};        // untrusted
  for (const IpAddress& peer : peers) {
    IpAddress client = meshwork::net::ResolveClientAddress(peer, trusted, values);
    CheckRoundTrip(client);
    Check(!client.IsV4Mapped());
    IpAddress expected = peer.Unmapped();
    if (trusted.Contains(expected) && last) expected = last->Unmapped();
    Check(client == expected);
  }
  return 0;
}
