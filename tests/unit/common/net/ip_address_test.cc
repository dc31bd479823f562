#include "common/net/ip_address.h"

#include <catch2/catch.hpp>
#include <string>
#include <unordered_set>

#include "tests/unit/common/net/net_test_util.h"

namespace meshwork::net {
namespace {

using test::Ip;

bool Parses(std::string_view text) { return IpAddress::Parse(text).ok(); }

TEST_CASE("Z-2 IPv4 addresses parse only as strict dotted quads") {
  CHECK(Ip("0.0.0.0") == IpAddress::V4(0));
  CHECK(Ip("10.1.2.3") == IpAddress::V4(0x0a010203));
  CHECK(Ip("255.255.255.255") == IpAddress::V4(0xffffffff));
  CHECK(Ip("10.1.2.3").is_v4());
  CHECK(Ip("10.1.2.3").v4_host_order() == 0x0a010203u);

  for (const char* bad :
       {"",          "10.1.2",    "10.1.2.3.4", "10.1.2.",   ".10.1.2",    "10..1.2",
        "010.1.2.3", "10.01.2.3", "10.1.2.00",  "256.1.2.3", "10.1.2.300", "1000.1.2.3",
        " 10.1.2.3", "10.1.2.3 ", "10.1.2.3\n", "10.1.2.3x", "10.1.2.3/8", "10.1.2.3:80",
        "+1.2.3.4",  "-1.2.3.4",  "0x0a.1.2.3", "1e1.1.2.3", "10",         "167772161"}) {
    INFO(bad);
    CHECK_FALSE(Parses(bad));
  }
  CHECK_FALSE(Parses(std::string_view("1.2.3.4\0", 8)));
}

TEST_CASE("Z-2 an address parse error names the value") {
  absl::StatusOr<IpAddress> a = IpAddress::Parse("10.1.2");
  REQUIRE_FALSE(a.ok());
  CHECK(a.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(a.status().message() == "\"10.1.2\" is not an IP address");

  // Control characters and quotes are escaped; very long input is truncated.
  CHECK(IpAddress::Parse("a\"b\n").status().message() == "\"a\\\"b\\n\" is not an IP address");
  std::string long_input(10000, '1');
  std::string message(IpAddress::Parse(long_input).status().message());
  CHECK(message.size() < 200);
  CHECK(message.find("...\" is not an IP address") != std::string::npos);
}

TEST_CASE("Z-2 IPv6 textual forms of RFC 4291 parse") {
  std::array<uint8_t, 16> loopback{};
  loopback[15] = 1;
  CHECK(Ip("::1") == IpAddress::V6(loopback));
  CHECK(Ip("0:0:0:0:0:0:0:1") == IpAddress::V6(loopback));
  CHECK(Ip("0000:0000:0000:0000:0000:0000:0000:0001") == IpAddress::V6(loopback));
  CHECK(Ip("::") == IpAddress::V6({}));
  CHECK(Ip("::").is_v6());

  std::array<uint8_t, 16> doc{0x20, 0x01, 0x0d, 0xb8};
  doc[15] = 0x01;
  CHECK(Ip("2001:db8::1") == IpAddress::V6(doc));
  CHECK(Ip("2001:DB8::1") == IpAddress::V6(doc));
  CHECK(Ip("2001:0db8:0000:0000:0000:0000:0000:0001") == IpAddress::V6(doc));
  CHECK(Ip("2001:db8:0:0:0:0:0:1") == IpAddress::V6(doc));
  CHECK(Ip("2001:db8::0:1") == IpAddress::V6(doc));

  // "::" at either end, and standing for a single group.
  CHECK(Ip("1::").ToString() == "1::");
  CHECK(Ip("1:2:3:4:5:6:7::").ToString() == "1:2:3:4:5:6:7:0");
  CHECK(Ip("::2:3:4:5:6:7:8").ToString() == "0:2:3:4:5:6:7:8");
  CHECK(Ip("1:2:3::5:6:7:8").ToString() == "1:2:3:0:5:6:7:8");

  // Embedded dotted IPv4 tails.
  std::array<uint8_t, 16> mapped{};
  mapped[10] = mapped[11] = 0xff;
  mapped[12] = 1;
  mapped[13] = 2;
  mapped[14] = 3;
  mapped[15] = 4;
  CHECK(Ip("::ffff:1.2.3.4") == IpAddress::V6(mapped));
  CHECK(Ip("::FFFF:1.2.3.4") == IpAddress::V6(mapped));
  CHECK(Ip("0:0:0:0:0:ffff:1.2.3.4") == IpAddress::V6(mapped));
  CHECK(Ip("::ffff:0102:0304") == IpAddress::V6(mapped));
  CHECK(Ip("::1.2.3.4").ToString() == "::102:304");
  CHECK(Ip("64:ff9b::192.0.2.33").ToString() == "64:ff9b::c000:221");
  CHECK(Ip("1:2:3:4:5:6:1.2.3.4").ToString() == "1:2:3:4:5:6:102:304");
}

TEST_CASE("Z-2 malformed IPv6 text, zone ids and brackets are rejected") {
  for (const char* bad : {":",
                          ":::",
                          "1:::2",
                          "1::2::3",
                          "::1::",
                          ":1::2",
                          "1::2:",
                          ":1:2:3:4:5:6:7:8",
                          "1:2:3:4:5:6:7:8:",
                          "1:2:3:4:5:6:7",
                          "1:2:3:4:5:6:7:8:9",
                          "1:2:3:4:5:6:7:8::",
                          "::1:2:3:4:5:6:7:8",
                          "12345::",
                          "::12345",
                          "g::1",
                          "2001:db8::1%eth0",
                          "fe80::1%1",
                          "[::1]",
                          "[2001:db8::1]:80",
                          " ::1",
                          "::1 ",
                          "::1\t",
                          "2001:db8:: 1",
                          "::ffff:1.2.3",
                          "::ffff:1.2.3.4.5",
                          "::ffff:01.2.3.4",
                          "::ffff:256.2.3.4",
                          "1.2.3.4::",
                          "::1.2.3.4:5",
                          "1:2:3:4:5:6:7:1.2.3.4",
                          "1:2:3:4:5:6:1.2.3.4:8",
                          "::ffff:1.2.3.4/96",
                          "0x1::",
                          "-1::",
                          "+1::",
                          "1:2:3:4:5:6:7:8/64"}) {
    INFO(bad);
    CHECK_FALSE(Parses(bad));
  }
}

TEST_CASE("IPv6 is written in RFC 5952 canonical form") {
  CHECK(Ip("2001:0DB8:0000:0000:0000:0000:0000:0001").ToString() == "2001:db8::1");
  CHECK(Ip("0:0:0:0:0:0:0:0").ToString() == "::");
  CHECK(Ip("0:0:0:0:0:0:0:1").ToString() == "::1");
  CHECK(Ip("1:0:0:0:0:0:0:0").ToString() == "1::");
  // A single zero group is not compressed.
  CHECK(Ip("2001:db8:0:1:1:1:1:1").ToString() == "2001:db8:0:1:1:1:1:1");
  // The longest run wins; the first one on ties.
  CHECK(Ip("2001:0:0:1:0:0:0:1").ToString() == "2001:0:0:1::1");
  CHECK(Ip("2001:db8:0:0:1:0:0:1").ToString() == "2001:db8::1:0:0:1");
  CHECK(Ip("0:0:1:0:0:1:0:0").ToString() == "::1:0:0:1:0:0");
  CHECK(Ip("1:0:0:2:0:0:0:0").ToString() == "1:0:0:2::");
  // Leading zeros within groups dropped, lowercase.
  CHECK(Ip("FE80::00AB:000C").ToString() == "fe80::ab:c");
  CHECK(Ip("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff").ToString() ==
        "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
  // IPv4-mapped addresses keep the dotted tail.
  CHECK(Ip("::ffff:a01:203").ToString() == "::ffff:10.1.2.3");
  CHECK(Ip("0:0:0:0:0:FFFF:0.0.0.0").ToString() == "::ffff:0.0.0.0");
}

TEST_CASE("address ToString round-trips through Parse") {
  for (const char* text :
       {"0.0.0.0", "1.2.3.4", "255.255.255.255", "::", "::1", "1::", "2001:db8::1",
        "2001:db8:0:1:1:1:1:1", "2001:0:0:1::1", "::ffff:1.2.3.4", "::102:304", "fe80::1",
        "1:2:3:4:5:6:7:8", "1:0:0:2::", "::1:0:0:1:0:0"}) {
    INFO(text);
    IpAddress a = Ip(text);
    CHECK(a.ToString() == text);
    CHECK(Ip(a.ToString()) == a);
  }
  // Non-canonical inputs round-trip through their canonical form.
  for (const char* text : {"2001:DB8:0:0::1", "0:0::0:1", "::FFFF:1.2.3.4",
                           "1:0::", "0000:0000:0000:0000:0000:0000:0000:0000", "::ffff:0:0"}) {
    INFO(text);
    IpAddress a = Ip(text);
    CHECK(Ip(a.ToString()) == a);
  }
}

TEST_CASE("Z-5 IPv4-mapped addresses unmap to IPv4") {
  IpAddress mapped = Ip("::ffff:10.1.2.3");
  CHECK(mapped.is_v6());
  CHECK(mapped.IsV4Mapped());
  CHECK(mapped.Unmapped() == Ip("10.1.2.3"));
  CHECK(mapped.Unmapped().is_v4());
  CHECK(mapped != Ip("10.1.2.3"));

  CHECK_FALSE(Ip("10.1.2.3").IsV4Mapped());
  CHECK(Ip("10.1.2.3").Unmapped() == Ip("10.1.2.3"));
  CHECK_FALSE(Ip("::1.2.3.4").IsV4Mapped());
  CHECK_FALSE(Ip("::fffe:1.2.3.4").IsV4Mapped());
  CHECK_FALSE(Ip("1::ffff:1.2.3.4").IsV4Mapped());
  CHECK_FALSE(Ip("64:ff9b::1.2.3.4").IsV4Mapped());
  CHECK(Ip("2001:db8::1").Unmapped() == Ip("2001:db8::1"));
  CHECK(Ip("::ffff:0.0.0.0").Unmapped() == Ip("0.0.0.0"));
}

TEST_CASE("address bits and bytes are most significant first") {
  IpAddress a = Ip("128.0.0.1");
  CHECK(a.bit_length() == 32);
  CHECK(a.Bit(0));
  CHECK_FALSE(a.Bit(1));
  CHECK(a.Bit(31));
  REQUIRE(a.bytes().size() == 4);
  CHECK(a.bytes()[0] == 128);
  CHECK(a.bytes()[3] == 1);

  IpAddress b = Ip("8000::1");
  CHECK(b.bit_length() == 128);
  CHECK(b.Bit(0));
  CHECK_FALSE(b.Bit(64));
  CHECK(b.Bit(127));
  REQUIRE(b.bytes().size() == 16);
  CHECK(b.bytes()[0] == 0x80);
  CHECK(b.bytes()[15] == 1);
}

TEST_CASE("addresses order IPv4 first, then numerically, and hash consistently") {
  CHECK(Ip("1.2.3.4") < Ip("1.2.3.5"));
  CHECK(Ip("9.255.255.255") < Ip("10.0.0.0"));
  CHECK(Ip("255.255.255.255") < Ip("::"));
  CHECK(Ip("::1") < Ip("::2"));
  CHECK(Ip("::ffff:1.2.3.4") > Ip("1.2.3.4"));
  CHECK(Ip("2001:db8::1") == Ip("2001:DB8:0::1"));
  CHECK(IpAddress() == Ip("0.0.0.0"));
  // 0.0.0.0 and :: differ although both are all-zero bytes.
  CHECK(Ip("0.0.0.0") != Ip("::"));

  std::hash<IpAddress> hash;
  CHECK(hash(Ip("2001:db8::1")) == hash(Ip("2001:db8:0:0::1")));
  std::unordered_set<IpAddress> set = {Ip("1.2.3.4"), Ip("::ffff:1.2.3.4"), Ip("0.0.0.0"), Ip("::"),
                                       Ip("1.2.3.4")};
  CHECK(set.size() == 4);
  CHECK(set.count(Ip("::FFFF:1.2.3.4")) == 1);
}

TEST_CASE("R-3 a client key is an IPv4 address or an IPv6 /64, mapped addresses as IPv4") {
  CHECK(IpAddress::ClientKey("2001:db8::1") == IpAddress::ClientKey("2001:db8::2"));
  CHECK(IpAddress::ClientKey("2001:db8:0:0:ffff::9") == IpAddress::ClientKey("2001:db8::1"));
  CHECK(IpAddress::ClientKey("2001:db8:0:1::1") != IpAddress::ClientKey("2001:db8::1"));
  CHECK(IpAddress::ClientKey("10.0.0.1") != IpAddress::ClientKey("10.0.0.2"));
  CHECK(IpAddress::ClientKey("::ffff:10.0.0.1") == IpAddress::ClientKey("10.0.0.1"));
  CHECK(IpAddress::ClientKey("10.0.0.1") != IpAddress::ClientKey("::a00:1"));  // family counts
  CHECK(IpAddress::ClientKey("?") == "?");
}

}  // namespace
}  // namespace meshwork::net
