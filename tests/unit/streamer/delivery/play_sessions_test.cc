#include "streamer/delivery/play_sessions.h"

#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/common/net/net_test_util.h"

namespace meshwork::streamer {
namespace {

using namespace std::chrono_literals;

using net::test::Ip;

TEST_CASE("S-18 a viewer is counted once per stream and protocol while it keeps requesting") {
  FakeClock clock;
  PlaySessions sessions(clock);
  for (int i = 0; i < 5; ++i) {  // one player reloading its playlist
    sessions.Touch("ch1", "hls", Ip("10.0.0.1"), "hls.js", 4s);
    clock.Advance(1s);
  }
  sessions.Touch("ch1", "hls", Ip("10.0.0.2"), "hls.js", 4s);
  sessions.Touch("ch1", "dash", Ip("10.0.0.1"), "dash.js", 4s);
  sessions.Touch("ch2", "hls", Ip("10.0.0.1"), "hls.js", 4s);
  // Two players behind one address are two viewers.
  sessions.Touch("ch1", "hls", Ip("10.0.0.2"), "AppleCoreMedia", 4s);
  auto counts = sessions.Count();
  CHECK(counts.total == 5);
  CHECK(counts.by_stream["ch1"] == 4);
  CHECK(counts.by_stream["ch2"] == 1);
  CHECK(counts.by_stream_protocol[{"ch1", "hls"}] == 3);
  CHECK(counts.by_stream_protocol[{"ch1", "dash"}] == 1);
}

TEST_CASE("S-18 objects both CMAF protocols fetch keep a viewer active but make none") {
  FakeClock clock;
  PlaySessions sessions(clock);
  sessions.Touch("ch1", "", Ip("10.0.0.9"), "init-only", 4s);
  CHECK(sessions.Count().total == 0);
  sessions.Touch("ch1", "dash", Ip("10.0.0.1"), "dash.js", 4s);
  clock.Advance(3s);
  sessions.Touch("ch1", "", Ip("10.0.0.1"), "dash.js", 4s);  // a segment keeps it active
  clock.Advance(3s);
  auto counts = sessions.Count();
  CHECK(counts.total == 1);
  CHECK(counts.by_stream_protocol[{"ch1", "dash"}] == 1);
  // The same player reloading another protocol's playlist moves, it is not counted twice.
  sessions.Touch("ch1", "ll-hls", Ip("10.0.0.1"), "dash.js", 4s);
  counts = sessions.Count();
  CHECK(counts.total == 1);
  CHECK(counts.by_stream_protocol.count({"ch1", "dash"}) == 0);
  CHECK(counts.by_stream_protocol[{"ch1", "ll-hls"}] == 1);
}

TEST_CASE("S-18 a viewer that stops requesting is forgotten after its window") {
  FakeClock clock;
  PlaySessions sessions(clock);
  sessions.Touch("ch1", "hls", Ip("10.0.0.1"), "a", 4s);
  sessions.Touch("ch1", "hls", Ip("10.0.0.2"), "a", 4s);
  clock.Advance(3s);
  sessions.Touch("ch1", "hls", Ip("10.0.0.2"), "a", 4s);  // still watching
  clock.Advance(2s);
  auto counts = sessions.Count();
  CHECK(counts.total == 1);
  clock.Advance(5s);
  CHECK(sessions.Count().total == 0);
  CHECK(sessions.Count().by_stream.empty());
}

TEST_CASE("S-18 viewers touched from many threads are all counted") {
  FakeClock clock;
  PlaySessions sessions(clock);
  // The addresses are made here: Catch's assertions are not for other threads.
  std::vector<std::vector<net::IpAddress>> ips(4);
  for (int t = 0; t < 4; ++t) {
    for (int i = 0; i < 250; ++i) {
      ips[t].push_back(Ip("10.0." + std::to_string(t) + "." + std::to_string(i)));
    }
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        sessions.Touch("ch1", "hls", ips[t][i % 250], "ua" + std::to_string(i / 250), 10s);
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(sessions.Count().total == 2000);
}

TEST_CASE(
    "A-8 a login holds at most its limit of active sessions on this node, and a "
    "session ends two target durations after its last request") {
  FakeClock clock;
  PlaySessions sessions(clock);
  using T = PlaySessions::Touched;
  const PlayLogin alice{"alice", 2};
  CHECK(sessions.Touch("ch1", "hls", Ip("10.0.0.1"), "hls.js", 4s, alice) == T::kNew);
  CHECK(sessions.Touch("ch2", "dash", Ip("10.0.0.2"), "dash.js", 4s, alice) == T::kNew);
  // The third session of the login is refused and not tracked; its known ones go on.
  CHECK(sessions.Touch("ch1", "hls", Ip("10.0.0.3"), "hls.js", 4s, alice) == T::kOverLimit);
  CHECK(sessions.Touch("ch1", "hls", Ip("10.0.0.1"), "hls.js", 4s, alice) == T::kKnown);
  CHECK(sessions.Touch("ch1", "", Ip("10.0.0.3"), "hls.js", 4s, alice) == T::kKnown);
  CHECK(sessions.SessionsOf("alice") == 2);
  // Another login is counted apart.
  CHECK(sessions.Touch("ch1", "hls", Ip("10.0.0.3"), "hls.js", 4s, {"bob", 2}) == T::kNew);
  auto counts = sessions.Count();
  CHECK(counts.total == 3);
  REQUIRE(counts.sessions.size() == 3);
  CHECK(counts.sessions[0].login.size() > 0);
  // ch2's session ends when its window passes without a request: a new one may start.
  clock.Advance(3s);
  sessions.Touch("ch1", "hls", Ip("10.0.0.1"), "hls.js", 4s, alice);
  clock.Advance(2s);
  CHECK(sessions.SessionsOf("alice") == 1);
  CHECK(sessions.Touch("ch1", "ll-hls", Ip("10.0.0.4"), "hls.js", 4s, alice) == T::kNew);
  CHECK(sessions.Touch("ch1", "ll-hls", Ip("10.0.0.5"), "hls.js", 4s, alice) == T::kOverLimit);
  // No limit: every session counted under the login.
  for (int i = 0; i < 5; ++i) {
    CHECK(sessions.Touch("ch1", "hls", Ip("10.0.1." + std::to_string(i)), "x", 4s, {"carol", 0}) ==
          T::kNew);
  }
  CHECK(sessions.SessionsOf("carol") == 5);
  clock.Advance(10s);
  CHECK(sessions.Count().total == 0);
  CHECK(sessions.SessionsOf("carol") == 0);
}

TEST_CASE("A-8 a session that ended, or a player under another login, counts as a new one") {
  FakeClock clock;
  PlaySessions sessions(clock);
  using T = PlaySessions::Touched;
  const PlayLogin alice{"alice", 1};
  CHECK(sessions.Touch("ch1", "hls", Ip("10.0.0.1"), "hls.js", 10s, alice) == T::kNew);
  clock.Advance(11s);  // ended, and nothing swept it (no Count: central may be away)
  CHECK(sessions.Touch("ch1", "hls", Ip("10.0.0.2"), "hls.js", 10s, alice) == T::kNew);
  // The first player coming back is alice's second session: over her limit.
  CHECK(sessions.Touch("ch1", "hls", Ip("10.0.0.1"), "hls.js", 10s, alice) == T::kOverLimit);
  CHECK(sessions.SessionsOf("alice") == 1);
  // The same player under bob's login is bob's session, not alice's.
  CHECK(sessions.Touch("ch1", "hls", Ip("10.0.0.2"), "hls.js", 10s, {"bob", 1}) == T::kNew);
  CHECK(sessions.SessionsOf("bob") == 1);
  CHECK(sessions.SessionsOf("alice") == 0);
  CHECK(sessions.Touch("ch1", "hls", Ip("10.0.0.1"), "hls.js", 10s, alice) == T::kNew);
  // A request that names no protocol (an init, a CMAF part) from an ended session: counted
  // again under the protocol it had.
  clock.Advance(11s);
  CHECK(sessions.Touch("ch1", "", Ip("10.0.0.1"), "hls.js", 10s, alice) == T::kNew);
  auto counts = sessions.Count();
  REQUIRE(counts.sessions.size() == 1);
  CHECK(counts.sessions[0].protocol == "hls");
}

}  // namespace
}  // namespace meshwork::streamer
