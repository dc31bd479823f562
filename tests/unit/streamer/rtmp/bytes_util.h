// Shared by the RTMP tests: big-endian integers appended to a byte string, and a string's
// bytes as a span (what the parsers take).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace meshwork::rtmp::test {

inline void U8(std::string& b, unsigned v) { b.push_back(static_cast<char>(v & 0xFF)); }
inline void U16(std::string& b, unsigned v) {
  U8(b, v >> 8);
  U8(b, v);
}
inline void U24(std::string& b, uint32_t v) {
  U8(b, v >> 16);
  U16(b, v & 0xFFFF);
}
inline void U32(std::string& b, uint32_t v) {
  U16(b, v >> 16);
  U16(b, v & 0xFFFF);
}
inline std::span<const uint8_t> Span(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

}  // namespace meshwork::rtmp::test
