// IP addresses (IPv4 and IPv6) as small immutable value types.
//
// Parsing is strict: it accepts only the textual forms a well-behaved peer, operator or
// configuration file produces, so that an address has exactly one meaning wherever it is
// checked (routing, trusted-proxy checks, logs).

#ifndef MESHWORK_COMMON_NET_IP_ADDRESS_H_
#define MESHWORK_COMMON_NET_IP_ADDRESS_H_

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"

namespace meshwork::net {

// An IPv4 or IPv6 address. Copyable, comparable, hashable; 20 bytes.
//
// IPv4 and IPv6 are distinct families: 1.2.3.4 and ::ffff:1.2.3.4 are NOT equal. Callers that
// want to treat an IPv4-mapped IPv6 address as IPv4 call Unmapped() first.
class IpAddress {
 public:
  // The IPv4 address 0.0.0.0.
  IpAddress() = default;

  // Parses an address, strictly:
  //  * IPv4: a dotted quad of exactly four decimal parts 0..255, without leading zeros
  //    ("010" is rejected; "0" is fine).
  //  * IPv6: the RFC 4291 text forms: eight groups of 1-4 hex digits (any case), "::"
  //    standing for one or more zero groups at most once, and an optional dotted-quad IPv4
  //    tail in place of the last two groups ("::ffff:1.2.3.4").
  // Rejected: whitespace anywhere, zone ids ("fe80::1%eth0"), brackets, ports, trailing
  // characters, empty input. On failure returns InvalidArgument with the message
  // `"<text>" is not an IP address` (the text C-escaped, truncated when very long).
  static absl::StatusOr<IpAddress> Parse(std::string_view text);

  // The IPv4 address whose 32-bit value (in host byte order) is `host_order`;
  // V4(0x0a000001) is 10.0.0.1.
  static IpAddress V4(uint32_t host_order);
  // The IPv6 address with these 16 bytes (network order, most significant first).
  static IpAddress V6(const std::array<uint8_t, 16>& bytes);

  bool is_v4() const { return !v6_; }
  bool is_v6() const { return v6_; }

  // True for an IPv6 address in ::ffff:0:0/96 (an IPv4 address mapped into IPv6).
  bool IsV4Mapped() const;
  // The IPv4 address for an IPv4-mapped IPv6 address; otherwise a copy of *this.
  IpAddress Unmapped() const;

  // What one client is taken to hold, for per-client limits: an IPv4 address whole (also
  // when IPv4-mapped), an IPv6 address's /64 (a host usually has one to itself). The first 64
  // bits of the unmapped address, with `*v6` its family.
  uint64_t ClientPrefix(bool* v6) const;
  // The same as a short text, for listeners that count clients by string: "4:<prefix>" or
  // "6:<prefix>" in hex; the whole text for one that does not parse (each such is its own).
  static std::string ClientKey(std::string_view address_text);

  // The dotted quad for IPv4; for IPv6 the RFC 5952 canonical form: lowercase hex, no
  // leading zeros in a group, the longest run of two or more zero groups replaced by "::"
  // (the first such run on ties), and IPv4-mapped addresses written as ::ffff:1.2.3.4.
  // Parse(x.ToString()) == x for every address.
  std::string ToString() const;

  // 32 for IPv4, 128 for IPv6.
  int bit_length() const { return v6_ ? 128 : 32; }
  // Bit `i` of the address, most significant first. Requires 0 <= i < bit_length().
  bool Bit(int i) const { return (bytes_[i >> 3] >> (7 - (i & 7))) & 1; }

  // The address bytes in network order: 4 bytes for IPv4, 16 for IPv6. The span stays
  // valid as long as this object.
  std::span<const uint8_t> bytes() const {
    return std::span<const uint8_t>(bytes_.data(), v6_ ? 16 : 4);
  }
  // The 32-bit value in host byte order. Requires is_v4().
  uint32_t v4_host_order() const;

  // Equality is family + bytes. Ordering puts every IPv4 address before every IPv6 address,
  // then orders numerically.
  friend bool operator==(const IpAddress&, const IpAddress&) = default;
  friend std::strong_ordering operator<=>(const IpAddress&, const IpAddress&) = default;

  template <typename H>
  friend H AbslHashValue(H h, const IpAddress& a) {
    return H::combine(H::combine_contiguous(std::move(h), a.bytes_.data(), a.bytes_.size()), a.v6_);
  }
  // A cheap, well-mixed hash of the address (also used by std::hash<IpAddress>).
  size_t Hash() const;

 private:
  // Declaration order matters for the defaulted comparisons: family first, then bytes.
  bool v6_ = false;
  // IPv4 uses bytes_[0..3]; the remaining bytes are always zero.
  std::array<uint8_t, 16> bytes_{};
};

// Writes ToString() (for test diagnostics and logging).
std::ostream& operator<<(std::ostream& os, const IpAddress& address);

namespace internal {
// `"<text>"` for error messages: C-escaped so it is printable and unambiguous, and cut to
// a bounded length (with "..." inside the quotes) so hostile input cannot bloat logs.
std::string QuoteForMessage(std::string_view text);
}  // namespace internal

}  // namespace meshwork::net

template <>
struct std::hash<meshwork::net::IpAddress> {
  size_t operator()(const meshwork::net::IpAddress& a) const noexcept { return a.Hash(); }
};

#endif  // MESHWORK_COMMON_NET_IP_ADDRESS_H_
