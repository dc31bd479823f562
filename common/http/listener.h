// Internal to the HTTP server (server.h is the public API): the state of one listener —
// options, metrics, limits, the workers and their io_contexts, the acceptor.
//
// Threading: the acceptor, its back-off timer and `next_worker` belong to worker 0. Each
// Worker's request-counter cache belongs to that worker's thread. The session registries and
// the TLS context have their own (per-worker / reload-only) mutexes; everything else a request
// touches is immutable after Start or atomic, so no request takes a listener-wide lock.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "boost/asio.hpp"
#include "boost/asio/ssl.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/ssl.hpp"
#include "common/http/byte_budget.h"
#include "common/http/deadline_wheel.h"
#include "common/http/framing.h"
#include "common/http/request_tally.h"
#include "common/http/server.h"
#include "common/http/session_base.h"
#include "common/http/tls_stream.h"
#include "common/log/log.h"
#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"

namespace meshwork::http {

namespace server_internal {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;

// Connections use the worker's concrete executor type rather than the type-erased
// any_io_executor: every completion of every request goes through it, and the erased form
// costs a copy and an indirect call each time.
using WorkerExecutor = asio::io_context::executor_type;
using WorkerSocket = asio::basic_stream_socket<tcp, WorkerExecutor>;
// A bare socket: the timeouts are the worker's DeadlineWheel, not a timer per operation
// (which beast::basic_stream would arm for every read and write).
using PlainStream = WorkerSocket;
// TLS through our own BIO (tls_stream.h: whole records, one send per write, fewer copies than
// beast::ssl_stream's memory-BIO pair).
using TlsStream = BasicTlsStream<PlainStream>;

// How long the listener pauses after a failed accept (EMFILE, ENFILE, ENOBUFS).
inline constexpr std::chrono::milliseconds kAcceptBackoff{100};
// The granularity of connection timeouts: a deadline fires at most about this late.
inline constexpr std::chrono::milliseconds kWheelTick{100};

// One worker thread of a listener: the connections it serves and what they count.
struct Worker {
  Worker(size_t index, DeadlineWheel::TimePoint origin) : index(index), wheel(origin, kWheelTick) {}
  const size_t index;
  SessionRegistry sessions;  // thread-safe (its own mutex)
  // The deadlines of this worker's connections; only this worker's thread touches it.
  DeadlineWheel wheel;
};

}  // namespace server_internal

class Server::Impl {
 public:
  using Worker = server_internal::Worker;

  Impl(ServerOptions options, Router router)
      : options(std::move(options)),
        router(std::move(router)),
        per_client(this->options.max_connections_per_client),
        clock(this->options.clock ? this->options.clock : &RealClock::Get()) {
    for (const auto& name : this->options.access_log_listeners) {
      if (name == "all" || name == this->options.name) access_log = true;
    }
  }

  // Declared first so they outlive the io_contexts (sessions still queued there touch them
  // while the contexts are destroyed).
  ServerOptions options;
  const Router router;
  std::atomic<uint64_t> connections{0};  // open now (ServerCounters::connections)
  // open connections per client; each session holds its place (SessionBase::client_place).
  net::AddressCount per_client;
  // The per-request metrics, counted per worker (request_tally.h); set by Start.
  std::shared_ptr<server_internal::RequestTally> tally;
  std::vector<std::unique_ptr<Worker>> workers;  // one per io_context, same index
  // Open connections. Incremented only by the acceptor (so admission never overshoots
  // max_connections), decremented by each closing session.
  std::atomic<size_t> active{0};
  std::atomic<bool> stopping{false};
  // Stop() waits on it for `active` to reach 0; a session closing while the listener stops
  // takes it (empty) so the waiter re-checks.
  absl::Mutex drain_mu;

  // The TLS context for new connections; null for a plain listener. Each TLS session holds
  // its own reference, so a reload never pulls a context from under an open connection.
  absl::Mutex tls_mu;
  std::shared_ptr<server_internal::asio::ssl::context> tls ABSL_GUARDED_BY(tls_mu);
  bool tls_enabled = false;

  prometheus::Family<prometheus::Counter>* requests = nullptr;
  prometheus::Histogram* latency = nullptr;
  prometheus::Gauge* connections_gauge = nullptr;
  log::Throttle handler_exception_log{1000};  // LogHandlerException's
  prometheus::Counter* bytes_in_counter = nullptr;
  prometheus::Counter* bytes_out_counter = nullptr;
  prometheus::Counter* refused_counter = nullptr;
  prometheus::Counter* client_refused_counter = nullptr;  // above max_connections_per_client
  prometheus::Counter* accept_failures = nullptr;
  std::unique_ptr<ByteBudget> body_budget;  // unfinished bodies of the whole listener
  DecoderLimits limits;
  const Clock* clock = nullptr;

  std::vector<std::unique_ptr<server_internal::asio::io_context>> contexts;
  std::vector<server_internal::asio::executor_work_guard<server_internal::WorkerExecutor>> guards;
  std::unique_ptr<server_internal::tcp::acceptor> acceptor;
  // On worker 0, like the acceptor; both declared after `contexts`, so destroyed before them.
  std::unique_ptr<server_internal::asio::steady_timer> accept_backoff;
  // One per worker, on that worker, like the acceptor: each advances its worker's wheel.
  std::vector<std::unique_ptr<server_internal::asio::steady_timer>> wheel_timers;
  std::vector<std::thread> threads;
  size_t next_worker = 0;  // worker 0's

  void SetUpMetrics();
  // Accepts the next connection (on worker 0) and hands it to the next worker in turn.
  // O(1) per connection: no scan of the open ones.
  void Accept();
  // Advances worker `i`'s deadline wheel every kWheelTick until the listener stops.
  void TickWheel(size_t i);
  // A handler threw while answering a request for `path` (any worker): logged at most once a
  // second per listener (a request can make a handler throw as often as it is sent).
  void LogHandlerException(std::string_view path, const char* what);
  // A session of this listener is made (a new connection, or the HTTP/2 session that takes
  // one over: each SessionClosed() has its SessionOpened()). `active` is counted apart.
  void SessionOpened();
  // A session of this listener is gone (its destructor, on any thread).
  void SessionClosed();
  // Shuts every live session down (on its worker) and waits up to `grace` for all to close.
  void DrainSessions(std::chrono::milliseconds grace);

  // The Date field for a response sent now (RFC 9110 §6.6.1), formatted once a second per
  // worker thread.
  const std::string& Date() const;
  std::shared_ptr<server_internal::asio::ssl::context> CurrentTls() {
    absl::MutexLock lock(&tls_mu);
    return tls;
  }
  // Counts an answered request; on `worker`'s own thread.
  void CountRequest(Worker& worker, std::string_view method, unsigned status, double seconds);
  // M-5: whether this listener logs every answer, and the line for one (`ctx` may be null
  // for a request refused before it was parsed; `bytes` unknown for a chunked answer).
  bool access_log = false;
  void LogAccess(const RequestContext* ctx, const net::IpAddress& peer, std::string_view method,
                 unsigned status, std::optional<uint64_t> bytes, double seconds,
                 std::string_view protocol) const;
  // On `worker`'s own thread.
  void AddBytesIn(Worker& worker, uint64_t n) { tally->AddBytesIn(worker.index, n); }
  void AddBytesOut(Worker& worker, uint64_t n) { tally->AddBytesOut(worker.index, n); }

 private:
  // `socket`'s client's place under max_connections_per_client; false when it holds
  // them all (true with `place` empty when there is no cap or no address to count).
  bool AcquirePlace(const server_internal::WorkerSocket& socket, net::AddressCount::Ticket* place);
  void Admit(Worker& worker, server_internal::WorkerSocket socket, net::AddressCount::Ticket place);
  // Refuses a connection over a cap (503, or a close on TLS), counted in `counter`.
  void Refuse(server_internal::WorkerSocket socket, prometheus::Counter* counter);
};

}  // namespace meshwork::http
