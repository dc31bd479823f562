#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "common/net/cidr.h"
#include "common/net/ip_address.h"
#include "tests/unit/common/net/net_test_util.h"

namespace meshwork::net {
namespace {

using test::Ip;

using test::Net;

// The value found for `address`, or "-" for no match.
std::string Find(const PrefixTable<std::string>& table, std::string_view address) {
  const std::string* v = table.Lookup(Ip(address));
  return v == nullptr ? "-" : *v;
}

TEST_CASE("Z-5 the longest prefix wins across layered zones") {
  PrefixTable<std::string> table;
  CHECK(table.empty());
  CHECK(table.Insert(Net("0.0.0.0/0"), "world4"));
  CHECK(table.Insert(Net("10.0.0.0/8"), "corp"));
  CHECK(table.Insert(Net("10.1.0.0/16"), "site"));
  CHECK(table.Insert(Net("10.1.2.0/24"), "rack"));
  CHECK(table.Insert(Net("10.1.2.3/32"), "host"));
  CHECK(table.Insert(Net("::/0"), "world6"));
  CHECK(table.Insert(Net("2001:db8::/32"), "doc"));
  CHECK(table.Insert(Net("2001:db8:1::/48"), "doc1"));
  CHECK(table.Insert(Net("2001:db8:1::1/128"), "doc1host"));
  CHECK(table.size() == 9);

  CHECK(Find(table, "10.1.2.3") == "host");
  CHECK(Find(table, "10.1.2.4") == "rack");
  CHECK(Find(table, "10.1.3.4") == "site");
  CHECK(Find(table, "10.2.0.0") == "corp");
  CHECK(Find(table, "11.0.0.0") == "world4");
  CHECK(Find(table, "0.0.0.0") == "world4");
  CHECK(Find(table, "255.255.255.255") == "world4");
  CHECK(Find(table, "2001:db8:1::1") == "doc1host");
  CHECK(Find(table, "2001:db8:1::2") == "doc1");
  CHECK(Find(table, "2001:db8:2::") == "doc");
  CHECK(Find(table, "2001:db9::") == "world6");
  CHECK(Find(table, "::") == "world6");
  CHECK(Find(table, "::1.2.3.4") == "world6");
}

TEST_CASE("Z-5 the longest prefix wins whatever the insertion order") {
  std::vector<std::pair<std::string, std::string>> routes = {
      {"10.0.0.0/8", "8"},         {"10.128.0.0/9", "9"},
      {"10.1.0.0/16", "16"},       {"10.1.2.0/24", "24"},
      {"10.1.2.128/25", "25"},     {"10.1.2.3/32", "32"},
      {"0.0.0.0/1", "1"},          {"128.0.0.0/1", "1b"},
      {"2001:db8::/32", "v6-32"},  {"2001:db8:8000::/33", "v6-33"},
      {"2001:db8::/127", "v6-127"}};
  std::mt19937 rng(7);
  for (int round = 0; round < 20; ++round) {
    std::shuffle(routes.begin(), routes.end(), rng);
    PrefixTable<std::string> table;
    for (const auto& [cidr, name] : routes) CHECK(table.Insert(Net(cidr), name));
    CHECK(Find(table, "10.1.2.3") == "32");
    CHECK(Find(table, "10.1.2.200") == "25");
    CHECK(Find(table, "10.1.2.127") == "24");
    CHECK(Find(table, "10.1.3.0") == "16");
    CHECK(Find(table, "10.127.0.0") == "8");
    CHECK(Find(table, "10.128.0.0") == "9");
    CHECK(Find(table, "9.0.0.0") == "1");
    CHECK(Find(table, "200.0.0.0") == "1b");
    CHECK(Find(table, "2001:db8::1") == "v6-127");
    CHECK(Find(table, "2001:db8::2") == "v6-32");
    CHECK(Find(table, "2001:db8:ffff::") == "v6-33");
    CHECK(Find(table, "2001:db9::") == "-");
  }
}

TEST_CASE("Z-5 IPv4-mapped clients are looked up as IPv4") {
  PrefixTable<int> table;
  table.Insert(Net("10.0.0.0/8"), 4);
  table.Insert(Net("::/0"), 6);
  table.Insert(Net("::ffff:10.0.0.0/104"), 46);
  REQUIRE(table.Lookup(Ip("::ffff:10.1.2.3")) != nullptr);
  CHECK(*table.Lookup(Ip("::ffff:10.1.2.3")) == 4);
  CHECK(*table.Lookup(Ip("10.1.2.3")) == 4);
  // A mapped address outside every IPv4 route matches nothing (it is not tried as IPv6).
  CHECK(table.Lookup(Ip("::ffff:11.1.2.3")) == nullptr);
  CHECK(table.Lookup(Ip("11.1.2.3")) == nullptr);
  CHECK(*table.Lookup(Ip("2001:db8::1")) == 6);
}

TEST_CASE("Z-5 0.0.0.0/0 and ::/0 routes cover their family only") {
  PrefixTable<int> table;
  CHECK(table.Lookup(Ip("1.2.3.4")) == nullptr);
  CHECK(table.Insert(Net("0.0.0.0/0"), 4));
  CHECK(*table.Lookup(Ip("1.2.3.4")) == 4);
  CHECK(*table.Lookup(Ip("::ffff:1.2.3.4")) == 4);
  CHECK(*table.Lookup(Ip("0.0.0.0")) == 4);
  CHECK(table.Lookup(Ip("::1")) == nullptr);
  CHECK(table.Insert(Net("::/0"), 6));
  CHECK(*table.Lookup(Ip("::1")) == 6);
  CHECK(*table.Lookup(Ip("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")) == 6);
  CHECK(*table.Lookup(Ip("255.255.255.255")) == 4);
}

TEST_CASE("Z-2 a duplicate prefix is refused and keeps the first value") {
  PrefixTable<int> table;
  CHECK(table.Insert(Net("10.0.0.0/8"), 1));
  CHECK_FALSE(table.Insert(Net("10.0.0.0/8"), 2));
  CHECK(*table.Lookup(Ip("10.9.9.9")) == 1);
  // Same network, other lengths, and the other family's all-zero prefix are distinct.
  CHECK(table.Insert(Net("10.0.0.0/9"), 3));
  CHECK(table.Insert(Net("10.0.0.0/7"), 4));
  CHECK(table.Insert(Net("0.0.0.0/0"), 5));
  CHECK(table.Insert(Net("::/0"), 6));
  CHECK_FALSE(table.Insert(Net("0.0.0.0/0"), 7));
  CHECK_FALSE(table.Insert(Net("::/0"), 8));
  // A sibling below an existing node.
  CHECK(table.Insert(Net("10.128.0.0/9"), 9));
  // 12.0.0.0/8 and 13.0.0.0/8 create a value-less branch at 12.0.0.0/7; filling it later
  // works once.
  CHECK(table.Insert(Net("12.0.0.0/8"), 10));
  CHECK(table.Insert(Net("13.0.0.0/8"), 11));
  CHECK(table.Lookup(Ip("12.0.0.0")) != nullptr);
  CHECK(*table.Lookup(Ip("12.0.0.0")) == 10);
  CHECK(table.Insert(Net("12.0.0.0/7"), 12));
  CHECK_FALSE(table.Insert(Net("12.0.0.0/7"), 13));
  CHECK(table.size() == 9);
  CHECK(*table.Lookup(Ip("10.0.0.1")) == 3);
  CHECK(*table.Lookup(Ip("10.200.0.1")) == 9);
  CHECK(*table.Lookup(Ip("11.0.0.1")) == 4);
  CHECK(*table.Lookup(Ip("13.0.0.1")) == 11);
  CHECK(*table.Lookup(Ip("8.0.0.1")) == 5);
}

// A reference longest-prefix match by linear scan.
const int* BruteForce(const std::vector<std::pair<Cidr, int>>& routes, const IpAddress& a) {
  const std::pair<Cidr, int>* best = nullptr;
  IpAddress key = a.Unmapped();
  for (const auto& route : routes) {
    if (route.first.is_v4() != key.is_v4()) continue;
    if (!route.first.Contains(key)) continue;
    if (best == nullptr || route.first.prefix_length() > best->first.prefix_length()) {
      best = &route;
    }
  }
  return best == nullptr ? nullptr : &best->second;
}

Cidr RandomCidr(std::mt19937_64& rng, bool v6, int min_length, int max_length) {
  std::uniform_int_distribution<int> length_dist(min_length, max_length);
  int length = length_dist(rng);
  std::array<uint8_t, 16> bytes{};
  // Few distinct high bits so that prefixes nest and share paths.
  for (auto& b : bytes) b = static_cast<uint8_t>(rng() & (rng() & 1 ? 0x0f : 0xf0));
  IpAddress raw = v6 ? IpAddress::V6(bytes)
                     : IpAddress::V4((uint32_t{bytes[0]} << 24) | (uint32_t{bytes[1]} << 16) |
                                     (uint32_t{bytes[2]} << 8) | bytes[3]);
  int bits = raw.bit_length();
  std::array<uint8_t, 16> masked{};
  for (int i = 0; i < length; ++i) {
    if (raw.Bit(i)) masked[i / 8] |= static_cast<uint8_t>(0x80 >> (i % 8));
  }
  IpAddress network =
      bits == 128 ? IpAddress::V6(masked)
                  : IpAddress::V4((uint32_t{masked[0]} << 24) | (uint32_t{masked[1]} << 16) |
                                  (uint32_t{masked[2]} << 8) | masked[3]);
  absl::StatusOr<Cidr> c = Cidr::Create(network, length);
  REQUIRE(c.ok());
  return *c;
}

IpAddress RandomAddressNear(std::mt19937_64& rng, const Cidr& c) {
  std::array<uint8_t, 16> bytes{};
  std::span<const uint8_t> net = c.network().bytes();
  for (size_t i = 0; i < net.size(); ++i) bytes[i] = net[i];
  // Flip a few random bits, sometimes inside the prefix.
  int flips = static_cast<int>(rng() % 3);
  for (int f = 0; f < flips; ++f) {
    int bit = static_cast<int>(rng() % c.network().bit_length());
    bytes[bit / 8] ^= static_cast<uint8_t>(0x80 >> (bit % 8));
  }
  if (c.is_v4()) {
    IpAddress v4 = IpAddress::V4((uint32_t{bytes[0]} << 24) | (uint32_t{bytes[1]} << 16) |
                                 (uint32_t{bytes[2]} << 8) | bytes[3]);
    if (rng() & 1) return v4;
    std::array<uint8_t, 16> mapped{};
    mapped[10] = mapped[11] = 0xff;
    for (int i = 0; i < 4; ++i) mapped[12 + i] = bytes[i];
    return IpAddress::V6(mapped);
  }
  return IpAddress::V6(bytes);
}

TEST_CASE("Z-5 longest-prefix match agrees with a linear scan") {
  std::mt19937_64 rng(12345);
  for (int round = 0; round < 10; ++round) {
    PrefixTable<int> table;
    std::vector<std::pair<Cidr, int>> routes;
    for (int i = 0; i < 300; ++i) {
      bool v6 = rng() & 1;
      Cidr c = RandomCidr(rng, v6, 0, v6 ? 128 : 32);
      bool fresh =
          std::none_of(routes.begin(), routes.end(), [&](const auto& r) { return r.first == c; });
      CHECK(table.Insert(c, i) == fresh);
      if (fresh) routes.emplace_back(c, i);
    }
    CHECK(table.size() == routes.size());
    for (int q = 0; q < 2000; ++q) {
      const Cidr& near = routes[rng() % routes.size()].first;
      IpAddress a = RandomAddressNear(rng, near);
      const int* expected = BruteForce(routes, a);
      const int* got = table.Lookup(a);
      INFO(a.ToString());
      REQUIRE((expected == nullptr) == (got == nullptr));
      if (expected != nullptr) CHECK(*expected == *got);
    }
  }
}

TEST_CASE("Z-5 lookups stay fast with 100 000 prefixes") {
  std::mt19937_64 rng(99);
  PrefixTable<uint32_t> table;
  std::vector<Cidr> inserted;
  while (table.size() < 100000) {
    bool v6 = rng() % 4 == 0;
    std::array<uint8_t, 16> bytes{};
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    int length = v6 ? 24 + static_cast<int>(rng() % 41) : 8 + static_cast<int>(rng() % 25);
    IpAddress raw = v6 ? IpAddress::V6(bytes) : IpAddress::V4(static_cast<uint32_t>(rng()));
    std::array<uint8_t, 16> masked{};
    for (int i = 0; i < length; ++i) {
      if (raw.Bit(i)) masked[i / 8] |= static_cast<uint8_t>(0x80 >> (i % 8));
    }
    IpAddress network =
        v6 ? IpAddress::V6(masked)
           : IpAddress::V4((uint32_t{masked[0]} << 24) | (uint32_t{masked[1]} << 16) |
                           (uint32_t{masked[2]} << 8) | masked[3]);
    absl::StatusOr<Cidr> c = Cidr::Create(network, length);
    REQUIRE(c.ok());
    if (table.Insert(*c, static_cast<uint32_t>(table.size()))) inserted.push_back(*c);
  }
  // Every inserted network finds some value (its own or a longer one covering it).
  for (size_t i = 0; i < inserted.size(); i += 97) {
    CHECK(table.Lookup(inserted[i].network()) != nullptr);
  }
  std::vector<IpAddress> queries;
  for (int i = 0; i < 200000; ++i) {
    queries.push_back(RandomAddressNear(rng, inserted[rng() % inserted.size()]));
  }
  auto start = std::chrono::steady_clock::now();
  uint64_t found = 0;
  for (const IpAddress& q : queries) {
    const uint32_t* v = table.Lookup(q);
    if (v != nullptr) found += 1 + (*v & 1);
  }
  auto elapsed = std::chrono::steady_clock::now() - start;
  double ns_per_lookup = std::chrono::duration<double, std::nano>(elapsed).count() /
                         static_cast<double>(queries.size());
  INFO("ns per lookup: " << ns_per_lookup << " (found " << found << ")");
  CHECK(found > 0);
  // Generous bound so that sanitizer or unoptimised builds pass; typically ~300 ns at -O2.
  CHECK(ns_per_lookup < 2000);
}

}  // namespace
}  // namespace meshwork::net
