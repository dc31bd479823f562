// CIDR prefixes, sets of them (trusted-proxy lists) and a longest-prefix-match table
// (routing zones).
//
// Matching rule shared by everything here (Z-5): an IPv4 prefix matches IPv4 addresses and
// IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) of covered IPv4 addresses.

#ifndef MESHWORK_COMMON_NET_CIDR_H_
#define MESHWORK_COMMON_NET_CIDR_H_

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/net/ip_address.h"

namespace meshwork::net {

// An IP prefix: a network address whose host bits are all zero, and a prefix length.
class Cidr {
 public:
  // 0.0.0.0/0.
  Cidr() = default;

  // Parses "ADDR/LEN". ADDR is anything IpAddress::Parse accepts; LEN is decimal without
  // sign or leading zeros, 0..32 for IPv4 and 0..128 for IPv6; the host bits of ADDR must
  // be zero. Failures are InvalidArgument with one of these messages (the REST API forwards
  // them prefixed by the field name; the text is quoted as in IpAddress::Parse):
  //   "10.10.1.1/16" has host bits set
  //   "10.0.0.0" has no prefix length        (a valid address without "/LEN")
  //   "10.0.0.0/33" has an invalid prefix length   (a valid address, bad LEN)
  //   "foo/8" is not a valid CIDR             (anything else)
  static absl::StatusOr<Cidr> Parse(std::string_view text);

  // The prefix `network/prefix_length`, or InvalidArgument if the length is out of range for
  // the family or host bits are set.
  static absl::StatusOr<Cidr> Create(const IpAddress& network, int prefix_length);

  const IpAddress& network() const { return network_; }
  int prefix_length() const { return prefix_length_; }
  bool is_v4() const { return network_.is_v4(); }

  // "network/len" with the network in canonical form; Parse(c.ToString()) == c.
  std::string ToString() const;

  // Whether `address` is inside the prefix. An IPv4 prefix also contains the IPv4-mapped
  // IPv6 form of each covered IPv4 address (Z-5), so 0.0.0.0/0 contains every IPv4 and
  // every IPv4-mapped address. An IPv6 prefix compares the raw IPv6 address and never
  // contains an IPv4 address (::ffff:0:0/96 contains ::ffff:1.2.3.4 but not 1.2.3.4).
  bool Contains(const IpAddress& address) const;

  // Ordered by network (IPv4 first), then prefix length.
  friend bool operator==(const Cidr&, const Cidr&) = default;
  friend std::strong_ordering operator<=>(const Cidr&, const Cidr&) = default;

  template <typename H>
  friend H AbslHashValue(H h, const Cidr& c) {
    return H::combine(std::move(h), c.network_, c.prefix_length_);
  }
  size_t Hash() const {
    return network_.Hash() ^ (static_cast<size_t>(prefix_length_) * 0x9e3779b97f4a7c15ULL);
  }

 private:
  Cidr(const IpAddress& network, int prefix_length)
      : network_(network), prefix_length_(prefix_length) {}

  IpAddress network_;
  int prefix_length_ = 0;
};

std::ostream& operator<<(std::ostream& os, const Cidr& cidr);

// An immutable list of prefixes, e.g. the trusted-proxy list. Membership is a linear scan:
// meant for short, operator-written lists (use PrefixTable for large ones).
class CidrSet {
 public:
  CidrSet() = default;
  explicit CidrSet(std::vector<Cidr> cidrs) : cidrs_(std::move(cidrs)) {}

  // Parses every element with Cidr::Parse. On the first failure returns InvalidArgument
  // whose message is `FIELD[i]: ` followed by the element's error, e.g.
  //   trusted_proxies[1]: "10.0.0.1/8" has host bits set
  // and, if `failed_index` is non-null, stores i there. An empty list gives an empty set.
  static absl::StatusOr<CidrSet> Parse(const std::vector<std::string>& texts,
                                       std::string_view field_name, size_t* failed_index = nullptr);

  // Whether any prefix contains `address` (with Cidr::Contains semantics). False when empty.
  bool Contains(const IpAddress& address) const;

  const std::vector<Cidr>& cidrs() const { return cidrs_; }
  bool empty() const { return cidrs_.empty(); }
  size_t size() const { return cidrs_.size(); }

 private:
  std::vector<Cidr> cidrs_;
};

namespace internal {

// A path-compressed binary trie over 128-bit keys for one address family (IPv4 keys are
// left-aligned in the high word). Stores, per prefix, a caller-chosen uint32_t slot.
// Lookup visits at most one node per branching point, so depth stays around log2(n).
class PrefixTrie {
 public:
  static constexpr uint32_t kNone = 0xffffffffu;

  struct Key {
    uint64_t hi = 0;
    uint64_t lo = 0;
  };
  // `address` must be of the trie's family (IPv4 keys in the top 32 bits of hi).
  static Key KeyOf(const IpAddress& address);

  // Stores `slot` for the prefix of `length` bits of `key` (bits past `length` must be 0).
  // Returns the slot already stored for that exact prefix, or kNone if it was added.
  uint32_t Insert(Key key, int length, uint32_t slot);
  // The slot of the longest stored prefix covering `key`, or kNone.
  uint32_t Lookup(Key key) const;

 private:
  struct Node {
    Key key;
    uint32_t child[2] = {kNone, kNone};
    uint32_t slot = kNone;
    int length = 0;
  };
  uint32_t NewNode(Key key, int length, uint32_t slot);

  std::vector<Node> nodes_;
  uint32_t root_ = kNone;
};

}  // namespace internal

// Longest-prefix match over IPv4 and IPv6 prefixes together, e.g. routing zones layered
// from a default route down to single hosts. IPv4-mapped IPv6 addresses are looked up as
// IPv4 (Z-5), and only against the IPv4 prefixes: an IPv6 prefix inside ::ffff:0:0/96 is
// never matched, and ::/0 does not catch mapped addresses. Insert is O(prefix length);
// Lookup walks a path-compressed trie (a few hundred ns at 100 000 prefixes). Concurrent
// Lookups on an unchanging table are safe; Insert needs exclusive access.
template <typename T>
class PrefixTable {
 public:
  // Adds `prefix` with `value`. Returns false (and leaves the table unchanged) if exactly
  // this prefix is already present.
  bool Insert(const Cidr& prefix, T value) {
    internal::PrefixTrie& trie = prefix.is_v4() ? v4_ : v6_;
    uint32_t slot = static_cast<uint32_t>(values_.size());
    uint32_t existing =
        trie.Insert(internal::PrefixTrie::KeyOf(prefix.network()), prefix.prefix_length(), slot);
    if (existing != internal::PrefixTrie::kNone) return false;
    values_.push_back(std::move(value));
    return true;
  }

  // The value of the longest prefix containing `address` (unmapped first), or nullptr. The
  // pointer stays valid until the next Insert.
  const T* Lookup(const IpAddress& address) const {
    IpAddress a = address.Unmapped();
    const internal::PrefixTrie& trie = a.is_v4() ? v4_ : v6_;
    uint32_t slot = trie.Lookup(internal::PrefixTrie::KeyOf(a));
    return slot == internal::PrefixTrie::kNone ? nullptr : &values_[slot];
  }

  size_t size() const { return values_.size(); }
  bool empty() const { return values_.empty(); }

 private:
  internal::PrefixTrie v4_;
  internal::PrefixTrie v6_;
  std::vector<T> values_;
};

}  // namespace meshwork::net

template <>
struct std::hash<meshwork::net::Cidr> {
  size_t operator()(const meshwork::net::Cidr& c) const noexcept { return c.Hash(); }
};

#endif  // MESHWORK_COMMON_NET_CIDR_H_
