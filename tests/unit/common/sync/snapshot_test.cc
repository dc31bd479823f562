#include "common/sync/snapshot.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <memory>
#include <thread>
#include <vector>

namespace meshwork::snapshot_test {
namespace {

// A value that counts how many of its kind are alive.
struct Counted {
  explicit Counted(int v, std::atomic<int>* alive) : value(v), alive(alive) { ++*alive; }
  ~Counted() { --*alive; }
  int value;
  std::atomic<int>* alive;
};

TEST_CASE("P-17 a cached read of a snapshot sees every Set, and never another snapshot's value") {
  std::atomic<int> alive{0};
  Snapshot<Counted> a(std::make_shared<const Counted>(1, &alive));
  Snapshot<Counted> b(std::make_shared<const Counted>(100, &alive));
  Snapshot<Counted>::ReadCache cache;
  CHECK(a.Read(cache)->value == 1);
  CHECK(a.Read(cache)->value == 1);
  a.Set(std::make_shared<const Counted>(2, &alive));
  CHECK(a.Read(cache)->value == 2);
  // The same cache used on another snapshot refills from that one.
  CHECK(b.Read(cache)->value == 100);
  CHECK(a.Read(cache)->value == 2);
  // The cache keeps the value it answered alive after a Set replaced it, until it refills.
  a.Set(std::make_shared<const Counted>(3, &alive));
  CHECK(alive == 3);  // 2 (kept by the cache), 3, 100
  CHECK(a.Read(cache)->value == 3);
  CHECK(alive == 2);
}

TEST_CASE("R-1 readers with their own caches follow a writer's Sets, in order, without a race") {
  std::atomic<int> alive{0};
  Snapshot<Counted> snapshot(std::make_shared<const Counted>(0, &alive));
  constexpr int kLast = 2000;
  std::atomic<bool> failed{false};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&] {
      Snapshot<Counted>::ReadCache cache;
      int seen = 0;
      while (seen < kLast) {
        int now = snapshot.Read(cache)->value;
        if (now < seen) failed = true;  // a reader never goes back in time
        seen = now;
      }
    });
  }
  for (int v = 1; v <= kLast; ++v) snapshot.Set(std::make_shared<const Counted>(v, &alive));
  for (auto& t : readers) t.join();
  CHECK_FALSE(failed);
  CHECK(alive == 1);
}

}  // namespace
}  // namespace meshwork::snapshot_test
