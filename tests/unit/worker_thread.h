// Test helper: a thread that runs the calls given to it one at a time and keeps its
// thread_local state between them, as an HTTP worker keeps its caches between requests.
#pragma once

#include <functional>
#include <thread>

#include "absl/synchronization/mutex.h"

namespace meshwork::testing {

class WorkerThread {
 public:
  WorkerThread() : thread_([this] { Loop(); }) {}
  ~WorkerThread() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    thread_.join();
  }
  WorkerThread(const WorkerThread&) = delete;
  WorkerThread& operator=(const WorkerThread&) = delete;

  // Runs `f` on the thread and returns its result once it has run.
  template <typename F>
  auto Run(F f) {
    decltype(f()) result{};
    absl::MutexLock lock(&mu_);
    task_ = [&] { result = f(); };
    mu_.Await(absl::Condition(this, &WorkerThread::Idle));
    return result;
  }

 private:
  void Loop() {
    absl::MutexLock lock(&mu_);
    for (;;) {
      mu_.Await(absl::Condition(this, &WorkerThread::HasWork));
      if (stop_) return;
      task_();
      task_ = nullptr;
    }
  }
  bool HasWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || task_ != nullptr; }
  bool Idle() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return task_ == nullptr; }

  absl::Mutex mu_;
  std::function<void()> task_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace meshwork::testing
