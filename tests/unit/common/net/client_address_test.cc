#include "common/net/client_address.h"

#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/net/cidr.h"
#include "common/net/ip_address.h"
#include "tests/unit/common/net/net_test_util.h"

namespace meshwork::net {
namespace {

using test::Ip;

CidrSet Trusted(const std::vector<std::string>& cidrs) {
  absl::StatusOr<CidrSet> set = CidrSet::Parse(cidrs, "trusted_proxies");
  REQUIRE(set.ok());
  return *set;
}

std::optional<IpAddress> Last(std::vector<std::string_view> values) {
  return LastForwardedFor(values);
}

IpAddress Resolve(std::string_view peer, const CidrSet& trusted,
                  std::vector<std::string_view> values) {
  return ResolveClientAddress(Ip(peer), trusted, values);
}

TEST_CASE("T-2 a trusted peer supplies the client address as the last X-Forwarded-For element") {
  CidrSet trusted = Trusted({"10.0.0.0/8", "2001:db8:ffff::/48"});
  CHECK(Resolve("10.0.0.5", trusted, {"203.0.113.7"}) == Ip("203.0.113.7"));
  CHECK(Resolve("10.0.0.5", trusted, {"198.51.100.1, 203.0.113.7"}) == Ip("203.0.113.7"));
  CHECK(Resolve("10.0.0.5", trusted, {"2001:db8::42"}) == Ip("2001:db8::42"));
  CHECK(Resolve("2001:db8:ffff::1", trusted, {"203.0.113.7"}) == Ip("203.0.113.7"));
  // A mapped peer is matched as IPv4 (Z-5).
  CHECK(Resolve("::ffff:10.0.0.5", trusted, {"203.0.113.7"}) == Ip("203.0.113.7"));
  // The result is unmapped.
  CHECK(Resolve("10.0.0.5", trusted, {"::ffff:203.0.113.7"}) == Ip("203.0.113.7"));
  CHECK(Resolve("10.0.0.5", trusted, {"[::ffff:203.0.113.7]:443"}) == Ip("203.0.113.7"));
  // Ports and brackets are stripped; spaces and tabs trimmed.
  CHECK(Resolve("10.0.0.5", trusted, {"1.1.1.1,\t203.0.113.7:5678 "}) == Ip("203.0.113.7"));
  CHECK(Resolve("10.0.0.5", trusted, {"[2001:db8::42]:8443"}) == Ip("2001:db8::42"));
  CHECK(Resolve("10.0.0.5", trusted, {"[2001:db8::42]"}) == Ip("2001:db8::42"));
}

TEST_CASE("T-2 the last X-Forwarded-For element is parsed strictly") {
  CHECK(Last({"1.2.3.4"}) == Ip("1.2.3.4"));
  CHECK(Last({"  1.2.3.4\t"}) == Ip("1.2.3.4"));
  CHECK(Last({"1.2.3.4:80"}) == Ip("1.2.3.4"));
  CHECK(Last({"1.2.3.4:0"}) == Ip("1.2.3.4"));
  CHECK(Last({"1.2.3.4:65535"}) == Ip("1.2.3.4"));
  CHECK(Last({"2001:DB8::1"}) == Ip("2001:db8::1"));
  CHECK(Last({"[::1]"}) == Ip("::1"));
  CHECK(Last({"[::1]:1"}) == Ip("::1"));
  CHECK(Last({"::ffff:1.2.3.4"}) == Ip("::ffff:1.2.3.4"));  // kept as written
  CHECK(Last({"garbage, 1.2.3.4"}) == Ip("1.2.3.4"));       // only the last element matters

  for (const char* bad : {"",
                          " ",
                          ",",
                          "1.2.3.4,",
                          "1.2.3.4, ",
                          "unknown",
                          "_hidden",
                          "example.com",
                          "1.2.3",
                          "01.2.3.4",
                          "1.2.3.4:",
                          "1.2.3.4:65536",
                          "1.2.3.4:123456",
                          "1.2.3.4:8a",
                          "1.2.3.4:-1",
                          "1.2.3.4 :80",
                          "1.2.3.4:80:80",
                          "[1.2.3.4]",
                          "[1.2.3.4]:80",
                          "[::1",
                          "::1]",
                          "[::1]80",
                          "[::1]:",
                          "[::1]:99999",
                          "[]",
                          "[]:80",
                          "::1:80:",
                          "fe80::1%eth0",
                          "[fe80::1%eth0]:80",
                          "\"1.2.3.4\"",
                          "1.2.3.4 5.6.7.8",
                          "1.2.3.4\n",
                          "1.2.3.4\r",
                          "for=1.2.3.4"}) {
    INFO(bad);
    CHECK(Last({bad}) == std::nullopt);
  }
  // A bare IPv6 address whose last group looks like a port is still that address.
  CHECK(Last({"2001:db8::1:80"}) == Ip("2001:db8::1:80"));
  CHECK(Last({}) == std::nullopt);
}

TEST_CASE("T-2 an untrusted peer's X-Forwarded-For is ignored") {
  CidrSet trusted = Trusted({"10.0.0.0/8", "fd00::/8"});
  CHECK(Resolve("198.51.100.9", trusted, {"203.0.113.7"}) == Ip("198.51.100.9"));
  CHECK(Resolve("11.0.0.1", trusted, {"203.0.113.7"}) == Ip("11.0.0.1"));
  CHECK(Resolve("2001:db8::9", trusted, {"203.0.113.7"}) == Ip("2001:db8::9"));
  CHECK(Resolve("::ffff:198.51.100.9", trusted, {"203.0.113.7"}) == Ip("198.51.100.9"));
  // Even a spoofed "trusted" address in the header changes nothing.
  CHECK(Resolve("198.51.100.9", trusted, {"10.0.0.1"}) == Ip("198.51.100.9"));
  // An IPv6 trusted prefix does not cover an IPv4 peer's mapped form.
  CHECK(Resolve("203.0.113.1", Trusted({"::ffff:0.0.0.0/96"}), {"1.1.1.1"}) == Ip("203.0.113.1"));
}

TEST_CASE("T-2 missing or malformed X-Forwarded-For falls back to the peer") {
  CidrSet trusted = Trusted({"10.0.0.0/8"});
  CHECK(Resolve("10.0.0.5", trusted, {}) == Ip("10.0.0.5"));
  CHECK(Resolve("10.0.0.5", trusted, {""}) == Ip("10.0.0.5"));
  CHECK(Resolve("10.0.0.5", trusted, {"unknown"}) == Ip("10.0.0.5"));
  CHECK(Resolve("10.0.0.5", trusted, {"203.0.113.7, "}) == Ip("10.0.0.5"));
  CHECK(Resolve("10.0.0.5", trusted, {"203.0.113.7,,"}) == Ip("10.0.0.5"));
  CHECK(Resolve("10.0.0.5", trusted, {"203.0.113.7, 1.2.3"}) == Ip("10.0.0.5"));
  CHECK(Resolve("10.0.0.5", trusted, {"203.0.113.07"}) == Ip("10.0.0.5"));
  CHECK(Resolve("::ffff:10.0.0.5", trusted, {"junk"}) == Ip("10.0.0.5"));  // unmapped peer

  // Oversized headers are ignored wholesale, even with a valid last element.
  std::string padding(kMaxForwardedForBytes, ' ');
  std::string big = padding + ",203.0.113.7";
  CHECK(Resolve("10.0.0.5", trusted, {big}) == Ip("10.0.0.5"));
  std::string half(kMaxForwardedForBytes / 2 + 1, ' ');
  CHECK(Resolve("10.0.0.5", trusted, {half, half + "203.0.113.7"}) == Ip("10.0.0.5"));
  // Exactly at the limit is still accepted.
  std::string fits(kMaxForwardedForBytes - 11, ' ');
  fits += "203.0.113.7";
  REQUIRE(fits.size() == kMaxForwardedForBytes);
  CHECK(Resolve("10.0.0.5", trusted, {fits}) == Ip("203.0.113.7"));
}

TEST_CASE("T-2 several X-Forwarded-For headers form one list") {
  CidrSet trusted = Trusted({"10.0.0.0/8"});
  CHECK(Resolve("10.0.0.5", trusted, {"198.51.100.1", "203.0.113.7"}) == Ip("203.0.113.7"));
  CHECK(Resolve("10.0.0.5", trusted, {"198.51.100.1, 198.51.100.2", "203.0.113.7"}) ==
        Ip("203.0.113.7"));
  CHECK(Resolve("10.0.0.5", trusted, {"198.51.100.1", "198.51.100.2, 203.0.113.7"}) ==
        Ip("203.0.113.7"));
  // An empty last header is an empty last element of the joined list.
  CHECK(Resolve("10.0.0.5", trusted, {"203.0.113.7", ""}) == Ip("10.0.0.5"));
  // A malformed last header is not skipped in favour of an earlier one.
  CHECK(Resolve("10.0.0.5", trusted, {"203.0.113.7", "unknown"}) == Ip("10.0.0.5"));
  CHECK(Last({"garbage", "1.2.3.4"}) == Ip("1.2.3.4"));
}

TEST_CASE("T-2 only a single hop is supported") {
  CidrSet trusted = Trusted({"10.0.0.0/8", "192.168.0.0/16"});
  // The last element is another trusted proxy: it is taken as is, not walked past.
  CHECK(Resolve("10.0.0.5", trusted, {"203.0.113.7, 192.168.1.1"}) == Ip("192.168.1.1"));
  CHECK(Resolve("10.0.0.5", trusted, {"203.0.113.7", "10.0.0.6"}) == Ip("10.0.0.6"));
  CHECK(Resolve("10.0.0.5", trusted, {"203.0.113.7, 10.0.0.5"}) == Ip("10.0.0.5"));
}

TEST_CASE("T-3 an empty trusted list trusts no proxy") {
  CidrSet none = Trusted({});
  CHECK(Resolve("10.0.0.5", none, {"203.0.113.7"}) == Ip("10.0.0.5"));
  CHECK(Resolve("127.0.0.1", none, {"203.0.113.7"}) == Ip("127.0.0.1"));
  CHECK(Resolve("::1", none, {"203.0.113.7"}) == Ip("::1"));
  CHECK(Resolve("::ffff:10.0.0.5", none, {"203.0.113.7"}) == Ip("10.0.0.5"));
  CHECK(Resolve("10.0.0.5", CidrSet(), {"203.0.113.7"}) == Ip("10.0.0.5"));
}

TEST_CASE("T-3 a catch-all trusted list takes the header from anyone") {
  CidrSet all = Trusted({"0.0.0.0/0", "::/0"});
  CHECK(Resolve("8.8.8.8", all, {"203.0.113.7"}) == Ip("203.0.113.7"));
  CHECK(Resolve("::ffff:8.8.8.8", all, {"203.0.113.7"}) == Ip("203.0.113.7"));
  CHECK(Resolve("2001:db8::1", all, {"203.0.113.7"}) == Ip("203.0.113.7"));
}

}  // namespace
}  // namespace meshwork::net
