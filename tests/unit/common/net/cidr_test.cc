#include "common/net/cidr.h"

#include <catch2/catch.hpp>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/net/address_class.h"
#include "common/net/ip_address.h"
#include "tests/unit/common/net/net_test_util.h"

namespace meshwork::net {
namespace {

using test::Ip;

using test::Net;

std::string ParseError(std::string_view text) {
  absl::StatusOr<Cidr> c = Cidr::Parse(text);
  if (c.ok()) return "<ok>";
  CHECK(c.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(c.status().message());
}

TEST_CASE("Z-2 a route with host bits set is rejected naming the value") {
  CHECK(ParseError("10.10.1.1/16") == "\"10.10.1.1/16\" has host bits set");
  CHECK(ParseError("10.0.0.1/8") == "\"10.0.0.1/8\" has host bits set");
  CHECK(ParseError("0.0.0.1/0") == "\"0.0.0.1/0\" has host bits set");
  CHECK(ParseError("10.0.0.1/31") == "\"10.0.0.1/31\" has host bits set");
  CHECK(ParseError("2001:db8::1/64") == "\"2001:db8::1/64\" has host bits set");
  CHECK(ParseError("::1/127") == "\"::1/127\" has host bits set");
  CHECK(ParseError("8000::/0") == "\"8000::/0\" has host bits set");
  // The same addresses are fine with a long enough prefix.
  CHECK(ParseError("10.10.1.1/32") == "<ok>");
  CHECK(ParseError("10.0.0.1/32") == "<ok>");
  CHECK(ParseError("10.10.0.0/16") == "<ok>");
  CHECK(ParseError("2001:db8::1/128") == "<ok>");
}

TEST_CASE("Z-2 a route without a prefix length is rejected naming the value") {
  CHECK(ParseError("10.0.0.0") == "\"10.0.0.0\" has no prefix length");
  CHECK(ParseError("2001:db8::") == "\"2001:db8::\" has no prefix length");
}

TEST_CASE("Z-2 a route with an invalid prefix length is rejected naming the value") {
  CHECK(ParseError("10.0.0.0/33") == "\"10.0.0.0/33\" has an invalid prefix length");
  CHECK(ParseError("::/129") == "\"::/129\" has an invalid prefix length");
  for (const char* bad :
       {"10.0.0.0/", "10.0.0.0/08", "10.0.0.0/00", "10.0.0.0/+8", "10.0.0.0/-8", "10.0.0.0/ 8",
        "10.0.0.0/8 ", "10.0.0.0/8x", "10.0.0.0/0x8", "10.0.0.0/8/8", "10.0.0.0/4294967304",
        "10.0.0.0/1000", "::/0128", "::/1280"}) {
    INFO(bad);
    CHECK(ParseError(bad) == "\"" + std::string(bad) + "\" has an invalid prefix length");
  }
}

TEST_CASE("Z-2 a malformed route is rejected naming the value") {
  CHECK(ParseError("foo/8") == "\"foo/8\" is not a valid CIDR");
  for (const char* bad :
       {"", "/", "/8", "foo", "10.0.0/8", "010.0.0.0/8", " 10.0.0.0/8", "10.0.0.0 /8", "[::]/0",
        "fe80::%eth0/64", "10.0.0.0-8", "10.0.0.0.0/8", "::ffff:1.2.3/104"}) {
    INFO(bad);
    CHECK(ParseError(bad) == "\"" + std::string(bad) + "\" is not a valid CIDR");
  }
}

TEST_CASE("Z-2 valid routes parse and print canonically") {
  CHECK(Net("10.0.0.0/8").network() == Ip("10.0.0.0"));
  CHECK(Net("10.0.0.0/8").prefix_length() == 8);
  CHECK(Net("10.0.0.0/8").is_v4());
  CHECK(Net("0.0.0.0/0").prefix_length() == 0);
  CHECK(Net("::/0").prefix_length() == 0);
  CHECK_FALSE(Net("::/0").is_v4());
  CHECK(Net("1.2.3.4/32").ToString() == "1.2.3.4/32");
  CHECK(Net("2001:DB8:0:0::/32").ToString() == "2001:db8::/32");
  CHECK(Net("::FFFF:10.0.0.0/104").ToString() == "::ffff:10.0.0.0/104");
  CHECK(Net("::1/128").ToString() == "::1/128");
  for (const char* text :
       {"0.0.0.0/0", "10.0.0.0/8", "172.16.0.0/12", "192.0.2.128/25", "255.255.255.255/32", "::/0",
        "fe80::/10", "2001:db8::/32", "::ffff:0.0.0.0/96", "::ffff:10.0.0.0/104", "ffff::/16",
        "2001:db8:0:1::/64", "::1/128"}) {
    INFO(text);
    Cidr c = Net(text);
    CHECK(c.ToString() == text);
    CHECK(Net(c.ToString()) == c);
  }
}

TEST_CASE("Z-2 Cidr::Create validates like Parse") {
  absl::StatusOr<Cidr> ok = Cidr::Create(Ip("192.168.0.0"), 16);
  REQUIRE(ok.ok());
  CHECK(*ok == Net("192.168.0.0/16"));
  CHECK(Cidr::Create(Ip("192.168.1.0"), 16).status().message() ==
        "\"192.168.1.0/16\" has host bits set");
  CHECK(Cidr::Create(Ip("192.168.0.0"), 33).status().message() ==
        "\"192.168.0.0/33\" has an invalid prefix length");
  CHECK_FALSE(Cidr::Create(Ip("::"), -1).ok());
  CHECK(Cidr::Create(Ip("::"), 128).ok());
}

TEST_CASE("Z-5 IPv4-mapped clients match IPv4 routes") {
  Cidr ten = Net("10.0.0.0/8");
  CHECK(ten.Contains(Ip("10.0.0.0")));
  CHECK(ten.Contains(Ip("10.255.255.255")));
  CHECK(ten.Contains(Ip("::ffff:10.1.2.3")));
  CHECK_FALSE(ten.Contains(Ip("11.0.0.0")));
  CHECK_FALSE(ten.Contains(Ip("9.255.255.255")));
  CHECK_FALSE(ten.Contains(Ip("::ffff:11.1.2.3")));
  // Only the ::ffff:0:0/96 form is mapped; other embeddings are plain IPv6.
  CHECK_FALSE(ten.Contains(Ip("::10.1.2.3")));
  CHECK_FALSE(ten.Contains(Ip("64:ff9b::10.1.2.3")));
  CHECK_FALSE(ten.Contains(Ip("a00::")));

  // An IPv6 route compares the raw IPv6 address and never contains an IPv4 address.
  Cidr mapped_range = Net("::ffff:0.0.0.0/96");
  CHECK(mapped_range.Contains(Ip("::ffff:1.2.3.4")));
  CHECK_FALSE(mapped_range.Contains(Ip("1.2.3.4")));
  CHECK(Net("::ffff:10.0.0.0/104").Contains(Ip("::ffff:10.9.9.9")));
  CHECK_FALSE(Net("::ffff:10.0.0.0/104").Contains(Ip("10.9.9.9")));
}

TEST_CASE("Z-5 default routes contain their whole family") {
  Cidr any4 = Net("0.0.0.0/0");
  for (const char* a : {"0.0.0.0", "1.2.3.4", "255.255.255.255", "::ffff:0.0.0.0", "::ffff:1.2.3.4",
                        "::ffff:255.255.255.255"}) {
    INFO(a);
    CHECK(any4.Contains(Ip(a)));
  }
  for (const char* a : {"::", "::1", "2001:db8::1", "::1.2.3.4"}) {
    INFO(a);
    CHECK_FALSE(any4.Contains(Ip(a)));
  }
  Cidr any6 = Net("::/0");
  for (const char* a :
       {"::", "::1", "2001:db8::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "::ffff:1.2.3.4"}) {
    INFO(a);
    CHECK(any6.Contains(Ip(a)));
  }
  CHECK_FALSE(any6.Contains(Ip("1.2.3.4")));
  CHECK_FALSE(any6.Contains(Ip("0.0.0.0")));
}

TEST_CASE("Z-5 prefix boundaries are exact") {
  Cidr c = Net("192.0.2.128/25");
  CHECK(c.Contains(Ip("192.0.2.128")));
  CHECK(c.Contains(Ip("192.0.2.255")));
  CHECK_FALSE(c.Contains(Ip("192.0.2.127")));
  CHECK_FALSE(c.Contains(Ip("192.0.3.0")));
  Cidr host = Net("1.2.3.4/32");
  CHECK(host.Contains(Ip("1.2.3.4")));
  CHECK(host.Contains(Ip("::ffff:1.2.3.4")));
  CHECK_FALSE(host.Contains(Ip("1.2.3.5")));
  Cidr v6 = Net("2001:db8:8000::/33");
  CHECK(v6.Contains(Ip("2001:db8:8000::")));
  CHECK(v6.Contains(Ip("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff")));
  CHECK_FALSE(v6.Contains(Ip("2001:db8:7fff:ffff:ffff:ffff:ffff:ffff")));
  Cidr v6host = Net("2001:db8::1/128");
  CHECK(v6host.Contains(Ip("2001:db8::1")));
  CHECK_FALSE(v6host.Contains(Ip("2001:db8::")));
  // Every CIDR contains its own network.
  for (const char* text : {"0.0.0.0/0", "10.0.0.0/8", "::/0", "fe80::/10", "::1/128"}) {
    INFO(text);
    CHECK(Net(text).Contains(Net(text).network()));
  }
}

TEST_CASE("Z-2 CIDRs compare and hash by network and length") {
  CHECK(Net("10.0.0.0/8") == Net("10.0.0.0/8"));
  CHECK(Net("10.0.0.0/8") != Net("10.0.0.0/9"));
  CHECK(Net("10.0.0.0/8") < Net("10.0.0.0/9"));
  CHECK(Net("10.0.0.0/9") < Net("11.0.0.0/8"));
  CHECK(Net("255.0.0.0/8") < Net("::/0"));
  CHECK(Net("0.0.0.0/0") != Net("::/0"));
  std::unordered_set<Cidr> set = {Net("10.0.0.0/8"), Net("10.0.0.0/8"), Net("10.0.0.0/16"),
                                  Net("::/0")};
  CHECK(set.size() == 3);
}

TEST_CASE("T-3 trusted proxy lists name the failing element") {
  size_t index = 99;
  absl::StatusOr<CidrSet> bad =
      CidrSet::Parse({"192.168.0.0/16", "10.0.0.1/8", "bogus"}, "trusted_proxies", &index);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(bad.status().message() == "trusted_proxies[1]: \"10.0.0.1/8\" has host bits set");
  CHECK(index == 1);

  CHECK(CidrSet::Parse({"10.0.0.0"}, "trusted_proxies").status().message() ==
        "trusted_proxies[0]: \"10.0.0.0\" has no prefix length");
  CHECK(CidrSet::Parse({"::/0", "1.2.3.0/24", "foo/8"}, "zones").status().message() ==
        "zones[2]: \"foo/8\" is not a valid CIDR");
  CHECK(CidrSet::Parse({"10.0.0.0/8", ""}, "x").status().message() ==
        "x[1]: \"\" is not a valid CIDR");
}

TEST_CASE("T-3 trusted proxy sets match any member") {
  absl::StatusOr<CidrSet> set =
      CidrSet::Parse({"10.0.0.0/8", "192.168.1.0/24", "2001:db8::/32"}, "trusted_proxies");
  REQUIRE(set.ok());
  CHECK(set->size() == 3);
  CHECK(set->cidrs()[1] == Net("192.168.1.0/24"));
  CHECK(set->Contains(Ip("10.2.3.4")));
  CHECK(set->Contains(Ip("::ffff:10.2.3.4")));
  CHECK(set->Contains(Ip("192.168.1.77")));
  CHECK(set->Contains(Ip("2001:db8:1::1")));
  CHECK_FALSE(set->Contains(Ip("192.168.2.1")));
  CHECK_FALSE(set->Contains(Ip("2001:db9::1")));
  CHECK_FALSE(set->Contains(Ip("8.8.8.8")));
}

TEST_CASE("T-3 an empty trusted list contains nothing") {
  absl::StatusOr<CidrSet> empty = CidrSet::Parse({}, "trusted_proxies");
  REQUIRE(empty.ok());
  CHECK(empty->empty());
  CHECK_FALSE(empty->Contains(Ip("10.0.0.1")));
  CHECK_FALSE(empty->Contains(Ip("::1")));
  CHECK_FALSE(CidrSet().Contains(Ip("0.0.0.0")));
}

TEST_CASE("O-11 private address classes") {
  for (const char* a : {"10.0.0.0",
                        "10.255.255.255",
                        "172.16.0.1",
                        "172.31.255.255",
                        "192.168.0.1",
                        "192.168.255.255",
                        "100.64.0.1",
                        "100.127.255.255",
                        "127.0.0.1",
                        "127.255.255.254",
                        "169.254.0.1",
                        "169.254.255.255",
                        "0.0.0.0",
                        "::1",
                        "::",
                        "fe80::1",
                        "febf:ffff::1",
                        "fc00::1",
                        "fd12:3456::1",
                        "fdff:ffff::",
                        "::ffff:10.1.2.3",
                        "::ffff:192.168.1.1",
                        "::ffff:127.0.0.1",
                        "::ffff:100.64.0.1",
                        "::ffff:0.0.0.0",
                        "::ffff:169.254.1.1"}) {
    INFO(a);
    CHECK(IsPrivate(Ip(a)));
  }
  for (const char* a : {"8.8.8.8",
                        "1.1.1.1",
                        "9.255.255.255",
                        "11.0.0.0",
                        "172.15.255.255",
                        "172.32.0.0",
                        "192.167.255.255",
                        "192.169.0.0",
                        "100.63.255.255",
                        "100.128.0.0",
                        "126.255.255.255",
                        "128.0.0.0",
                        "169.253.255.255",
                        "169.255.0.0",
                        "0.0.0.1",
                        "255.255.255.255",
                        "2001:db8::1",
                        "2606:4700::1111",
                        "::2",
                        "fec0::1",
                        "fe7f::1",
                        "fbff::1",
                        "fe00::1",
                        "ff02::1",
                        "::ffff:8.8.8.8",
                        "::ffff:172.32.0.1",
                        "::10.0.0.1",
                        "64:ff9b::10.0.0.1",
                        "::ffff:0.0.0.1"}) {
    INFO(a);
    CHECK_FALSE(IsPrivate(Ip(a)));
  }
}

}  // namespace
}  // namespace meshwork::net
