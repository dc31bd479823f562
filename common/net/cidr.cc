#include "common/net/cidr.h"

#include <algorithm>
#include <bit>
#include <ostream>

#include "absl/strings/str_cat.h"

namespace meshwork::net {
namespace {

// Whether the first `length` bits of `a` and `b` (same family) are equal.
bool SamePrefix(std::span<const uint8_t> a, std::span<const uint8_t> b, int length) {
  int full = length / 8;
  for (int i = 0; i < full; ++i) {
    if (a[i] != b[i]) return false;
  }
  int rest = length % 8;
  if (rest == 0) return true;
  uint8_t mask = static_cast<uint8_t>(0xff << (8 - rest));
  return ((a[full] ^ b[full]) & mask) == 0;
}

bool HostBitsZero(const IpAddress& address, int length) {
  for (int i = length; i < address.bit_length(); ++i) {
    if (address.Bit(i)) return false;
  }
  return true;
}

// Decimal 0..999 without sign or leading zeros; -1 if malformed.
int ParsePrefixLength(std::string_view text) {
  if (text.empty() || text.size() > 3) return -1;
  if (text.size() > 1 && text[0] == '0') return -1;
  int value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return -1;
    value = value * 10 + (c - '0');
  }
  return value;
}

uint64_t MaskHi(int length) {
  if (length <= 0) return 0;
  if (length >= 64) return ~uint64_t{0};
  return ~uint64_t{0} << (64 - length);
}

uint64_t MaskLo(int length) {
  if (length <= 64) return 0;
  if (length >= 128) return ~uint64_t{0};
  return ~uint64_t{0} << (128 - length);
}

bool KeyBit(const internal::PrefixTrie::Key& key, int i) {
  return i < 64 ? (key.hi >> (63 - i)) & 1 : (key.lo >> (127 - i)) & 1;
}

// Number of leading bits on which `a` and `b` agree (0..128).
int CommonBits(const internal::PrefixTrie::Key& a, const internal::PrefixTrie::Key& b) {
  uint64_t x = a.hi ^ b.hi;
  if (x != 0) return std::countl_zero(x);
  x = a.lo ^ b.lo;
  if (x != 0) return 64 + std::countl_zero(x);
  return 128;
}

bool CoversKey(const internal::PrefixTrie::Key& prefix, int length,
               const internal::PrefixTrie::Key& key) {
  return (((prefix.hi ^ key.hi) & MaskHi(length)) | ((prefix.lo ^ key.lo) & MaskLo(length))) == 0;
}

}  // namespace

absl::StatusOr<Cidr> Cidr::Parse(std::string_view text) {
  size_t slash = text.find('/');
  if (slash == std::string_view::npos) {
    if (IpAddress::Parse(text).ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(internal::QuoteForMessage(text), " has no prefix length"));
    }
    return absl::InvalidArgumentError(
        absl::StrCat(internal::QuoteForMessage(text), " is not a valid CIDR"));
  }
  absl::StatusOr<IpAddress> network = IpAddress::Parse(text.substr(0, slash));
  if (!network.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(internal::QuoteForMessage(text), " is not a valid CIDR"));
  }
  int length = ParsePrefixLength(text.substr(slash + 1));
  if (length < 0 || length > network->bit_length()) {
    return absl::InvalidArgumentError(
        absl::StrCat(internal::QuoteForMessage(text), " has an invalid prefix length"));
  }
  if (!HostBitsZero(*network, length)) {
    return absl::InvalidArgumentError(
        absl::StrCat(internal::QuoteForMessage(text), " has host bits set"));
  }
  return Cidr(*network, length);
}

absl::StatusOr<Cidr> Cidr::Create(const IpAddress& network, int prefix_length) {
  std::string text = absl::StrCat(network.ToString(), "/", prefix_length);
  if (prefix_length < 0 || prefix_length > network.bit_length()) {
    return absl::InvalidArgumentError(
        absl::StrCat(internal::QuoteForMessage(text), " has an invalid prefix length"));
  }
  if (!HostBitsZero(network, prefix_length)) {
    return absl::InvalidArgumentError(
        absl::StrCat(internal::QuoteForMessage(text), " has host bits set"));
  }
  return Cidr(network, prefix_length);
}

std::string Cidr::ToString() const {
  return absl::StrCat(network_.ToString(), "/", prefix_length_);
}

bool Cidr::Contains(const IpAddress& address) const {
  if (network_.is_v4()) {
    IpAddress a = address.Unmapped();
    return a.is_v4() && SamePrefix(network_.bytes(), a.bytes(), prefix_length_);
  }
  return address.is_v6() && SamePrefix(network_.bytes(), address.bytes(), prefix_length_);
}

std::ostream& operator<<(std::ostream& os, const Cidr& cidr) { return os << cidr.ToString(); }

absl::StatusOr<CidrSet> CidrSet::Parse(const std::vector<std::string>& texts,
                                       std::string_view field_name, size_t* failed_index) {
  std::vector<Cidr> cidrs;
  cidrs.reserve(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    absl::StatusOr<Cidr> cidr = Cidr::Parse(texts[i]);
    if (!cidr.ok()) {
      if (failed_index != nullptr) *failed_index = i;
      return absl::InvalidArgumentError(
          absl::StrCat(absl::string_view(field_name.data(), field_name.size()), "[", i,
                       "]: ", cidr.status().message()));
    }
    cidrs.push_back(*cidr);
  }
  return CidrSet(std::move(cidrs));
}

bool CidrSet::Contains(const IpAddress& address) const {
  return std::any_of(cidrs_.begin(), cidrs_.end(),
                     [&](const Cidr& c) { return c.Contains(address); });
}

namespace internal {

PrefixTrie::Key PrefixTrie::KeyOf(const IpAddress& address) {
  Key key;
  std::span<const uint8_t> bytes = address.bytes();
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i < 8) {
      key.hi |= uint64_t{bytes[i]} << (56 - 8 * i);
    } else {
      key.lo |= uint64_t{bytes[i]} << (56 - 8 * (i - 8));
    }
  }
  return key;
}

uint32_t PrefixTrie::NewNode(Key key, int length, uint32_t slot) {
  Node node;
  node.key = key;
  node.length = length;
  node.slot = slot;
  nodes_.push_back(node);
  return static_cast<uint32_t>(nodes_.size() - 1);
}

uint32_t PrefixTrie::Insert(Key key, int length, uint32_t slot) {
  // `link` designates the pointer to rewrite: the root, or child[side] of node `parent`.
  // Held as indices because NewNode may reallocate nodes_.
  uint32_t parent = kNone;
  int side = 0;
  auto link = [&]() -> uint32_t& { return parent == kNone ? root_ : nodes_[parent].child[side]; };
  while (true) {
    uint32_t current = link();
    if (current == kNone) {
      uint32_t leaf = NewNode(key, length, slot);
      link() = leaf;
      return kNone;
    }
    Key node_key = nodes_[current].key;
    int node_length = nodes_[current].length;
    int common = std::min({CommonBits(key, node_key), node_length, length});
    if (common < node_length) {
      // The new prefix diverges from (or is shorter than) this node's: split above it.
      Key split_key{key.hi & MaskHi(common), key.lo & MaskLo(common)};
      if (common == length) {
        uint32_t split = NewNode(split_key, common, slot);
        nodes_[split].child[KeyBit(node_key, common)] = current;
        link() = split;
      } else {
        uint32_t split = NewNode(split_key, common, kNone);
        uint32_t leaf = NewNode(key, length, slot);
        nodes_[split].child[KeyBit(node_key, common)] = current;
        nodes_[split].child[KeyBit(key, common)] = leaf;
        link() = split;
      }
      return kNone;
    }
    if (node_length == length) {
      if (nodes_[current].slot != kNone) return nodes_[current].slot;
      nodes_[current].slot = slot;
      return kNone;
    }
    parent = current;
    side = KeyBit(key, node_length);
  }
}

uint32_t PrefixTrie::Lookup(Key key) const {
  uint32_t best = kNone;
  uint32_t current = root_;
  while (current != kNone) {
    const Node& node = nodes_[current];
    if (!CoversKey(node.key, node.length, key)) break;
    if (node.slot != kNone) best = node.slot;
    if (node.length >= 128) break;
    current = node.child[KeyBit(key, node.length)];
  }
  return best;
}

}  // namespace internal
}  // namespace meshwork::net
