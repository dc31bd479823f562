// C-2, S-19: the per-request lookups of a viewer request (StreamManager::Find, the store's
// View, Relay::Relays) read indexes that each thread caches; they must follow every Apply on
// every thread at once, and a thread's cache must never keep a removed stream alive.
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

// A thread that runs the given checks one at a time and keeps its thread_local caches
// between them, as an HTTP worker does between requests.
class Worker {
 public:
  template <typename F>
  auto Run(F f) {
    decltype(f()) result{};
    {
      absl::MutexLock lock(&mu_);
      task_ = [&] { result = f(); };
    }
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](std::function<void()>* t) { return !*t; }, &task_));
    return result;
  }
  ~Worker() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    thread_.join();
  }

 private:
  void Loop() {
    for (;;) {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &Worker::HasWork));
      if (stop_) return;
      task_();
      task_ = nullptr;
    }
  }
  bool HasWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || task_ != nullptr; }

  absl::Mutex mu_;
  std::function<void()> task_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_{[this] { Loop(); }};
};

TEST_CASE(
    "C-2 Find follows every Apply on every thread; no thread's cache keeps a removed "
    "pipeline alive") {
  FakeClock clock;
  OriginStore store({}, clock);
  StreamManager manager(&store, clock);
  Worker worker;
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
    "C-2 the store's View follows Apply on every thread; a removed stream's view is "
    "released") {
  FakeClock clock;
  OriginStore store({}, clock);
  Worker worker;
  store.Apply(Configs({{"a", json{{"inputs", {"publish://"}}}}}));
  std::weak_ptr<const OriginStreamView> view = store.View("a");
  REQUIRE_FALSE(view.expired());
  CHECK(worker.Run([&] { return store.View("a") != nullptr; }));
  CHECK(worker.Run([&] { return store.View("b") == nullptr; }));

  store.Apply(Configs({{"b", json{{"inputs", {"publish://"}}}}}));
  CHECK(store.View("a") == nullptr);
  CHECK(worker.Run([&] { return store.View("a") == nullptr; }));
  CHECK(worker.Run([&] { return store.View("b") != nullptr; }));
  CHECK(OnOtherThread([&] { return store.View("b") != nullptr; }));
  CHECK(view.expired());
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
  Worker worker;
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
