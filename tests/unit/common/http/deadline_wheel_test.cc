#include "common/http/deadline_wheel.h"

#include <catch2/catch.hpp>
#include <memory>

namespace meshwork::http {
namespace {

using namespace std::chrono_literals;
using TimePoint = DeadlineWheel::TimePoint;

struct Conn : DeadlineWheel::Timed, std::enable_shared_from_this<Conn> {
  int fired = 0;
  void OnDeadline() override { ++fired; }
  std::weak_ptr<Timed> WeakTimed() override { return weak_from_this(); }
};

const TimePoint kOrigin = TimePoint() + 1000s;

TEST_CASE("R-3 a connection deadline never fires before it is due, and fires within a tick") {
  DeadlineWheel wheel(kOrigin, 100ms, 16);
  auto c = std::make_shared<Conn>();
  // Set late in a tick: rounding to the tick start must not make it early.
  TimePoint set = kOrigin + 1s + 99ms;
  wheel.Set(*c, set, 300ms);
  for (TimePoint t = set; t < set + 300ms; t += 1ms) wheel.Advance(t);
  CHECK(c->fired == 0);
  wheel.Advance(set + 300ms + 200ms);
  CHECK(c->fired == 1);
  wheel.Advance(set + 10s);
  CHECK(c->fired == 1);  // once
}

TEST_CASE("R-3 a deadline moved later is not fired at the old time, and costs no new entry") {
  DeadlineWheel wheel(kOrigin, 100ms, 16);
  auto c = std::make_shared<Conn>();
  TimePoint t = kOrigin;
  wheel.Set(*c, t, 1s);
  size_t entries = wheel.entries();
  // A busy connection: a new deadline on every read and write, always later.
  for (int i = 0; i < 50; ++i) {
    t += 100ms;
    wheel.Set(*c, t, 1s);
    wheel.Advance(t);
  }
  CHECK(c->fired == 0);
  CHECK(wheel.entries() <= entries + 1);
  wheel.Advance(t + 1s + 200ms);
  CHECK(c->fired == 1);
}

TEST_CASE("R-3 a deadline moved earlier fires at the earlier time") {
  DeadlineWheel wheel(kOrigin, 100ms, 64);
  auto c = std::make_shared<Conn>();
  wheel.Set(*c, kOrigin, 30s);    // idle
  wheel.Set(*c, kOrigin, 500ms);  // the first byte of a header came: the read timeout
  wheel.Advance(kOrigin + 400ms);
  CHECK(c->fired == 0);
  wheel.Advance(kOrigin + 800ms);
  CHECK(c->fired == 1);
  wheel.Advance(kOrigin + 40s);
  CHECK(c->fired == 1);  // the superseded 30 s entry is stale
}

TEST_CASE("R-3 a cleared deadline never fires") {
  DeadlineWheel wheel(kOrigin, 100ms, 16);
  auto c = std::make_shared<Conn>();
  wheel.Set(*c, kOrigin, 200ms);
  DeadlineWheel::Clear(*c);  // a handler is running: no deadline
  wheel.Advance(kOrigin + 5s);
  CHECK(c->fired == 0);
  CHECK(wheel.entries() == 0);
}

TEST_CASE("R-3 deadlines beyond the wheel's span wait for their round") {
  DeadlineWheel wheel(kOrigin, 100ms, 8);  // 800 ms span
  auto c = std::make_shared<Conn>();
  wheel.Set(*c, kOrigin, 3s);
  for (TimePoint t = kOrigin; t < kOrigin + 3s; t += 50ms) wheel.Advance(t);
  CHECK(c->fired == 0);
  wheel.Advance(kOrigin + 3s + 200ms);
  CHECK(c->fired == 1);
}

TEST_CASE("R-3 after a stall, every overdue deadline fires in one Advance") {
  DeadlineWheel wheel(kOrigin, 100ms, 8);
  std::vector<std::shared_ptr<Conn>> conns;
  for (int i = 0; i < 20; ++i) {
    conns.push_back(std::make_shared<Conn>());
    wheel.Set(*conns.back(), kOrigin, std::chrono::milliseconds(100 * i));
  }
  CHECK(wheel.Advance(kOrigin + 60s) == 20);
  for (auto& c : conns) CHECK(c->fired == 1);
  CHECK(wheel.entries() == 0);
}

TEST_CASE("R-3 a connection destroyed with its deadline set is simply forgotten") {
  DeadlineWheel wheel(kOrigin, 100ms, 16);
  auto c = std::make_shared<Conn>();
  wheel.Set(*c, kOrigin, 200ms);
  c.reset();
  CHECK(wheel.Advance(kOrigin + 1s) == 0);
  CHECK(wheel.entries() == 0);
}

TEST_CASE("R-3 a deadline set from inside OnDeadline is kept for a later Advance") {
  struct Rearm : DeadlineWheel::Timed, std::enable_shared_from_this<Rearm> {
    DeadlineWheel* wheel = nullptr;
    TimePoint now;
    int fired = 0;
    void OnDeadline() override {
      if (++fired == 1) wheel->Set(*this, now, 1s);
    }
    std::weak_ptr<Timed> WeakTimed() override { return weak_from_this(); }
  };
  DeadlineWheel wheel(kOrigin, 100ms, 16);
  auto c = std::make_shared<Rearm>();
  c->wheel = &wheel;
  c->now = kOrigin + 1s;
  wheel.Set(*c, kOrigin, 500ms);
  wheel.Advance(kOrigin + 1s);
  CHECK(c->fired == 1);
  wheel.Advance(kOrigin + 1s + 900ms);
  CHECK(c->fired == 1);
  wheel.Advance(kOrigin + 2s + 200ms);
  CHECK(c->fired == 2);
}

}  // namespace
}  // namespace meshwork::http
