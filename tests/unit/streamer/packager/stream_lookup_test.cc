// C-2, S-19: two per-request lookups of a viewer request (StreamManager::Find,
// Relay::Relays) read indexes that each thread caches; they must follow every Apply on every
// thread at once, and a thread's cache must never keep a removed pipeline alive. The store's
// own lookup is tested in tests/unit/streamer/store/lookup_store_test.cc, which also runs under
// TSan; the packager and relay libraries are not linked into the TSan binary.
#include <catch2/catch.hpp>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "streamer/packager/stream_manager.h"
#include "streamer/packager/stream_pipeline.h"
#include "streamer/relay/relay.h"
#include "streamer/store/origin_store.h"
#include "tests/unit/streamer/stream_configs.h"
#include "tests/unit/worker_thread.h"

namespace meshwork::streamer::stream_lookup_test {
namespace {

using nlohmann::json;

// Runs `f` on a new thread (empty caches) and returns its result.
template <typename F>
auto OnOtherThread(F f) {
  decltype(f()) result{};
  std::thread([&] { result = f(); }).join();
  return result;
}

TEST_CASE(
    "C-2 Find follows every Apply on every thread, and no thread's cache keeps a removed "
    "pipeline alive") {
  FakeClock clock;
  OriginStore store({}, clock);
  StreamManager manager(&store, clock);
  testing::WorkerThread worker;
  NodeConfig config;
  config.streams = Configs({{"ch1", json{{"inputs", {"publish://"}}}}});
  manager.Apply(config);
  std::weak_ptr<StreamPipeline> first = manager.Find("ch1");
  REQUIRE_FALSE(first.expired());
  CHECK(worker.Run([&] { return manager.Find("ch1") != nullptr; }));
  CHECK_FALSE(worker.Run([&] { return manager.Find("ch2") != nullptr; }));
  CHECK_FALSE(worker.Run([&] { return manager.Find("ch") != nullptr; }));  // whole names only

  config.streams = Configs({{"ch2", json{{"inputs", {"publish://"}}}}});
  manager.Apply(config);
  // Both threads read before the Apply, so both caches held the old index: neither may
  // answer from it, nor keep the removed pipeline alive.
  CHECK(first.expired());
  CHECK(manager.Find("ch1") == nullptr);
  CHECK(worker.Run([&] { return manager.Find("ch1") == nullptr; }));
  CHECK(worker.Run([&] { return manager.Find("ch2") != nullptr; }));
  CHECK(OnOtherThread([&] { return manager.Find("ch2") != nullptr; }));

  // A changed packaging replaces the pipeline: every thread finds the new one.
  std::weak_ptr<StreamPipeline> before = manager.Find("ch2");
  config.streams = Configs({{"ch2", json{{"inputs", {"publish://"}}, {"segment_ms", 4000}}}});
  manager.Apply(config);
  CHECK(before.expired());
  auto now = manager.Find("ch2");
  REQUIRE(now);
  CHECK(worker.Run([&] { return manager.Find("ch2") == now; }));
}

TEST_CASE(
    "M-3 a node that relays a stream (or is published into) refuses that stream's "
    "publishers") {
  FakeClock clock;
  OriginStore store({}, clock);
  StreamManager manager(&store, clock);
  NodeConfig config;
  config.streams = Configs({{"s", json{{"inputs", {"rtmp://", "publish://"}}}},
                            {"t", json{{"inputs", {"rtmp://", "publish://"}}}}});
  config.relayed = {"s"};
  config.publish_targets = {"t"};
  manager.Apply(config);
  for (const char* name : {"s", "t"}) {
    auto pipeline = manager.Find(name);
    REQUIRE(pipeline);
    CHECK(absl::IsNotFound(pipeline->BeginRtmp(false).status()));
    CHECK(absl::IsNotFound(pipeline->BeginPush(true).status()));
  }
  // The ingest moves here (the same settings, no longer relayed): publishers are taken, and
  // the other way round they are refused again.
  config.relayed.clear();
  manager.Apply(config);
  CHECK(manager.Find("s")->BeginRtmp(false).ok());
  config.relayed = {"s"};
  manager.Apply(config);
  CHECK(absl::IsNotFound(manager.Find("s")->BeginPush(false).status()));
}

TEST_CASE(
    "M-3 a stream whose packaging changes cuts off its live publishers, who reconnect to "
    "the new pipeline") {
  FakeClock clock;
  OriginStore store({}, clock);
  StreamManager manager(&store, clock);
  NodeConfig config;
  config.streams = Configs({{"s", json{{"inputs", {"rtmp://", "publish://"}}}}});
  manager.Apply(config);
  auto old = manager.Find("s");  // a connection holds its pipeline for its whole session
  auto rtmp = old->BeginRtmp(false);
  auto push = old->BeginPush(false);
  REQUIRE(rtmp.ok());
  REQUIRE(push.ok());
  config.streams =
      Configs({{"s", json{{"inputs", {"rtmp://", "publish://"}}, {"live_window", 12}}}});
  manager.Apply(config);
  CHECK(!old->PushTrack(*rtmp, media::TrackInfo{}));
  const uint8_t byte = 0x47;
  CHECK(!old->FeedPush(*push, std::span<const uint8_t>(&byte, 1)));
  CHECK(absl::IsUnavailable(old->BeginRtmp(false).status()));
  auto now = manager.Find("s");
  REQUIRE(now != old);
  CHECK(now->BeginRtmp(false).ok());  // no live publisher there: the reconnect is admitted
}

TEST_CASE("S-19 Relays follows Apply on every thread") {
  FakeClock clock;
  OriginStore store({}, clock);
  relay::Relay relay(
      {}, &store,
      [](const std::string&) {
        return absl::StatusOr<std::vector<relay::UpstreamNode>>(std::vector<relay::UpstreamNode>{});
      },
      clock, nullptr);
  testing::WorkerThread worker;
  CHECK_FALSE(relay.Relays("a"));
  CHECK_FALSE(worker.Run([&] { return relay.Relays("a"); }));
  relay.Apply({"a", "b"});
  CHECK(relay.Relays("a"));
  CHECK(worker.Run([&] { return relay.Relays("b"); }));
  relay.Apply({"b"});
  CHECK_FALSE(relay.Relays("a"));
  CHECK_FALSE(worker.Run([&] { return relay.Relays("a"); }));
  CHECK(worker.Run([&] { return relay.Relays("b"); }));
  CHECK(OnOtherThread([&] { return relay.Relays("b"); }));
}

}  // namespace
}  // namespace meshwork::streamer::stream_lookup_test
