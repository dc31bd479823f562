// Fuzzes IpAddress::Parse and Cidr::Parse with the whole input.
//
// Properties (a violation traps):
//  * a parsed address or CIDR prints to text that parses back to the same value, and that
//    canonical text is a fixed point of ToString;
//  * a CIDR contains its own network (and, for IPv4, the mapped form of it), and a
//    PrefixTable holding it finds it for its network (unless that network is IPv4-mapped);
//  * IsV4Mapped/Unmapped agree, and IPv4 text never parses as a CIDR without "/".

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/net/address_class.h"
#include "common/net/cidr.h"
#include "common/net/ip_address.h"

namespace {

using meshwork::net::Cidr;
using meshwork::net::IpAddress;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

void CheckAddress(const IpAddress& a) {
  std::string text = a.ToString();
  absl::StatusOr<IpAddress> again = IpAddress::Parse(text);
  Check(again.ok() && *again == a && again->ToString() == text);
  Check(a.bytes().size() == (a.is_v4() ? 4u : 16u));
  IpAddress unmapped = a.Unmapped();
  Check(unmapped.is_v4() == (a.is_v4() || a.IsV4Mapped()));
  Check(a.IsV4Mapped() || unmapped == a);
  (void)meshwork::net::IsPrivate(a);
  // Every address is a /bit_length CIDR containing itself.
  absl::StatusOr<Cidr> host = Cidr::Create(a, a.bit_length());
  Check(host.ok() && host->Contains(a));
  Check(!Cidr::Parse(text).ok());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);

  absl::StatusOr<IpAddress> address = IpAddress::Parse(input);
  if (address.ok()) CheckAddress(*address);

  absl::StatusOr<Cidr> cidr = Cidr::Parse(input);
  if (cidr.ok()) {
    std::string text = cidr->ToString();
    absl::StatusOr<Cidr> again = Cidr::Parse(text);
    Check(again.ok() && *again == *cidr && again->ToString() == text);
    Check(cidr->Contains(cidr->network()));
    if (cidr->is_v4()) {
      std::array<uint8_t, 16> mapped{};
      mapped[10] = mapped[11] = 0xff;
      for (int i = 0; i < 4; ++i) mapped[12 + i] = cidr->network().bytes()[i];
      Check(cidr->Contains(IpAddress::V6(mapped)));
    }
    meshwork::net::PrefixTable<int> table;
    Check(table.Insert(*cidr, 1));
    Check(!table.Insert(*again, 2));
    const int* found = table.Lookup(cidr->network());
    // Lookups treat a mapped address as IPv4, so an IPv6 prefix whose network is itself an
    // IPv4-mapped address is unreachable by design.
    if (cidr->network().IsV4Mapped()) {
      Check(found == nullptr);
    } else {
      Check(found != nullptr && *found == 1);
    }
    CheckAddress(cidr->network());
  } else {
    Check(!cidr.status().message().empty());
  }
  return 0;
}
