// P-13, S-19: objects still arriving from an upstream, shared with the viewers who ask for them
// meanwhile, byte for byte as the bytes come. An edge's relay fetches the part its upstream's
// preload hint names while the upstream is still making it; the moment the relay `Begin`s
// that fetch, a viewer request for the object finds it here (OriginDelivery looks before it
// would hold) and is answered with chunked transfer from the pieces received so far, then
// from each new piece, to the end. The store's copy (published when the relay has the
// object's timing from the next playlist) takes over once the relay `End`s the fetch.
//
// Contract:
// - Whoever Begins an object Completes or Fails it, and Ends it, on every path; a relay's
//   fetch has a deadline, so no reader waits longer than that. After End, readers that hold
//   the object read it to its end; new readers find the store.
// - Bounded: at most `max_objects` in flight (Begin refuses beyond, the relay then fetches
//   the usual way) and `max_bytes` per object (more fails it); at most `max_readers` wakes
//   pending per object (a reader refused falls back to the store's hold).
// - Wakes run once each, posted to the reader's executor after the object's mutex is let
//   go; never inside Append/Complete/Fail.
// Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "boost/asio/any_io_executor.hpp"
#include "streamer/store/origin_rules.h"

namespace meshwork::streamer {

class GrowingObject {
 public:
  using Chunk = std::shared_ptr<const std::string>;
  enum class State { kArriving, kComplete, kFailed };

  GrowingObject(uint64_t max_bytes, size_t max_readers)
      : max_bytes_(max_bytes), max_readers_(max_readers) {}

  // Producer side (one thread). Append copies `piece` into a new chunk; past max_bytes the
  // object fails instead.
  void Append(std::string_view piece);
  void Complete();
  void Fail();
  // The upstream's X-Media-Timing field, given on to viewers with the answer's header: set by
  // the producer before its first Append (a reader starts its answer at the first chunk).
  void SetTiming(std::string field);
  std::string timing() const;

  struct Read {
    std::vector<Chunk> chunks;  // the chunks from the index asked for on
    State state = State::kArriving;
    bool waiting = false;  // `wake` was kept and runs at the next change
  };
  // Reader side, any thread: the chunks from index `from` on and the state. When there are
  // none and the object is still arriving, `wake` is kept (if fewer than max_readers are)
  // and posted to `executor` at the next Append, Complete or Fail.
  Read ReadFrom(size_t from, const boost::asio::any_io_executor& executor,
                std::function<void()> wake);

  uint64_t bytes() const;
  State state() const;

 private:
  struct Wake {
    boost::asio::any_io_executor executor;
    std::function<void()> fn;
  };
  void Change(State state, Chunk chunk);

  const uint64_t max_bytes_;
  const size_t max_readers_;
  mutable absl::Mutex mu_;
  std::vector<Chunk> chunks_ ABSL_GUARDED_BY(mu_);
  std::string timing_ ABSL_GUARDED_BY(mu_);
  uint64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  State state_ ABSL_GUARDED_BY(mu_) = State::kArriving;
  std::vector<Wake> wakes_ ABSL_GUARDED_BY(mu_);
};

class InFlightObjects {
 public:
  struct Options {
    size_t max_objects = 1024;
    uint64_t max_bytes = 32ull << 20;
    size_t max_readers = 20'000;
  };
  InFlightObjects() : InFlightObjects(Options{}) {}
  explicit InFlightObjects(Options options) : options_(options) {}

  // A new object in flight; null when it is in flight already or max_objects are.
  std::shared_ptr<GrowingObject> Begin(const std::string& stream, const std::string& rendition,
                                       ObjectKey key);
  // Removes `object` (only if it is still the one registered under its key).
  void End(const std::string& stream, const std::string& rendition, ObjectKey key,
           const std::shared_ptr<GrowingObject>& object);
  // The object in flight under the key, or null. Costs one relaxed load when none is.
  std::shared_ptr<GrowingObject> Find(const std::string& stream, const std::string& rendition,
                                      ObjectKey key) const;

  size_t size() const { return count_.load(std::memory_order_relaxed); }

 private:
  const Options options_;
  std::atomic<size_t> count_{0};
  mutable absl::Mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<GrowingObject>> objects_ ABSL_GUARDED_BY(mu_);
};

}  // namespace meshwork::streamer
