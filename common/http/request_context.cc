// RequestContext (types.h): what a handler reads of its request beyond the bytes.
#include <algorithm>
#include <string>

#include "absl/strings/ascii.h"
#include "common/http/types.h"

namespace meshwork::http {
namespace {

// The value of hex digit `c`, or -1.
int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string RequestContext::ViewerScheme() const {
  if (peer_trusted) {
    auto it = request.find("X-Forwarded-Proto");
    if (it != request.end() && absl::AsciiStrToLower(absl::string_view(
                                   it->value().data(), it->value().size())) == "https") {
      return "https";
    }
  }
  return scheme;
}

std::optional<std::string_view> RequestContext::QueryParam(std::string_view name,
                                                           std::string* storage) const {
  std::string_view q = query;
  while (!q.empty()) {
    size_t amp = q.find('&');
    std::string_view pair = q.substr(0, amp);
    size_t eq = pair.find('=');
    std::string_view key = pair.substr(0, eq);
    if (key == name) {
      std::string_view raw = eq == std::string_view::npos ? "" : pair.substr(eq + 1);
      // Most values (tokens, ids, numbers) need no decoding: the query's own bytes.
      if (std::none_of(raw.begin(), raw.end(), [](char c) { return c == '%' || c == '+'; })) {
        return raw;
      }
      std::string& out = *storage;
      out.clear();
      out.reserve(raw.size());
      for (size_t i = 0; i < raw.size(); ++i) {
        int high = 0, low = 0;
        if (raw[i] == '+') {
          out.push_back(' ');
        } else if (raw[i] == '%' && i + 2 < raw.size() && (high = HexValue(raw[i + 1])) >= 0 &&
                   (low = HexValue(raw[i + 2])) >= 0) {
          out.push_back(static_cast<char>(high * 16 + low));
          i += 2;
        } else {
          out.push_back(raw[i]);
        }
      }
      return std::string_view(out);
    }
    if (amp == std::string_view::npos) break;
    q.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

std::optional<std::string> RequestContext::QueryParam(std::string_view name) const {
  std::string storage;
  auto value = QueryParam(name, &storage);
  if (!value) return std::nullopt;
  return std::string(*value);
}

}  // namespace meshwork::http
