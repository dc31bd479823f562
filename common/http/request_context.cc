// RequestContext (types.h): what a handler reads of its request beyond the bytes.
#include <cctype>
#include <string>

#include "absl/strings/ascii.h"
#include "common/http/types.h"

namespace meshwork::http {

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

std::optional<std::string> RequestContext::QueryParam(std::string_view name) const {
  std::string_view q = query;
  while (!q.empty()) {
    size_t amp = q.find('&');
    std::string_view pair = q.substr(0, amp);
    size_t eq = pair.find('=');
    std::string_view key = pair.substr(0, eq);
    if (key == name) {
      std::string_view raw = eq == std::string_view::npos ? "" : pair.substr(eq + 1);
      std::string out;
      for (size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] == '+') {
          out.push_back(' ');
        } else if (raw[i] == '%' && i + 2 < raw.size() &&
                   std::isxdigit(static_cast<unsigned char>(raw[i + 1])) &&
                   std::isxdigit(static_cast<unsigned char>(raw[i + 2]))) {
          out.push_back(
              static_cast<char>(std::stoi(std::string(raw.substr(i + 1, 2)), nullptr, 16)));
          i += 2;
        } else {
          out.push_back(raw[i]);
        }
      }
      return out;
    }
    if (amp == std::string_view::npos) break;
    q.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

}  // namespace meshwork::http
