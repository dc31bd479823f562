#include "common/http/request_head.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace meshwork::http {

namespace {

namespace beast_http = boost::beast::http;

// Byte classes, one table: what may appear in a target, a field name, a field value.
enum : uint8_t { kTarget = 1, kName = 2, kValue = 4 };

constexpr std::array<uint8_t, 256> MakeClasses() {
  std::array<uint8_t, 256> c{};
  for (int b = 0x21; b <= 0x7e; ++b) c[b] |= kTarget | kValue;
  c[' '] |= kValue;
  c['\t'] |= kValue;
  for (int b = 'a'; b <= 'z'; ++b) c[b] |= kName;
  for (int b = 'A'; b <= 'Z'; ++b) c[b] |= kName;
  for (int b = '0'; b <= '9'; ++b) c[b] |= kName;
  c['-'] |= kName;
  return c;
}
constexpr std::array<uint8_t, 256> kClasses = MakeClasses();

bool Is(char c, uint8_t cls) { return (kClasses[static_cast<unsigned char>(c)] & cls) != 0; }

// ASCII case-insensitive equality with a lower-case `lower`.
bool EqualsLower(std::string_view s, std::string_view lower) {
  if (s.size() != lower.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((s[i] | 0x20) != lower[i]) return false;
  }
  return true;
}

// Field names this reader leaves to Beast (compared by length first: cheap for the rest).
bool LeftToBeast(std::string_view name) {
  switch (name.size()) {
    case 7:
      return EqualsLower(name, "upgrade");
    case 14:
      return EqualsLower(name, "content-length");
    case 16:
      return EqualsLower(name, "proxy-connection");
    case 17:
      return EqualsLower(name, "transfer-encoding");
    default:
      return false;
  }
}

}  // namespace

size_t ReadSimpleRequestHead(std::string_view bytes, size_t header_limit,
                             beast_http::request<beast_http::string_body>& out) {
  // Only headers shorter than the limit minus 8 are looked at: Beast judges those near the
  // limit and over it.
  if (header_limit <= 9) return 0;
  const size_t limit = header_limit - 9;
  const char* p = bytes.data();
  const char* const end = p + std::min(bytes.size(), limit);

  // The request line.
  beast_http::verb method;
  if (end - p >= 4 && p[0] == 'G' && p[1] == 'E' && p[2] == 'T' && p[3] == ' ') {
    method = beast_http::verb::get;
    p += 4;
  } else if (end - p >= 5 && p[0] == 'H' && p[1] == 'E' && p[2] == 'A' && p[3] == 'D' &&
             p[4] == ' ') {
    method = beast_http::verb::head;
    p += 5;
  } else {
    return 0;
  }
  const char* target = p;
  while (p < end && Is(*p, kTarget)) ++p;
  if (p == target || p >= end || *p != ' ') return 0;
  std::string_view target_text(target, static_cast<size_t>(p - target));
  ++p;
  constexpr std::string_view kVersion = "HTTP/1.";
  if (end - p < 10 || std::string_view(p, kVersion.size()) != kVersion) return 0;
  p += kVersion.size();
  unsigned version;
  if (*p == '1') {
    version = 11;
  } else if (*p == '0') {
    version = 10;
  } else {
    return 0;
  }
  if (p[1] != '\r' || p[2] != '\n') return 0;
  p += 3;

  out.base().clear();  // fields only: the method, target and version are set below
  out.body().clear();
  out.method(method);
  out.target(target_text);
  out.version(version);

  // The field lines, then the empty line.
  for (size_t fields = 0;; ++fields) {
    if (end - p < 2) return 0;
    if (p[0] == '\r') {
      if (p[1] != '\n') return 0;
      return static_cast<size_t>(p + 2 - bytes.data());
    }
    if (fields == kMaxSimpleFields) return 0;
    const char* name = p;
    while (p < end && Is(*p, kName)) ++p;
    if (p == name || p >= end || *p != ':') return 0;
    std::string_view name_text(name, static_cast<size_t>(p - name));
    ++p;
    while (p < end && (*p == ' ' || *p == '\t')) ++p;
    const char* value = p;
    while (p < end && Is(*p, kValue)) ++p;
    // CRLF, then not SP/HTAB (a folded line is Beast's); the byte after it must be here.
    if (end - p < 3 || p[0] != '\r' || p[1] != '\n' || p[2] == ' ' || p[2] == '\t') return 0;
    const char* value_end = p;
    while (value_end > value && (value_end[-1] == ' ' || value_end[-1] == '\t')) --value_end;
    std::string_view value_text(value, static_cast<size_t>(value_end - value));
    p += 2;
    if (LeftToBeast(name_text)) return 0;
    if (name_text.size() == 10 && EqualsLower(name_text, "connection") &&
        !EqualsLower(value_text, "keep-alive") && !EqualsLower(value_text, "close")) {
      return 0;
    }
    out.insert(name_text, value_text);
  }
}

}  // namespace meshwork::http
