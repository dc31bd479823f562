// Hold-until-publish waiters (L-7, S-12, S-13): released by a publish on their own executor,
// bounded, with deadlines.
#include <catch2/catch.hpp>
#include <thread>

#include "boost/asio/io_context.hpp"
#include "streamer/store/segment_store.h"

namespace meshwork::streamer {
namespace {

using namespace std::chrono_literals;
using Outcome = Waiters::Outcome;

TEST_CASE("L-7 a held request is released by the publish it waits for, on its own executor") {
  boost::asio::io_context io;
  Waiters waiters(10);
  std::vector<std::pair<int, Outcome>> fired;
  std::thread::id ran_on;
  auto deadline = std::chrono::steady_clock::now() + 10s;
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
  io.poll();
  REQUIRE(fired.size() == 2);
  CHECK(fired[0] == std::make_pair(5, Outcome::kPublished));
  CHECK(fired[1] == std::make_pair(6, Outcome::kPublished));
  CHECK(ran_on == std::this_thread::get_id());
  CHECK(waiters.size() == 1);
  waiters.Remove("s\nv1");
  io.poll();
  REQUIRE(fired.size() == 3);
  CHECK(fired[2] == std::make_pair(7, Outcome::kRemoved));
}

TEST_CASE("S-12 a held request past its deadline completes once, as a deadline") {
  boost::asio::io_context io;
  Waiters waiters(10);
  int calls = 0;
  Outcome outcome = Outcome::kPublished;
  REQUIRE(waiters
              .Wait("k", Position{1, 0}, io.get_executor(), std::chrono::steady_clock::now() + 20ms,
                    [&](Outcome o) {
                      ++calls;
                      outcome = o;
                    })
              .ok());
  io.run_one();  // the timer
  io.poll();
  CHECK(calls == 1);
  CHECK(outcome == Outcome::kDeadline);
  CHECK(waiters.size() == 0);
  waiters.Publish("k", Position{9, -1});  // too late: nothing more happens
  io.poll();
  CHECK(calls == 1);
}

TEST_CASE("S-12 held requests are capped per node") {
  boost::asio::io_context io;
  Waiters waiters(2);
  auto deadline = std::chrono::steady_clock::now() + 10s;
  auto noop = [](Outcome) {};
  CHECK(waiters.Wait("k", {1, -1}, io.get_executor(), deadline, noop).ok());
  CHECK(waiters.Wait("k", {1, -1}, io.get_executor(), deadline, noop).ok());
  auto third = waiters.Wait("k", {1, -1}, io.get_executor(), deadline, noop);
  CHECK(third.code() == absl::StatusCode::kResourceExhausted);
  waiters.Publish("k", {1, -1});
  io.poll();
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

TEST_CASE("L-7 the store releases a waiter when the segment is published") {
  boost::asio::io_context io;
  SegmentStore store;
  bool released = false;
  REQUIRE(store
              .Wait("ch1", "v1", Position{10, -1}, io.get_executor(),
                    std::chrono::steady_clock::now() + 10s,
                    [&](Waiters::Outcome o) { released = o == Waiters::Outcome::kPublished; })
              .ok());
  RenditionInfo info;
  info.name = "v1";
  auto segment = std::make_shared<Segment>();
  segment->msn = 10;
  segment->duration = 180000;
  segment->ts = std::make_shared<const std::string>(188, '\x47');
  store.Publish("ch1", info, segment, 0);
  io.poll();
  CHECK(released);
  CHECK(store.waiting() == 0);
}

}  // namespace
}  // namespace meshwork::streamer
