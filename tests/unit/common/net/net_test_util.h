// Shared by the address tests: an address or a network written as text in the test itself,
// required to parse.
#pragma once

#include <catch2/catch.hpp>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/net/cidr.h"
#include "common/net/ip_address.h"

namespace meshwork::net::test {

inline IpAddress Ip(std::string_view text) {
  absl::StatusOr<IpAddress> a = IpAddress::Parse(text);
  INFO(std::string(text));
  REQUIRE(a.ok());
  return *a;
}

inline Cidr Net(std::string_view text) {
  absl::StatusOr<Cidr> c = Cidr::Parse(text);
  INFO(std::string(text));
  REQUIRE(c.ok());
  return *c;
}

}  // namespace meshwork::net::test
