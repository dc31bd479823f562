// C-2: a request finds its stream in the store through an index each thread caches
// (OriginStore::SlotOf); the index must follow every Apply on every thread at once, and no
// thread's cache may keep a removed stream alive. Threads: also run under TSan.
#include <catch2/catch.hpp>
#include <memory>
#include <thread>

#include "streamer/store/origin_store.h"
#include "tests/unit/streamer/stream_configs.h"
#include "tests/unit/worker_thread.h"

namespace meshwork::streamer::lookup_store_test {
namespace {

using nlohmann::json;

TEST_CASE(
    "C-2 the store's View follows Apply on every thread, and no thread's cache keeps a "
    "removed stream alive") {
  FakeClock clock;
  OriginStore store({}, clock);
  testing::WorkerThread worker;
  const json object{{"inputs", {"publish://"}}};
  store.Apply(Configs({{"a", object}}));
  std::weak_ptr<const OriginStreamView> view = store.View("a");
  REQUIRE_FALSE(view.expired());
  CHECK(worker.Run([&] { return store.View("a") != nullptr; }));
  CHECK(worker.Run([&] { return store.View("b") == nullptr; }));

  store.Apply(Configs({{"b", object}}));
  // The worker read before this Apply: its cache still holds the old index, which must not
  // keep stream "a" (its slot and view) alive.
  CHECK(view.expired());
  CHECK(store.View("a") == nullptr);
  CHECK(worker.Run([&] { return store.View("a") == nullptr; }));
  CHECK(worker.Run([&] { return store.View("b") != nullptr; }));
  bool fresh_thread_sees_b = false;
  std::thread([&] { fresh_thread_sees_b = store.View("b") != nullptr; }).join();
  CHECK(fresh_thread_sees_b);

  // Several streams added by one Apply are all found, on every thread.
  store.Apply(Configs({{"b", object}, {"c", object}, {"d", object}}));
  CHECK(worker.Run(
      [&] { return store.View("b") && store.View("c") && store.View("d") && !store.View("a"); }));
  CHECK((store.View("c") && store.View("d")));
}

TEST_CASE("C-2 lookups on two threads while Apply adds and removes streams") {
  FakeClock clock;
  OriginStore store({}, clock);
  const json object{{"inputs", {"publish://"}}};
  store.Apply(Configs({{"keep", object}}));
  std::atomic<bool> stop{false};
  std::atomic<int> missing{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&] {
      while (!stop.load()) {
        if (!store.View("keep")) missing.fetch_add(1);
        (void)store.View("churn");
      }
    });
  }
  for (int i = 0; i < 200; ++i) {
    if (i % 2 == 0) {
      store.Apply(Configs({{"keep", object}, {"churn", object}}));
    } else {
      store.Apply(Configs({{"keep", object}}));
    }
  }
  stop = true;
  for (auto& r : readers) r.join();
  CHECK(missing.load() == 0);  // a stream that stays is never missing, whatever else changes
}

}  // namespace
}  // namespace meshwork::streamer::lookup_store_test
