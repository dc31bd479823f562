// Hold-until-publish waiters (L-7, S-12, S-13, P-4): released by a publish on their own
// executor, exactly once, bounded, with deadlines of an injected clock. Deadlines are driven by
// hand (FakeClock::Advance, then Expire) unless a test is about the sweeper. This file runs
// under TSan too (tests/CMakeLists.txt: TSAN_TEST_FILE_PATTERNS).
#include <atomic>
#include <catch2/catch.hpp>
#include <optional>
#include <thread>
#include <vector>

#include "boost/asio/executor_work_guard.hpp"
#include "boost/asio/io_context.hpp"
#include "boost/asio/post.hpp"
#include "streamer/store/origin_store.h"
#include "tests/unit/streamer/stream_configs.h"

namespace meshwork::streamer {
namespace {

using namespace std::chrono_literals;
using Outcome = Waiters::Outcome;

// Runs what is ready on `io`. Without per-waiter timers nothing keeps an io_context busy, so
// each poll that empties it leaves it stopped: restart first.
size_t Drain(boost::asio::io_context& io) {
  io.restart();
  return io.poll();
}

// Waiters on a FakeClock whose deadlines fire only on Expire().
Waiters::Options Manual(const FakeClock& clock, size_t max_waiters = 20'000) {
  return Waiters::Options{.max_waiters = max_waiters, .clock = &clock, .sweep = false};
}

TEST_CASE("L-7 a held request is released exactly once when its object is published") {
  boost::asio::io_context io;
  FakeClock clock;
  Waiters waiters(Manual(clock, 10));
  std::vector<std::pair<int, Outcome>> fired;
  std::thread::id ran_on;
  auto deadline = clock.Monotonic() + 10s;
  for (int msn : {5, 6, 7}) {
    REQUIRE(waiters
                .Wait("s\nv1", Position{msn, -1}, io.get_executor(), deadline,
                      [&, msn](Outcome o) {
                        fired.emplace_back(msn, o);
                        ran_on = std::this_thread::get_id();
                      })
                .ok());
  }
  CHECK(waiters.size() == 3);
  // Publishing from another thread only posts: nothing runs until the executor does.
  std::thread([&] { waiters.Publish("s\nv1", Position{6, -1}); }).join();
  CHECK(fired.empty());
  CHECK(waiters.size() == 1);
  Drain(io);
  REQUIRE(fired.size() == 2);
  CHECK(fired[0] == std::make_pair(5, Outcome::kPublished));
  CHECK(fired[1] == std::make_pair(6, Outcome::kPublished));
  CHECK(ran_on == std::this_thread::get_id());
  // The same publish again, and the deadline passing, release nothing more.
  waiters.Publish("s\nv1", Position{6, -1});
  clock.Advance(11s);
  CHECK(waiters.Expire() == 1);  // msn 7 only
  Drain(io);
  REQUIRE(fired.size() == 3);
  CHECK(fired[2] == std::make_pair(7, Outcome::kDeadline));
  waiters.Publish("s\nv1", Position{9, -1});
  waiters.Remove("s\nv1");
  Drain(io);
  CHECK(fired.size() == 3);
  CHECK(waiters.size() == 0);
}

TEST_CASE("S-12 a held request past its deadline answers once with kDeadline under a fake clock") {
  boost::asio::io_context io;
  FakeClock clock;
  Waiters waiters(Manual(clock, 10));
  int calls = 0;
  Outcome outcome = Outcome::kPublished;
  REQUIRE(waiters
              .Wait("k", Position{1, 0}, io.get_executor(), clock.Monotonic() + 6s,
                    [&](Outcome o) {
                      ++calls;
                      outcome = o;
                    })
              .ok());
  clock.Advance(5999ms);
  CHECK(waiters.Expire() == 0);
  Drain(io);
  CHECK(calls == 0);
  clock.Advance(1ms);
  CHECK(waiters.Expire() == 1);
  CHECK(calls == 0);  // posted, not run inside Expire
  Drain(io);
  CHECK(calls == 1);
  CHECK(outcome == Outcome::kDeadline);
  CHECK(waiters.size() == 0);
  waiters.Publish("k", Position{9, -1});  // too late: nothing more happens
  clock.Advance(1h);
  CHECK(waiters.Expire() == 0);
  Drain(io);
  CHECK(calls == 1);
}

TEST_CASE("S-12 a deadline already passed at registration fires on the next expiry") {
  boost::asio::io_context io;
  FakeClock clock;
  Waiters waiters(Manual(clock));
  std::optional<Outcome> outcome;
  clock.Advance(3s);
  REQUIRE(waiters
              .Wait("k", Position{1, -1}, io.get_executor(), clock.Monotonic() - 1s,
                    [&](Outcome o) { outcome = o; })
              .ok());
  clock.Advance(10ms);
  CHECK(waiters.Expire() == 1);
  Drain(io);
  CHECK(outcome == Outcome::kDeadline);
}

TEST_CASE("S-12 deadlines more than one wheel lap away fire on time, not a lap early") {
  boost::asio::io_context io;
  FakeClock clock;
  Waiters waiters(Manual(clock));
  std::vector<int> fired;
  auto start = clock.Monotonic();
  // The wheel has 1024 slots of 10 ms (~10 s a lap).
  for (int s : {3, 13, 25, 61}) {
    REQUIRE(waiters
                .Wait("k", Position{1, -1}, io.get_executor(), start + std::chrono::seconds(s),
                      [&, s](Outcome o) {
                        CHECK(o == Outcome::kDeadline);
                        fired.push_back(s);
                      })
                .ok());
  }
  // Sweeps every 500 ms: each fires in the first sweep at or after its deadline.
  for (int step = 1; step <= 130; ++step) {
    clock.Advance(500ms);
    waiters.Expire();
    Drain(io);
    auto now_s = std::chrono::duration<double>(clock.Monotonic() - start).count();
    for (int s : fired) CHECK(s <= now_s);
    size_t due = 0;
    for (int s : {3, 13, 25, 61}) due += s <= now_s ? 1 : 0;
    CHECK(fired.size() == due);
  }
  CHECK(fired == std::vector<int>{3, 13, 25, 61});
}

TEST_CASE("S-12 held requests are capped per node") {
  boost::asio::io_context io;
  FakeClock clock;
  Waiters waiters(Manual(clock, 2));
  auto deadline = clock.Monotonic() + 10s;
  auto noop = [](Outcome) {};
  CHECK(waiters.Wait("k", {1, -1}, io.get_executor(), deadline, noop).ok());
  CHECK(waiters.Wait("k", {1, -1}, io.get_executor(), deadline, noop).ok());
  bool refused_ran = false;
  auto third =
      waiters.Wait("k", {1, -1}, io.get_executor(), deadline, [&](Outcome) { refused_ran = true; });
  CHECK(third.code() == absl::StatusCode::kResourceExhausted);
  waiters.Publish("k", {1, -1});
  Drain(io);
  CHECK_FALSE(refused_ran);
  CHECK(waiters.Wait("k", {2, -1}, io.get_executor(), deadline, noop).ok());
}

TEST_CASE("S-12 part positions: a part is reached by that part or a later one") {
  CHECK(Position{5, 2}.ReachedBy({5, 2}));
  CHECK(Position{5, 2}.ReachedBy({5, 3}));
  CHECK(Position{5, 2}.ReachedBy({5, -1}));  // the whole segment is complete
  CHECK(Position{5, 2}.ReachedBy({6, 0}));
  CHECK_FALSE(Position{5, 2}.ReachedBy({5, 1}));
  CHECK_FALSE(Position{5, -1}.ReachedBy({5, 3}));  // the segment is not complete yet
  CHECK(Position{5, -1}.ReachedBy({5, -1}));
  CHECK_FALSE(Position{5, -1}.ReachedBy({4, -1}));
}

TEST_CASE("S-12 a publish releases exactly the waiters its position reaches") {
  boost::asio::io_context io;
  FakeClock clock;
  Waiters waiters(Manual(clock));
  const std::vector<Position> positions = {{4, -1}, {5, 0}, {5, 1}, {5, 2}, {5, -1}, {6, 0}};
  std::vector<Position> released;
  for (Position p : positions) {
    REQUIRE(waiters
                .Wait("k", p, io.get_executor(), clock.Monotonic() + 10s,
                      [&, p](Outcome) { released.push_back(p); })
                .ok());
  }
  for (Position published : {Position{5, 1}, Position{5, -1}, Position{6, 3}}) {
    released.clear();
    size_t before = waiters.size();
    waiters.Publish("k", published);
    Drain(io);
    for (Position p : released) CHECK(p.ReachedBy(published));
    CHECK(waiters.size() == before - released.size());
  }
  CHECK(waiters.size() == 0);
}

TEST_CASE("P-4 10 000 waiters expire in linear time") {
  boost::asio::io_context io;
  FakeClock clock;
  constexpr int kN = 10'000;
  Waiters waiters(Manual(clock));
  int deadlines = 0;
  auto start = clock.Monotonic();
  SECTION("one deadline for all (one publish's worth of held requests)") {
    for (int i = 0; i < kN; ++i) {
      REQUIRE(waiters
                  .Wait("s\nv1", Position{100, i % 4}, io.get_executor(), start + 6s,
                        [&](Outcome o) { deadlines += o == Outcome::kDeadline; })
                  .ok());
    }
    clock.Advance(6s);
    CHECK(waiters.Expire() == kN);
    // Each waiter was looked at once: no scan per expired waiter.
    CHECK(waiters.expiry_checks() == kN);
  }
  SECTION("deadlines spread over 6 s, on many keys, swept every 10 ms") {
    for (int i = 0; i < kN; ++i) {
      auto deadline = start + std::chrono::microseconds(600 * i);  // 0 … 6 s
      REQUIRE(waiters
                  .Wait("s\nv" + std::to_string(i % 7), Position{i, -1}, io.get_executor(),
                        deadline, [&](Outcome o) { deadlines += o == Outcome::kDeadline; })
                  .ok());
    }
    for (int step = 0; step < 601; ++step) {
      clock.Advance(10ms);
      waiters.Expire();
    }
    CHECK(waiters.expiry_checks() == kN);
  }
  CHECK(waiters.size() == 0);
  Drain(io);
  CHECK(deadlines == kN);
}

TEST_CASE("P-4 one publish releases 10 000 held requests in slices of 16 per executor") {
  boost::asio::io_context a, b;
  FakeClock clock;
  Waiters waiters(Manual(clock));
  int released = 0;
  for (int i = 0; i < 10'000; ++i) {
    auto& io = i % 2 ? a : b;
    REQUIRE(waiters
                .Wait("s\nv1", Position{7, 3}, io.get_executor(), clock.Monotonic() + 6s,
                      [&](Outcome o) { released += o == Outcome::kPublished; })
                .ok());
  }
  waiters.Publish("s\nv1", Position{7, 3});
  CHECK(waiters.size() == 0);
  CHECK(a.poll_one() == 1);  // one handler runs one slice of this executor's 5 000
  CHECK(released == 16);
  CHECK(Drain(a) == (5'000 - 16 + 15) / 16);  // the other 4 984, 16 per handler
  CHECK(released == 5'000);
  CHECK(Drain(b) == (5'000 + 15) / 16);
  CHECK(released == 10'000);
}

TEST_CASE("P-13 a worker releasing many held requests runs other work between slices, in order") {
  boost::asio::io_context io;
  FakeClock clock;
  Waiters waiters(Manual(clock));
  std::vector<int> order;
  constexpr int kN = 100;
  for (int i = 0; i < kN; ++i) {
    REQUIRE(waiters
                .Wait("s\nv1", Position{7, 3}, io.get_executor(), clock.Monotonic() + 6s,
                      [&, i](Outcome) { order.push_back(i); })
                .ok());
  }
  waiters.Publish("s\nv1", Position{7, 3});
  CHECK(io.poll_one() == 1);
  CHECK(order.size() == 16);
  // Work that arrives now (a released viewer's next request, say) runs after the next slice,
  // not after all of them.
  size_t released_before_other_work = 0;
  boost::asio::post(io, [&] { released_before_other_work = order.size(); });
  Drain(io);
  CHECK(released_before_other_work == 32);
  REQUIRE(order.size() == kN);
  for (int i = 0; i < kN; ++i) CHECK(order[i] == i);  // registration order kept
}

TEST_CASE("L-7 a callback may hold again from inside itself (no lock is held)") {
  boost::asio::io_context io;
  FakeClock clock;
  Waiters waiters(Manual(clock));
  std::vector<int64_t> seen;
  std::function<void(int64_t)> hold = [&](int64_t msn) {
    REQUIRE(waiters
                .Wait("k", Position{msn, -1}, io.get_executor(), clock.Monotonic() + 6s,
                      [&, msn](Outcome o) {
                        if (o != Outcome::kPublished) return;
                        seen.push_back(msn);
                        waiters.Publish("other", Position{msn, -1});  // re-entry is fine
                        hold(msn + 1);
                      })
                .ok());
  };
  hold(1);
  for (int64_t msn = 1; msn <= 3; ++msn) {
    waiters.Publish("k", Position{msn, -1});
    Drain(io);
  }
  CHECK(seen == std::vector<int64_t>{1, 2, 3});
  CHECK(waiters.size() == 1);
}

TEST_CASE("L-7 removed keys answer kRemoved, and so does destruction") {
  boost::asio::io_context io;
  FakeClock clock;
  std::vector<Outcome> a, b, c;
  {
    Waiters waiters(Manual(clock));
    auto hold = [&](const std::string& key, std::vector<Outcome>& out) {
      REQUIRE(waiters
                  .Wait(key, Position{1, -1}, io.get_executor(), clock.Monotonic() + 6s,
                        [&out](Outcome o) { out.push_back(o); })
                  .ok());
    };
    hold("live/a\nv1", a);
    hold("live/a\nv2", a);
    hold("live/b\nv1", b);
    hold("other\nv1", c);
    waiters.RemovePrefix("live/");
    CHECK(waiters.size() == 1);
    Drain(io);
    CHECK(a == std::vector<Outcome>{Outcome::kRemoved, Outcome::kRemoved});
    CHECK(b == std::vector<Outcome>{Outcome::kRemoved});
    CHECK(c.empty());
  }
  Drain(io);
  CHECK(c == std::vector<Outcome>{Outcome::kRemoved});
}

TEST_CASE("S-12 the sweeper fires deadlines by itself, on the waiter's executor") {
  boost::asio::io_context io;
  FakeClock clock;
  Waiters waiters(Waiters::Options{.clock = &clock, .tick = 1ms});
  std::optional<Outcome> outcome;
  REQUIRE(waiters
              .Wait("k", Position{1, -1}, io.get_executor(), clock.Monotonic() + 6s,
                    [&](Outcome o) { outcome = o; })
              .ok());
  clock.Advance(6s);
  // run() returns once the sweeper has released the waiter and, with none left, stopped.
  io.run();
  CHECK(outcome == Outcome::kDeadline);
  CHECK(waiters.size() == 0);
  // The next wait starts a new sweeper.
  io.restart();
  outcome.reset();
  REQUIRE(waiters
              .Wait("k", Position{1, -1}, io.get_executor(), clock.Monotonic() + 1s,
                    [&](Outcome o) { outcome = o; })
              .ok());
  clock.Advance(1s);
  io.run();
  CHECK(outcome == Outcome::kDeadline);
}

TEST_CASE("L-7 concurrent waits, publishes, expiries and removals complete each waiter once") {
  FakeClock clock;
  constexpr int kExecutors = 3, kRegistrants = 3, kPerRegistrant = 3000, kKeys = 5;
  std::vector<std::unique_ptr<boost::asio::io_context>> ios;
  std::vector<std::thread> runners;
  using Guard = boost::asio::executor_work_guard<boost::asio::io_context::executor_type>;
  std::vector<Guard> guards;
  for (int i = 0; i < kExecutors; ++i) {
    ios.push_back(std::make_unique<boost::asio::io_context>(1));
    guards.emplace_back(ios.back()->get_executor());
  }
  for (auto& io : ios) runners.emplace_back([&io] { io->run(); });
  std::vector<std::atomic<int>> calls(kRegistrants * kPerRegistrant);
  std::atomic<int> refused{0};
  {
    Waiters waiters(Waiters::Options{.clock = &clock, .tick = 1ms});  // sweeper on, too
    std::atomic<bool> done{false};
    std::vector<std::thread> threads;
    for (int r = 0; r < kRegistrants; ++r) {
      threads.emplace_back([&, r] {
        for (int i = 0; i < kPerRegistrant; ++i) {
          int id = r * kPerRegistrant + i;
          auto& io = *ios[id % kExecutors];
          auto status = waiters.Wait("k" + std::to_string(id % kKeys), Position{id % 50, id % 4},
                                     io.get_executor(),
                                     clock.Monotonic() + std::chrono::milliseconds(id % 300),
                                     [&calls, id](Outcome) { calls[id].fetch_add(1); });
          if (!status.ok()) {
            refused.fetch_add(1);
            calls[id].fetch_add(1);
          }
        }
      });
    }
    threads.emplace_back([&] {
      for (int i = 0; !done.load(); ++i) {
        waiters.Publish("k" + std::to_string(i % kKeys), Position{i % 50, -1});
        if (i % 97 == 0) waiters.Remove("k" + std::to_string(i % kKeys));
      }
    });
    threads.emplace_back([&] {
      while (!done.load()) {
        clock.Advance(1ms);
        waiters.Expire();
      }
    });
    for (int r = 0; r < kRegistrants; ++r) threads[r].join();
    done.store(true);
    for (size_t t = kRegistrants; t < threads.size(); ++t) threads[t].join();
  }  // destruction releases the rest with kRemoved
  guards.clear();
  for (auto& t : runners) t.join();
  CHECK(refused.load() == 0);
  int wrong = 0;
  for (auto& c : calls) wrong += c.load() != 1;
  CHECK(wrong == 0);
}

// S-13 and the store's re-check (the one store: positions of a rendition).

RenditionInfo Info() {
  RenditionInfo info;
  info.name = "v1";
  return info;
}

OriginStore::Options HandExpiry() {
  OriginStore::Options options;
  options.sweep_waiters = false;
  return options;
}

// msn `msn` of the local packager's v1 (2 s segments on a wall-clock timeline).
void PublishSegment(OriginStore& store, const Clock& clock, int64_t msn) {
  auto timing = std::make_shared<MediaTiming>();
  timing->start = msn * 180'000;
  timing->duration = 180'000;
  timing->program_date_time_ms = UnixMillis(clock.Now()) - 2000;
  timing->timeline_origin = 0;
  REQUIRE(store
              .PublishLocal("ch1", Info(), ObjectKey{ObjectKey::kTs, msn, -1},
                            {std::make_shared<const std::string>(188, '\x47')}, timing)
              .ok());
}

void PublishPart(OriginStore& store, const Clock& clock, int64_t msn, int index) {
  auto timing = std::make_shared<MediaTiming>();
  timing->start = msn * 180'000 + index * 45'000;
  timing->duration = 45'000;
  timing->program_date_time_ms = UnixMillis(clock.Now()) - 500;
  REQUIRE(store
              .PublishLocal("ch1", Info(), ObjectKey{ObjectKey::kPart, msn, index},
                            {std::make_shared<const std::string>(100, 'p')}, timing)
              .ok());
}

TEST_CASE("L-7 the store releases a waiter when the segment is published") {
  boost::asio::io_context io;
  FakeClock clock;
  OriginStore store(HandExpiry(), clock);
  store.Apply(Configs({{"ch1", {{"segment_ms", 2000}}}}));
  bool released = false;
  REQUIRE(
      store
          .WaitPosition("ch1", "v1", Position{10, -1}, io.get_executor(), clock.Monotonic() + 10s,
                        [&](Waiters::Outcome o) { released = o == Waiters::Outcome::kPublished; })
          .ok());
  PublishSegment(store, clock, 10);
  Drain(io);
  CHECK(released);
  CHECK(store.waiting() == 0);
}

TEST_CASE("S-13 a wait registered right after a part publish is released") {
  boost::asio::io_context io;
  FakeClock clock;
  OriginStore store(HandExpiry(), clock);
  store.Apply(Configs({{"ch1", {{"segment_ms", 2000}}}}));
  PublishSegment(store, clock, 9);
  // The caller looked before this part was published, then registers for it.
  PublishPart(store, clock, 10, 0);
  std::optional<Waiters::Outcome> outcome;
  REQUIRE(store
              .WaitPosition("ch1", "v1", Position{10, 0}, io.get_executor(), clock.Monotonic() + 6s,
                            [&](Waiters::Outcome o) { outcome = o; })
              .ok());
  Drain(io);
  CHECK(outcome == Waiters::Outcome::kPublished);
  CHECK(store.waiting() == 0);
  // The next part is not published yet: that one is held.
  outcome.reset();
  REQUIRE(store
              .WaitPosition("ch1", "v1", Position{10, 1}, io.get_executor(), clock.Monotonic() + 6s,
                            [&](Waiters::Outcome o) { outcome = o; })
              .ok());
  Drain(io);
  CHECK_FALSE(outcome);
  CHECK(store.waiting() == 1);
  clock.Advance(6s);
  CHECK(store.ExpireWaiters() == 1);
  Drain(io);
  CHECK(outcome == Waiters::Outcome::kDeadline);
}

TEST_CASE("L-7 a stream's removal answers its held requests with kRemoved") {
  boost::asio::io_context io;
  FakeClock clock;
  OriginStore store(HandExpiry(), clock);
  store.Apply(Configs({{"ch1", {{"segment_ms", 2000}}}}));
  PublishSegment(store, clock, 1);
  std::optional<Waiters::Outcome> outcome;
  REQUIRE(store
              .WaitPosition("ch1", "v1", Position{2, -1}, io.get_executor(), clock.Monotonic() + 6s,
                            [&](Waiters::Outcome o) { outcome = o; })
              .ok());
  store.Apply({});
  Drain(io);
  CHECK(outcome == Waiters::Outcome::kRemoved);
  CHECK(store.waiting() == 0);
}

}  // namespace
}  // namespace meshwork::streamer
