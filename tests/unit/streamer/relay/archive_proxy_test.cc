// D-3 S-19 R-3: an edge's archive proxy against a real upstream HTTP server on loopback: its
// cache is bounded by what entries really hold, not by their bodies alone.
#include "streamer/relay/archive_proxy.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/time/clock.h"
#include "tests/unit/common/http/server_test_util.h"

namespace meshwork::streamer::relay {
namespace archive_proxy_test {
namespace {

using namespace std::chrono_literals;

// The answers given so far (by the proxy's threads), and a wait for a count of them.
struct Answered {
  absl::Mutex mu;
  int count ABSL_GUARDED_BY(mu) = 0;
  bool WaitFor(int n, absl::Duration timeout) {
    absl::MutexLock lock(&mu);
    auto reached = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return count >= n; };
    return mu.AwaitWithTimeout(absl::Condition(&reached), timeout);
  }
};

class CountingSink final : public http::Responder::Sink {
 public:
  explicit CountingSink(Answered* answered) : answered_(answered) {}
  void Complete(http::Response) override {
    absl::MutexLock lock(&answered_->mu);
    ++answered_->count;
  }

 private:
  Answered* answered_;
};

TEST_CASE("R-3 D-3 many cached 404s for made-up paths stay within the cache's bytes") {
  // The upstream: 404 with a minute of max-age for anything.
  http::Router router;
  router.Add({http::Verb::get}, "/{path...}", [](http::RequestContext&, http::Responder r) {
    http::Response res = http::MakeResponse(http::Status::not_found, "{}", "application/json");
    res.set(http::beast_http::field::cache_control, "max-age=60");
    r.Send(std::move(res));
  });
  http::ServerOptions upstream_options = http::test::SmallOptions();
  upstream_options.header_limit_bytes = 16 << 10;  // the long paths below
  auto upstream = http::test::StartServer(upstream_options, std::move(router));
  const std::string base = "http://127.0.0.1:" + std::to_string(upstream->port());

  ArchiveProxyOptions options;
  options.max_cache_bytes = 64 << 10;
  FakeClock clock;
  ArchiveProxy proxy(
      options,
      [base](const std::string&) -> absl::StatusOr<std::vector<UpstreamNode>> {
        return std::vector<UpstreamNode>{UpstreamNode{"up-1", base, "", ""}};
      },
      clock, nullptr);
  Answered answered;
  constexpr int kPaths = 400;
  const std::string filler(1000, 'x');
  for (int i = 0; i < kPaths; ++i) {
    const std::string path = "/news/" + filler + std::to_string(i) + "/dvr-1-2.ts";
    http::Request request{http::beast_http::verb::get, path, 11};
    proxy.Serve("news", request, path, http::Responder(std::make_shared<CountingSink>(&answered)));
    // A few fetches at a time (the proxy refuses past max_fetches).
    REQUIRE(answered.WaitFor(i - 8, absl::Seconds(10)));
  }
  REQUIRE(answered.WaitFor(kPaths, absl::Seconds(20)));
  CHECK(proxy.cached_bytes() <= options.max_cache_bytes);
  // Each entry holds its ~1 KiB path twice and more: far fewer than 400 fit in 64 KiB.
  CHECK(proxy.cached_entries() > 0);
  CHECK(proxy.cached_entries() <= 32);
}

}  // namespace
}  // namespace archive_proxy_test
}  // namespace meshwork::streamer::relay
