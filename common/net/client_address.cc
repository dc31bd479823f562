#include "common/net/client_address.h"

#include <string_view>

namespace meshwork::net {
namespace {

std::string_view TrimSpacesAndTabs(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool IsValidPort(std::string_view port) {
  if (port.empty() || port.size() > 5) return false;
  unsigned value = 0;
  for (char c : port) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  return value <= 65535;
}

std::optional<IpAddress> ParseElement(std::string_view element) {
  if (element.empty()) return std::nullopt;
  if (element.front() == '[') {
    // [v6] or [v6]:port.
    size_t close = element.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    std::string_view rest = element.substr(close + 1);
    if (!rest.empty() && (rest.front() != ':' || !IsValidPort(rest.substr(1)))) {
      return std::nullopt;
    }
    absl::StatusOr<IpAddress> address = IpAddress::Parse(element.substr(1, close - 1));
    if (!address.ok() || !address->is_v6()) return std::nullopt;
    return *address;
  }
  if (absl::StatusOr<IpAddress> address = IpAddress::Parse(element); address.ok()) {
    return *address;
  }
  // v4:port. A bare IPv6 address has several colons and was handled above.
  size_t colon = element.find(':');
  if (colon == std::string_view::npos || element.find(':', colon + 1) != std::string_view::npos ||
      !IsValidPort(element.substr(colon + 1))) {
    return std::nullopt;
  }
  absl::StatusOr<IpAddress> address = IpAddress::Parse(element.substr(0, colon));
  if (!address.ok() || !address->is_v4()) return std::nullopt;
  return *address;
}

}  // namespace

std::optional<IpAddress> LastForwardedFor(std::span<const std::string_view> header_values) {
  if (header_values.empty()) return std::nullopt;
  size_t total = 0;
  for (std::string_view value : header_values) {
    total += value.size();
    if (total > kMaxForwardedForBytes) return std::nullopt;
  }
  // The joined list's last element lies entirely within the last header value.
  std::string_view last = header_values.back();
  size_t comma = last.rfind(',');
  if (comma != std::string_view::npos) last.remove_prefix(comma + 1);
  return ParseElement(TrimSpacesAndTabs(last));
}

IpAddress ResolveClientAddress(const IpAddress& peer, const CidrSet& trusted,
                               std::span<const std::string_view> xff_values) {
  IpAddress client = peer.Unmapped();
  if (!trusted.Contains(client)) return client;
  if (std::optional<IpAddress> forwarded = LastForwardedFor(xff_values)) {
    return forwarded->Unmapped();
  }
  return client;
}

}  // namespace meshwork::net
