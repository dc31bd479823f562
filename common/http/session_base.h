// Internal to the HTTP server (server.h is the public API): what the listener knows of a
// connection whatever its transport, and the per-worker registry of live connections.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "boost/asio/any_io_executor.hpp"
#include "common/http/deadline_wheel.h"
#include "common/http/prepared_answer.h"
#include "common/http/types.h"
#include "common/net/address_count.h"
#include "common/time/clock.h"

namespace meshwork::http::server_internal {

class SessionRegistry;

// Bytes [offset, offset+length) of `file` in 256 KiB pieces (pread; fewer bytes when the file
// is shorter): the body of a file answer where sendfile cannot be used (TLS, other sinks).
SharedBuffers ReadFileRange(const OpenFile& file, uint64_t offset, uint64_t length);

// One connection. Everything but `broken` and the registry links is touched on the
// connection's worker only (see Session in session.h), the deadline (DeadlineWheel::Timed)
// included: OnDeadline runs there.
class SessionBase : public std::enable_shared_from_this<SessionBase>, public DeadlineWheel::Timed {
 public:
  SessionBase() = default;
  SessionBase(const SessionBase&) = delete;
  SessionBase& operator=(const SessionBase&) = delete;
  // Leaves its registry (O(1)); may run on any thread, wherever the last reference drops.
  virtual ~SessionBase();

  virtual void Start() = 0;
  // Called (on this session's executor) when the server stops.
  virtual void Shutdown() = 0;
  // Answers the current request (on this session's executor).
  virtual void Complete(Response response) = 0;
  // Answers the current request with a body written from shared chunks (scatter-gather).
  virtual void CompleteBuffers(Response header, SharedBuffers body, uint64_t offset,
                               uint64_t length) = 0;
  // Answers the current request with a body from an open file (sendfile on plain TCP).
  virtual void CompleteFile(Response header, std::shared_ptr<const OpenFile> file, uint64_t offset,
                            uint64_t length) = 0;
  // Answers the current request with a prepared answer and `extra` fields (on this session's
  // executor). The default sends it through Complete or CompleteBuffers
  // (CompleteAsResponse); HTTP/1.1 sessions write the prepared bytes themselves.
  virtual void CompletePrepared(std::shared_ptr<const PreparedAnswer> answer,
                                const AnswerFields& extra) {
    CompleteAsResponse(*this, *answer, extra.view());
  }
  // Reads the next chunk of a streamed request body (on this session's executor).
  virtual void ReadChunk(BodyReader::ChunkFn on_chunk) = 0;
  // Chunked responses (on this session's executor): the header, then chunks in order; a
  // null chunk is the end. BeginChunked returns true when the header is the whole answer (a
  // HEAD): the session goes on to its next request and the writer must queue nothing more.
  virtual bool BeginChunked(Response header) = 0;
  virtual void QueueChunk(std::shared_ptr<const std::string> data) = 0;
  virtual boost::asio::any_io_executor executor() = 0;
  // Whether the caller runs on this session's worker (where a completion may run inline).
  virtual bool OnWorker() = 0;
  std::weak_ptr<DeadlineWheel::Timed> WeakTimed() final { return weak_from_this(); }

  std::atomic<bool> broken{false};  // the connection failed during a chunked response

  // the connection's place under its client's connection cap (empty without one); given
  // back when the session is destroyed, or moved to the HTTP/2 session taking the connection.
  net::AddressCount::Ticket client_place;

 protected:
  // R-3 timeouts, on the connection's worker: the pending operation is cancelled (OnDeadline;
  // its handler closes) once `after` passes without the deadline being set again or cleared,
  // as the clock's coarse monotonic reading counts it (the wheel is advanced with the same
  // reading; against the precise clock a deadline may come a kernel tick, a few ms, early).
  // `wheel` and `clock` are the worker's and the listener's, set once by the constructor.
  void InitDeadlines(DeadlineWheel* wheel, const Clock* clock) {
    wheel_ = wheel;
    clock_ = clock;
  }
  void SetDeadline(std::chrono::milliseconds after) {
    wheel_->Set(*this, clock_->CoarseMonotonic(), after);
  }
  void ClearDeadline() { DeadlineWheel::Clear(*this); }
  // The reading SetDeadline counts from (the listener clock's coarse monotonic time).
  std::chrono::steady_clock::time_point DeadlineNow() const { return clock_->CoarseMonotonic(); }

 private:
  friend class SessionRegistry;
  // Intrusive links, guarded by registry_->mu_; registry_ is set once, before the session
  // is shared with any other thread.
  DeadlineWheel* wheel_ = nullptr;
  const Clock* clock_ = nullptr;
  SessionRegistry* registry_ = nullptr;
  SessionBase* prev_ = nullptr;
  SessionBase* next_ = nullptr;
};

// The live connections of one worker, so that a stopping listener reaches every one of them.
// An intrusive list: adding and removing are O(1) and allocate nothing, and nothing is ever
// scanned except by LiveSessions (once, when the listener stops).
//
// Thread-safe. Add runs on the acceptor's thread, the removal (in ~SessionBase) wherever a
// session's last reference drops (its worker, or a handler's thread holding a Responder), and
// LiveSessions on the stopping worker; the mutex is this worker's alone and held for a few
// pointer writes, so it is never a listener-wide lock.
class SessionRegistry {
 public:
  SessionRegistry() = default;
  SessionRegistry(const SessionRegistry&) = delete;
  SessionRegistry& operator=(const SessionRegistry&) = delete;
  // Sessions must all be gone first (the listener's io_contexts are destroyed before it).
  ~SessionRegistry();

  // Links `session`, which must not be in a registry yet; it leaves when it is destroyed.
  void Add(SessionBase& session);
  // Strong references to every session not yet being destroyed. The caller must drop them
  // outside any lock it shares with sessions (dropping one may destroy it).
  std::vector<std::shared_ptr<SessionBase>> LiveSessions();
  size_t size();

 private:
  friend class SessionBase;
  void Remove(SessionBase& session);

  absl::Mutex mu_;
  SessionBase* head_ ABSL_GUARDED_BY(mu_) = nullptr;
  size_t size_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace meshwork::http::server_internal
