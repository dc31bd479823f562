// AddressCount: open connections per client, exact.
#include "common/net/address_count.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <latch>
#include <thread>
#include <vector>

namespace meshwork::net::address_count_test {
namespace {

IpAddress Ip(const char* text) { return *IpAddress::Parse(text); }

TEST_CASE("R-3 a client holds at most its limit of places, and a ticket's end gives one back") {
  AddressCount count(2);
  AddressCount::Ticket a, b, c;
  CHECK(count.Acquire(Ip("192.0.2.1"), &a));
  CHECK(count.Acquire(Ip("192.0.2.1"), &b));
  CHECK_FALSE(count.Acquire(Ip("192.0.2.1"), &c));
  CHECK(count.Count(Ip("192.0.2.1")) == 2);
  // Another client is not affected.
  AddressCount::Ticket other;
  CHECK(count.Acquire(Ip("192.0.2.2"), &other));
  CHECK(count.Clients() == 2);

  a = AddressCount::Ticket();  // released
  CHECK(count.Count(Ip("192.0.2.1")) == 1);
  CHECK(count.Acquire(Ip("192.0.2.1"), &c));
  {
    AddressCount::Ticket moved = std::move(c);  // moving keeps one place, not two
    CHECK(count.Count(Ip("192.0.2.1")) == 2);
  }
  CHECK(count.Count(Ip("192.0.2.1")) == 1);
  b = AddressCount::Ticket();
  other = AddressCount::Ticket();
  CHECK(count.Clients() == 0);  // nothing kept for clients gone
}

TEST_CASE("R-3 an IPv6 /64 is one client and an IPv4-mapped address is its IPv4 address") {
  AddressCount count(1);
  AddressCount::Ticket a, b, c, d;
  CHECK(count.Acquire(Ip("2001:db8:1:2::1"), &a));
  CHECK_FALSE(count.Acquire(Ip("2001:db8:1:2:ffff::9"), &b));  // the same /64
  CHECK(count.Acquire(Ip("2001:db8:1:3::1"), &b));             // the next /64
  CHECK(count.Acquire(Ip("198.51.100.7"), &c));
  CHECK_FALSE(count.Acquire(Ip("::ffff:198.51.100.7"), &d));
  // An IPv6 /64 whose 64 bits have the IPv4 address's value (0xc6336407) is another client.
  CHECK(count.Acquire(Ip("0:0:c633:6407::1"), &d));
}

TEST_CASE("R-3 without a limit nothing is counted") {
  AddressCount count(0);
  std::vector<AddressCount::Ticket> tickets(100);
  for (auto& t : tickets) CHECK(count.Acquire(Ip("192.0.2.1"), &t));
  CHECK(count.Count(Ip("192.0.2.1")) == 0);
  CHECK(count.Clients() == 0);
}

TEST_CASE("R-3 places taken and given back from many threads never exceed the limit") {
  // Four threads of one client each try to hold five places at once against a limit of 4
  // (so each is refused some even when it runs alone), starting together: they contend for
  // the last places, and no more than 4 may ever be held.
  constexpr uint32_t kLimit = 4;
  AddressCount count(kLimit);
  const IpAddress client = IpAddress::V4(0xc0000201u);
  std::atomic<int> held{0};
  std::atomic<int> most{0};
  std::atomic<int> refused{0};
  std::latch start(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      start.arrive_and_wait();
      for (int round = 0; round < 2000; ++round) {
        std::vector<AddressCount::Ticket> mine(5);
        int got = 0;
        for (auto& ticket : mine) {
          if (!count.Acquire(client, &ticket)) {
            refused.fetch_add(1);
            continue;
          }
          ++got;
          int now = held.fetch_add(1) + 1;
          int seen = most.load();
          while (now > seen && !most.compare_exchange_weak(seen, now)) {
          }
        }
        held.fetch_sub(got);  // before the tickets go: `held` never undercounts the places
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(most.load() <= static_cast<int>(kLimit));
  CHECK(refused.load() >= 2000);  // at least once a round per thread
  CHECK(count.Clients() == 0);
}

}  // namespace
}  // namespace meshwork::net::address_count_test
