// S-21: the upstreams a relayed stream pulls from, and how often central is asked for them.
#include "streamer/relay/upstream_list.h"

#include <catch2/catch.hpp>

namespace meshwork::streamer::relay {
namespace upstream_list_test {

using namespace std::chrono_literals;

TEST_CASE(
    "S-21 S-26 a lone upstream that fails at once does not make the relay ask central in a "
    "loop") {
  FakeClock clock;
  int asks = 0;
  std::vector<UpstreamNode> answer = {{"parent", "http://127.0.0.1:9", "office", ""}};
  UpstreamsFn fn = [&](const std::string&) -> absl::StatusOr<std::vector<UpstreamNode>> {
    ++asks;
    return answer;
  };
  UpstreamList list("s", &fn, clock);
  REQUIRE(list.Connect());
  CHECK(asks == 1);
  // The parent crashed: every try fails at once, as fast as a thread can loop.
  int tries = 0;
  for (int i = 0; i < 10'000; ++i) {
    if (!list.Connect()) continue;
    ++tries;
    list.Next(list.base_url());
  }
  CHECK(asks == 1);  // no time passed: central is not asked again
  CHECK(tries == 1);
  // Asked again once the interval passes; it doubles while central names only failed nodes.
  std::vector<int> asks_at;
  for (int ms = 0; ms < 3000; ms += 10) {
    clock.Advance(10ms);
    const int before = asks;
    if (list.Connect()) list.Next(list.base_url());
    if (asks != before) asks_at.push_back(ms + 10);
  }
  REQUIRE(asks_at.size() >= 5);
  CHECK(asks_at[0] == UpstreamList::kMinAskInterval.count());
  CHECK(asks_at[1] - asks_at[0] == 2 * UpstreamList::kMinAskInterval.count());
  CHECK(asks_at[2] - asks_at[1] == 4 * UpstreamList::kMinAskInterval.count());
  CHECK(asks_at[3] - asks_at[2] == UpstreamList::kMaxAskInterval.count());
  CHECK(asks_at[4] - asks_at[3] == UpstreamList::kMaxAskInterval.count());
  // Central names another node: asked for at the next ask, and the interval starts over.
  answer = {{"origin", "http://127.0.0.1:10", "hq", ""}};
  clock.Advance(UpstreamList::kMaxAskInterval);
  REQUIRE(list.Connect());
  CHECK(list.node_id() == "origin");
  list.Next(list.base_url());
  CHECK(!list.Connect());
  clock.Advance(UpstreamList::kMinAskInterval);
  CHECK(list.Connect());
}

}  // namespace upstream_list_test
}  // namespace meshwork::streamer::relay
