#include "common/net/http_url.h"

#include <charconv>

#include "common/net/ip_address.h"

namespace meshwork::net {

namespace {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.';
}

absl::Status Invalid(std::string_view why) { return absl::InvalidArgumentError(std::string(why)); }

}  // namespace

absl::StatusOr<HttpUrl> ParseHttpUrl(std::string_view url) {
  if (url.size() > kMaxHttpUrlBytes) return Invalid("must be at most 2048 bytes");
  constexpr std::string_view kHttp = "http://";
  constexpr std::string_view kHttps = "https://";
  HttpUrl out;
  if (url.substr(0, kHttps.size()) == kHttps) {
    out.tls = true;
    out.port = 443;
    url.remove_prefix(kHttps.size());
  } else if (url.substr(0, kHttp.size()) == kHttp) {
    url.remove_prefix(kHttp.size());
  } else {
    return Invalid("must start with http:// or https://");
  }
  size_t slash = url.find_first_of("/?");
  std::string_view authority = url.substr(0, slash);
  if (slash != std::string_view::npos) {
    out.target = std::string(url.substr(slash));
    if (out.target.front() == '?') out.target.insert(0, "/");
  }
  for (char c : out.target) {
    if (c <= ' ' || c >= 0x7f) return Invalid("the path must be printable ASCII without spaces");
    if (c == '#') return Invalid("must not carry a fragment");
  }
  if (authority.find('@') != std::string_view::npos) {
    return Invalid("must not carry user information");
  }
  std::string_view host = authority;
  std::string_view port;
  if (!host.empty() && host.front() == '[') {
    size_t close = host.find(']');
    if (close == std::string_view::npos) return Invalid("an IPv6 host needs its closing ']'");
    auto address = IpAddress::Parse(host.substr(1, close - 1));
    if (!address.ok() || !address->is_v6()) {
      return Invalid("the bracketed host is not an IPv6 address");
    }
    std::string_view rest = host.substr(close + 1);
    host = host.substr(0, close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return Invalid("only a port may follow the host");
      port = rest.substr(1);
      if (port.empty()) return Invalid("the port is empty");
    }
  } else {
    if (size_t colon = host.rfind(':'); colon != std::string_view::npos) {
      port = host.substr(colon + 1);
      host = host.substr(0, colon);
      if (port.empty()) return Invalid("the port is empty");
    }
    if (host.empty() || host.size() > 253) return Invalid("the host must be 1 to 253 characters");
    for (char c : host) {
      if (!IsNameChar(c)) return Invalid("the host must be an address or a DNS name");
    }
  }
  if (!port.empty()) {
    unsigned value = 0;
    auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || p != port.data() + port.size() || value == 0 || value > 65535) {
      return Invalid("the port must be 1 to 65535");
    }
    out.port = static_cast<uint16_t>(value);
  }
  out.host = std::string(host);
  return out;
}

bool IsHostName(std::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  if (IpAddress::Parse(host).ok()) return true;
  for (char c : host) {
    if (!IsNameChar(c)) return false;
  }
  return host.front() != '-' && host.front() != '.';
}

}  // namespace meshwork::net
