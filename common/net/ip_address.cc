#include "common/net/ip_address.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <ostream>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace meshwork::net {
namespace {

// Longest input echoed verbatim in an error message.
constexpr size_t kMaxQuotedLength = 128;

std::optional<int> HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return std::nullopt;
}

// A strict dotted quad: exactly four parts of 1-3 decimal digits, value <= 255, no leading
// zeros, nothing else.
std::optional<std::array<uint8_t, 4>> ParseDottedQuad(std::string_view text) {
  std::array<uint8_t, 4> out{};
  size_t pos = 0;
  for (int part = 0; part < 4; ++part) {
    if (part > 0) {
      if (pos >= text.size() || text[pos] != '.') return std::nullopt;
      ++pos;
    }
    size_t start = pos;
    int value = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9' && pos - start < 3) {
      value = value * 10 + (text[pos] - '0');
      ++pos;
    }
    size_t digits = pos - start;
    if (digits == 0) return std::nullopt;
    if (digits > 1 && text[start] == '0') return std::nullopt;
    if (value > 255) return std::nullopt;
    out[part] = static_cast<uint8_t>(value);
  }
  if (pos != text.size()) return std::nullopt;
  return out;
}

// Parses a colon-separated run of groups (no "::" inside) into `groups`, appending. The
// final group may be a dotted quad when `allow_v4_tail`. `text` must be non-empty. Returns
// false on any malformed group.
bool ParseGroups(std::string_view text, bool allow_v4_tail, std::array<uint16_t, 8>& groups,
                 int& count) {
  size_t pos = 0;
  while (true) {
    size_t end = text.find(':', pos);
    std::string_view group =
        text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    bool last = end == std::string_view::npos;
    if (last && allow_v4_tail && group.find('.') != std::string_view::npos) {
      auto quad = ParseDottedQuad(group);
      if (!quad || count > 6) return false;
      groups[count++] = static_cast<uint16_t>(((*quad)[0] << 8) | (*quad)[1]);
      groups[count++] = static_cast<uint16_t>(((*quad)[2] << 8) | (*quad)[3]);
      return true;
    }
    if (group.empty() || group.size() > 4 || count >= 8) return false;
    uint16_t value = 0;
    for (char c : group) {
      auto digit = HexDigit(c);
      if (!digit) return false;
      value = static_cast<uint16_t>((value << 4) | *digit);
    }
    groups[count++] = value;
    if (last) return true;
    pos = end + 1;
  }
}

std::optional<std::array<uint8_t, 16>> ParseV6(std::string_view text) {
  // Longest valid text: 8 groups of 4 digits and 7 colons, or 6 groups with a dotted quad.
  if (text.size() < 2 || text.size() > 45) return std::nullopt;
  std::array<uint16_t, 8> head{};
  std::array<uint16_t, 8> tail{};
  int head_count = 0;
  int tail_count = 0;
  size_t gap = text.find("::");
  if (gap == std::string_view::npos) {
    if (!ParseGroups(text, /*allow_v4_tail=*/true, head, head_count) || head_count != 8) {
      return std::nullopt;
    }
  } else {
    std::string_view before = text.substr(0, gap);
    std::string_view after = text.substr(gap + 2);
    // A second "::" (or ":::") is ambiguous or malformed.
    if (after.find("::") != std::string_view::npos) return std::nullopt;
    if (!after.empty() && after.front() == ':') return std::nullopt;
    if (!before.empty() && !ParseGroups(before, /*allow_v4_tail=*/false, head, head_count)) {
      return std::nullopt;
    }
    if (!after.empty() && !ParseGroups(after, /*allow_v4_tail=*/true, tail, tail_count)) {
      return std::nullopt;
    }
    // "::" stands for at least one zero group.
    if (head_count + tail_count > 7) return std::nullopt;
    for (int i = 0; i < tail_count; ++i) head[8 - tail_count + i] = tail[i];
  }
  std::array<uint8_t, 16> bytes{};
  for (int i = 0; i < 8; ++i) {
    bytes[2 * i] = static_cast<uint8_t>(head[i] >> 8);
    bytes[2 * i + 1] = static_cast<uint8_t>(head[i] & 0xff);
  }
  return bytes;
}

}  // namespace

namespace internal {
std::string QuoteForMessage(std::string_view text) {
  bool truncated = text.size() > kMaxQuotedLength;
  if (truncated) text = text.substr(0, kMaxQuotedLength);
  return absl::StrCat("\"", absl::CHexEscape(absl::string_view(text.data(), text.size())),
                      truncated ? "..." : "", "\"");
}
}  // namespace internal

absl::StatusOr<IpAddress> IpAddress::Parse(std::string_view text) {
  if (text.find(':') == std::string_view::npos) {
    if (auto quad = ParseDottedQuad(text)) {
      IpAddress a;
      std::memcpy(a.bytes_.data(), quad->data(), 4);
      return a;
    }
  } else if (auto bytes = ParseV6(text)) {
    return V6(*bytes);
  }
  return absl::InvalidArgumentError(
      absl::StrCat(internal::QuoteForMessage(text), " is not an IP address"));
}

IpAddress IpAddress::V4(uint32_t host_order) {
  IpAddress a;
  a.bytes_[0] = static_cast<uint8_t>(host_order >> 24);
  a.bytes_[1] = static_cast<uint8_t>(host_order >> 16);
  a.bytes_[2] = static_cast<uint8_t>(host_order >> 8);
  a.bytes_[3] = static_cast<uint8_t>(host_order);
  return a;
}

IpAddress IpAddress::V6(const std::array<uint8_t, 16>& bytes) {
  IpAddress a;
  a.v6_ = true;
  a.bytes_ = bytes;
  return a;
}

bool IpAddress::IsV4Mapped() const {
  if (!v6_) return false;
  for (int i = 0; i < 10; ++i) {
    if (bytes_[i] != 0) return false;
  }
  return bytes_[10] == 0xff && bytes_[11] == 0xff;
}

uint64_t IpAddress::ClientPrefix(bool* v6) const {
  const IpAddress key = Unmapped();
  *v6 = key.is_v6();
  uint64_t high = 0;
  for (size_t i = 0; i < std::min<size_t>(key.bytes().size(), 8); ++i) {
    high = (high << 8) | key.bytes()[i];
  }
  return high;
}

std::string IpAddress::ClientKey(std::string_view address_text) {
  auto parsed = Parse(address_text);
  if (!parsed.ok()) return std::string(address_text);
  bool v6 = false;
  const uint64_t prefix = parsed->ClientPrefix(&v6);
  return absl::StrCat(v6 ? "6:" : "4:", absl::Hex(prefix));
}

IpAddress IpAddress::Unmapped() const {
  if (!IsV4Mapped()) return *this;
  IpAddress a;
  std::memcpy(a.bytes_.data(), bytes_.data() + 12, 4);
  return a;
}

uint32_t IpAddress::v4_host_order() const {
  return (uint32_t{bytes_[0]} << 24) | (uint32_t{bytes_[1]} << 16) | (uint32_t{bytes_[2]} << 8) |
         uint32_t{bytes_[3]};
}

std::string IpAddress::ToString() const {
  if (!v6_) {
    return absl::StrCat(bytes_[0], ".", bytes_[1], ".", bytes_[2], ".", bytes_[3]);
  }
  if (IsV4Mapped()) {
    return absl::StrCat("::ffff:", bytes_[12], ".", bytes_[13], ".", bytes_[14], ".", bytes_[15]);
  }
  std::array<uint16_t, 8> groups;
  for (int i = 0; i < 8; ++i)
    groups[i] = static_cast<uint16_t>((bytes_[2 * i] << 8) | bytes_[2 * i + 1]);
  // The longest run of at least two zero groups; the first one on ties.
  int best_start = -1;
  int best_len = 1;
  for (int i = 0; i < 8;) {
    if (groups[i] != 0) {
      ++i;
      continue;
    }
    int j = i;
    while (j < 8 && groups[j] == 0) ++j;
    if (j - i > best_len) {
      best_start = i;
      best_len = j - i;
    }
    i = j;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(39);
  for (int i = 0; i < 8; ++i) {
    if (i == best_start) {
      out += "::";
      i += best_len - 1;
      continue;
    }
    if (!out.empty() && out.back() != ':') out += ':';
    uint16_t g = groups[i];
    bool started = false;
    for (int shift = 12; shift >= 0; shift -= 4) {
      int nibble = (g >> shift) & 0xf;
      if (nibble != 0 || started || shift == 0) {
        out += kHex[nibble];
        started = true;
      }
    }
  }
  return out;
}

size_t IpAddress::Hash() const {
  uint64_t hi;
  uint64_t lo;
  std::memcpy(&hi, bytes_.data(), 8);
  std::memcpy(&lo, bytes_.data() + 8, 8);
  // splitmix64-style finalisation over both halves and the family.
  uint64_t x = hi ^ (lo * 0x9e3779b97f4a7c15ULL) ^ (v6_ ? 0xd6e8feb86659fd93ULL : 0);
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return static_cast<size_t>(x);
}

std::ostream& operator<<(std::ostream& os, const IpAddress& address) {
  return os << address.ToString();
}

}  // namespace meshwork::net
