#include "common/crypto/base64url.h"

#include <array>
#include <cstdint>

namespace meshwork::crypto {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

constexpr int8_t kInvalid = -1;

// Character → 6-bit value, or kInvalid.
constexpr std::array<int8_t, 256> MakeReverse() {
  std::array<int8_t, 256> table{};
  for (auto& v : table) v = kInvalid;
  for (int i = 0; i < 64; ++i) table[static_cast<unsigned char>(kAlphabet[i])] = int8_t(i);
  return table;
}

constexpr std::array<int8_t, 256> kReverse = MakeReverse();

}  // namespace

std::string Base64UrlEncode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() * 4 + 2) / 3);
  size_t i = 0;
  auto byte = [&](size_t k) { return static_cast<uint32_t>(static_cast<unsigned char>(bytes[k])); };
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t group = byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2);
    out.push_back(kAlphabet[(group >> 18) & 63]);
    out.push_back(kAlphabet[(group >> 12) & 63]);
    out.push_back(kAlphabet[(group >> 6) & 63]);
    out.push_back(kAlphabet[group & 63]);
  }
  size_t rest = bytes.size() - i;
  if (rest == 1) {
    uint32_t group = byte(i) << 16;
    out.push_back(kAlphabet[(group >> 18) & 63]);
    out.push_back(kAlphabet[(group >> 12) & 63]);
  } else if (rest == 2) {
    uint32_t group = byte(i) << 16 | byte(i + 1) << 8;
    out.push_back(kAlphabet[(group >> 18) & 63]);
    out.push_back(kAlphabet[(group >> 12) & 63]);
    out.push_back(kAlphabet[(group >> 6) & 63]);
  }
  return out;
}

std::optional<std::string> Base64UrlDecode(std::string_view text) {
  // Padding: only a text whose length is a multiple of 4 may end in one or two '='.
  if (!text.empty() && text.back() == '=') {
    if (text.size() % 4 != 0) return std::nullopt;
    text.remove_suffix(1);
    if (!text.empty() && text.back() == '=') text.remove_suffix(1);
    // "xx==" and "xxx=" are the only padded tails; "x===" or "====" remain invalid below.
    if (text.size() % 4 == 0) return std::nullopt;
  }
  if (text.size() % 4 == 1) return std::nullopt;

  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t bits = 0;  // pending bits, the newest in the low end
  int count = 0;      // how many of them
  for (char c : text) {
    int8_t v = kReverse[static_cast<unsigned char>(c)];
    if (v == kInvalid) return std::nullopt;
    bits = (bits << 6) | static_cast<uint32_t>(v);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xff));
      bits &= (1u << count) - 1;
    }
  }
  // 2 or 4 bits left over from a short final group must be zero.
  if (bits != 0) return std::nullopt;
  return out;
}

}  // namespace meshwork::crypto
