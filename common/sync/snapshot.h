// An immutable value shared by many readers and replaced whole by a writer (configuration,
// routing state). Readers take a shared_ptr and keep using it however long they like; a
// writer's Set() never disturbs them. Thread-safe.
#pragma once

#include <memory>

#include "absl/synchronization/mutex.h"

namespace meshwork {

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
    // `next` (the old value) is released outside readers' way when it goes out of scope.
  }

 private:
  mutable absl::Mutex mu_;
  std::shared_ptr<const T> current_ ABSL_GUARDED_BY(mu_);
};

}  // namespace meshwork
