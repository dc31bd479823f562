// An `http://` or `https://` URL a node calls out to (the auth backend, A-6), parsed strictly
// so that central refuses with a field-named 400 what a node could not call, and a node never
// guesses.
//
//   http[s]://host[:port][/path[?query]]
//
// `host`: an IPv4 dotted quad, a bracketed IPv6 address or a DNS name (letters, digits, '-'
// and '.', at most 253 characters). `port` 1…65535, default 80 (443 for https). The path and
// query (default "/") are kept as given: printable ASCII without spaces, no fragment. No user
// information (credentials belong in headers, not URLs). At most kMaxHttpUrlBytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace meshwork::net {

inline constexpr size_t kMaxHttpUrlBytes = 2048;

struct HttpUrl {
  std::string host;  // as written, IPv6 with its brackets ("[::1]")
  uint16_t port = 80;
  std::string target = "/";  // path and query, as sent in the request line
  bool tls = false;          // https://
  bool operator==(const HttpUrl&) const = default;
};

// InvalidArgument saying what is wrong (without repeating the URL) when `url` is not of the
// form above.
absl::StatusOr<HttpUrl> ParseHttpUrl(std::string_view url);

// `host` alone (no port, no brackets) is an IPv4 or IPv6 address or a DNS name as above.
bool IsHostName(std::string_view host);

}  // namespace meshwork::net
