// An immutable value shared by many readers and replaced whole by a writer (configuration,
// routing state). Readers take a shared_ptr and keep using it however long they like; a
// writer's Set() never disturbs them. Thread-safe.
//
// Hot readers (a check on every viewer request) use Read() with a cache of their own: while
// no Set() happened since that cache was filled, a read is one atomic load — no lock and no
// shared reference count, whose cache line would bounce between the HTTP workers' cores.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/synchronization/mutex.h"

namespace meshwork {

namespace snapshot_internal {
// A process-unique id per Snapshot, so a cache never mistakes a new Snapshot at a freed
// one's address for the old one.
inline std::atomic<uint64_t> next_id{1};
}  // namespace snapshot_internal

template <typename T>
class Snapshot {
 public:
  explicit Snapshot(std::shared_ptr<const T> initial = std::make_shared<const T>())
      : current_(std::move(initial)) {}

  std::shared_ptr<const T> Get() const {
    absl::ReaderMutexLock lock(&mu_);
    return current_;
  }
  void Set(std::shared_ptr<const T> next) {
    absl::MutexLock lock(&mu_);
    current_.swap(next);
    version_.fetch_add(1, std::memory_order_release);
    // `next` (the old value) is released outside readers' way when it goes out of scope.
  }

  // What one reader remembers of the last value it read. Owned by one thread (a
  // `thread_local` at the call site); it keeps that value alive until it is refilled.
  struct ReadCache {
    uint64_t snapshot = 0;
    uint64_t version = 0;
    std::shared_ptr<const T> value;
  };
  // The current value, through `cache`: valid until the next Read() with the same cache.
  const T* Read(ReadCache& cache) const {
    const uint64_t version = version_.load(std::memory_order_acquire);
    if (cache.snapshot == id_ && cache.version == version && cache.value) {
      return cache.value.get();
    }
    std::shared_ptr<const T> old = std::move(cache.value);  // released after the lock
    absl::ReaderMutexLock lock(&mu_);
    cache.snapshot = id_;
    cache.version = version_.load(std::memory_order_relaxed);  // Set() bumps it under mu_
    cache.value = current_;
    return cache.value.get();
  }

 private:
  const uint64_t id_ = snapshot_internal::next_id.fetch_add(1, std::memory_order_relaxed);
  mutable absl::Mutex mu_;
  std::shared_ptr<const T> current_ ABSL_GUARDED_BY(mu_);
  std::atomic<uint64_t> version_{0};
};

}  // namespace meshwork
