// What every ingest source shares: the worker thread, Stop() semantics, byte counting,
// start/stop logs and reconnect backoff. Internal to streamer/ingest.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <thread>

#include "absl/random/random.h"
#include "absl/synchronization/mutex.h"
#include "streamer/ingest/source.h"

namespace meshwork::ingest {

// Exponential backoff with jitter for reconnects: each delay is drawn from [d/2, d] for a d
// that starts at 100 ms and doubles up to 5 s; never below 100 ms.
class Backoff {
 public:
  static constexpr std::chrono::milliseconds kMin{100};
  static constexpr std::chrono::milliseconds kMax{5000};

  std::chrono::milliseconds Next();
  void Reset() { ceiling_ = kMin; }

 private:
  std::chrono::milliseconds ceiling_ = kMin;
  absl::BitGen gen_;
};

// Runs Run() on a worker thread from Launch() until Stop(). Subclasses call Stop() in their
// destructor (Interrupt() must still be callable then) and hand data to Deliver().
class SourceBase : public Source {
 public:
  SourceBase(std::string url, std::string_view kind, BytesCallback on_bytes);
  ~SourceBase() override;

  // Idempotent and safe from any thread. From another thread it returns once the worker has
  // exited, so no callback runs afterwards. From inside the callback (the worker thread) it
  // only makes that callback the last one; the source must then be destroyed elsewhere.
  void Stop() final;
  const std::string& url() const final { return url_; }
  uint64_t bytes_received() const final { return bytes_.load(std::memory_order_relaxed); }

 protected:
  void Launch();
  bool stopping() const { return stopping_.load(std::memory_order_acquire); }
  // Counts and forwards bytes unless Stop() has begun.
  void Deliver(std::span<const uint8_t> data);
  // Sleeps up to `delay`; returns early (false) when Stop() begins.
  bool SleepUnlessStopped(std::chrono::milliseconds delay);
  std::string_view kind() const { return kind_; }
  // url() without secrets, for logs and error messages.
  const std::string& log_url() const { return log_url_; }

 private:
  virtual void Run() = 0;
  // Makes Run() return soon; called once, after stopping() became true.
  virtual void Interrupt() = 0;

  const std::string url_;
  const std::string log_url_;
  const std::string kind_;
  const BytesCallback on_bytes_;
  std::atomic<uint64_t> bytes_{0};
  std::atomic<bool> stopping_{false};
  absl::Mutex stop_mu_;
  bool stopped_ ABSL_GUARDED_BY(stop_mu_) = false;
  absl::Mutex sleep_mu_;
  absl::CondVar sleep_cv_;
  std::thread worker_;
};

}  // namespace meshwork::ingest
