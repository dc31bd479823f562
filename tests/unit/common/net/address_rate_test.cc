#include "common/net/address_rate.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>
#include <vector>

namespace meshwork::net::address_rate_test {
namespace {

IpAddress Ip(const char* text) { return *IpAddress::Parse(text); }

// Events admitted for `client` in second `s` out of `tries`.
int Admitted(AddressRate& rate, const IpAddress& client, int64_t s, int tries) {
  int n = 0;
  for (int i = 0; i < tries; ++i) n += rate.Admit(client, s) ? 1 : 0;
  return n;
}

TEST_CASE("R-3 one client gets its allowance per second, and another client its own") {
  AddressRate rate(3);
  const IpAddress a = Ip("192.0.2.1"), b = Ip("192.0.2.2");
  REQUIRE(rate.SlotOf(a) != rate.SlotOf(b));
  CHECK(Admitted(rate, a, 100, 10) == 3);
  CHECK(Admitted(rate, b, 100, 10) == 3);  // a's refusals did not spend b's allowance
  CHECK(Admitted(rate, a, 101, 10) == 3);  // the next second starts afresh
  CHECK(Admitted(rate, a, 101, 1) == 0);
}

TEST_CASE("R-3 an IPv6 client is its /64, an IPv4-mapped address its IPv4 one") {
  AddressRate rate(2);
  CHECK(Admitted(rate, Ip("2001:db8:1:2::1"), 7, 1) == 1);
  CHECK(Admitted(rate, Ip("2001:db8:1:2:ffff::9"), 7, 5) == 1);  // same /64: one allowance
  CHECK(rate.SlotOf(Ip("2001:db8:1:3::1")) != rate.SlotOf(Ip("2001:db8:1:2::1")));
  CHECK(Admitted(rate, Ip("198.51.100.7"), 7, 1) == 1);
  CHECK(Admitted(rate, Ip("::ffff:198.51.100.7"), 7, 5) == 1);
}

TEST_CASE("R-3 clients admitted from many threads at once never exceed the allowance") {
  AddressRate rate(500);
  const IpAddress client = Ip("203.0.113.9");
  std::atomic<int> admitted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] { admitted += Admitted(rate, client, 42, 1000); });
  }
  for (auto& thread : threads) thread.join();
  CHECK(admitted == 500);
}

TEST_CASE("R-3 an allowance of zero is no limit") {
  AddressRate rate(0);
  CHECK(Admitted(rate, Ip("192.0.2.1"), 1, 1000) == 1000);
}

TEST_CASE("R-3 slots are keyed per process: two tables place clients differently") {
  AddressRate one(1), two(1);
  int same = 0;
  for (uint32_t i = 0; i < 64; ++i) {
    const IpAddress client = IpAddress::V4(0xc0000200 + i);
    same += one.SlotOf(client) == two.SlotOf(client) ? 1 : 0;
  }
  CHECK(same < 8);  // by chance about 64/4096 of them
}

}  // namespace
}  // namespace meshwork::net::address_rate_test
