// The listener: metrics, accepting and admitting connections, draining them at stop.
#include "common/http/listener.h"

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/http/framing.h"
#include "common/http/response.h"
#include "common/http/session.h"
#include "common/log/log.h"
#include "common/metrics/metrics.h"

namespace meshwork::http {

using server_internal::PlainStream;
using server_internal::Session;
using server_internal::SessionBase;
using server_internal::TlsStream;
using server_internal::WorkerSocket;
namespace asio = server_internal::asio;
namespace beast = server_internal::beast;
using tcp = server_internal::tcp;

namespace {

// The canned answer for a connection above max_connections, written without a session.
const std::string& BusyResponse() {
  static const std::string text = [] {
    std::string body =
        R"({"error":{"status":503,"code":"unavailable","message":"too many connections"}})";
    return absl::StrCat(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
        "Retry-After: 1\r\nConnection: close\r\nContent-Length: ",
        body.size(), "\r\n\r\n", body);
  }();
  return text;
}

}  // namespace

void Server::Impl::SetUpMetrics() {
  limits.header_bytes = options.header_limit_bytes;
  limits.chunk_extension_bytes = options.chunk_extension_limit_bytes;
  if (!options.registry) {
    body_budget = std::make_unique<ByteBudget>(options.max_buffered_body_bytes);
    return;
  }
  auto& reg = *options.registry;
  requests = &prometheus::BuildCounter()
                  .Name("meshwork_http_requests_total")
                  .Help("HTTP requests answered, by listener, method and status")
                  .Register(reg);
  latency = &prometheus::BuildHistogram()
                 .Name("meshwork_http_request_duration_seconds")
                 .Help("Time from a complete request to its response, by listener")
                 .Register(reg)
                 .Add({{"listener", options.name}}, metrics::LatencyBuckets());
  connections_gauge = &prometheus::BuildGauge()
                           .Name("meshwork_http_connections")
                           .Help("Open HTTP connections, by listener")
                           .Register(reg)
                           .Add({{"listener", options.name}});
  bytes_in_counter = &prometheus::BuildCounter()
                          .Name("meshwork_http_received_bytes_total")
                          .Help("Bytes received on HTTP listeners")
                          .Register(reg)
                          .Add({{"listener", options.name}});
  bytes_out_counter = &prometheus::BuildCounter()
                           .Name("meshwork_http_sent_bytes_total")
                           .Help("Bytes sent on HTTP listeners")
                           .Register(reg)
                           .Add({{"listener", options.name}});
  refused_counter = &prometheus::BuildCounter()
                         .Name("meshwork_http_refused_connections_total")
                         .Help("Connections refused with 503 above max_connections")
                         .Register(reg)
                         .Add({{"listener", options.name}});
  client_refused_counter =
      &prometheus::BuildCounter()
           .Name("meshwork_http_refused_client_connections_total")
           .Help(
               "Connections refused with 503 because their client (an IPv4 address or an "
               "IPv6 /64) held max_connections_per_client")
           .Register(reg)
           .Add({{"listener", options.name}});
  accept_failures = &prometheus::BuildCounter()
                         .Name("meshwork_http_accept_failures_total")
                         .Help("Failed accepts (out of descriptors or memory), by listener")
                         .Register(reg)
                         .Add({{"listener", options.name}});
  body_budget = std::make_unique<ByteBudget>(
      options.max_buffered_body_bytes,
      &prometheus::BuildGauge()
           .Name("meshwork_http_buffered_body_bytes")
           .Help("Bytes held for request bodies still arriving, by listener")
           .Register(reg)
           .Add({{"listener", options.name}}),
      &prometheus::BuildCounter()
           .Name("meshwork_http_body_budget_refusals_total")
           .Help("Requests answered 503 because the listener's buffered-body cap was reached")
           .Register(reg)
           .Add({{"listener", options.name}}));
  prometheus::BuildGauge()
      .Name("meshwork_http_buffered_body_limit_bytes")
      .Help("The listener's cap on bytes held for request bodies still arriving")
      .Register(reg)
      .Add({{"listener", options.name}})
      .Set(static_cast<double>(options.max_buffered_body_bytes));
}

const std::string& Server::Impl::Date() const {
  thread_local int64_t cached_second = -1;
  thread_local std::string cached;
  int64_t now =
      std::chrono::duration_cast<std::chrono::seconds>(clock->CoarseNow().time_since_epoch())
          .count();
  if (now != cached_second) {
    cached = HttpDate(now);
    cached_second = now;
  }
  return cached;
}

void Server::Impl::CountRequest(Worker& worker, std::string_view method, unsigned status,
                                double seconds) {
  tally->CountRequest(worker.index, method, status, seconds);
}

void Server::Impl::LogAccess(const RequestContext* ctx, const net::IpAddress& peer,
                             std::string_view method, unsigned status,
                             std::optional<uint64_t> bytes, double seconds,
                             std::string_view protocol) const {
  // A-10: credentials in the query (viewer tokens, passes) never reach the log whole.
  std::string target =
      ctx ? RedactedTarget(std::string_view(ctx->request.target()).substr(0, 2048)) : "-";
  std::string_view agent = "-";
  if (ctx) {
    auto it = ctx->request.find(beast_http::field::user_agent);
    if (it != ctx->request.end()) agent = it->value().substr(0, 256);
  }
  log::Info("http_access", {{"listener", options.name},
                            {"client", ctx ? ctx->client.ToString() : peer.Unmapped().ToString()},
                            {"method", method},
                            {"target", target},
                            {"status", status},
                            {"bytes", bytes ? std::to_string(*bytes) : std::string("-")},
                            {"ms", static_cast<int64_t>(seconds * 1000)},
                            {"protocol", protocol},
                            {"user_agent", agent}});
}

void Server::Impl::TickWheel(size_t i) {
  asio::steady_timer& timer = *wheel_timers[i];
  timer.expires_after(server_internal::kWheelTick);
  timer.async_wait([this, i](beast::error_code ec) {
    if (ec) return;  // ticks on while the listener drains: closing sessions have deadlines too
    workers[i]->wheel.Advance(clock->CoarseMonotonic());  // as sessions set them
    TickWheel(i);
  });
}

void Server::Impl::Accept() {
  Worker& worker = *workers[next_worker];
  auto& context = *contexts[next_worker];
  next_worker = (next_worker + 1) % contexts.size();
  acceptor->async_accept(
      context.get_executor(), [this, &worker](beast::error_code ec, WorkerSocket socket) {
        if (ec) {
          if (ec == asio::error::operation_aborted || stopping.load()) return;
          // Out of descriptors or memory: accepting again at once would spin on the same error.
          if (accept_failures) accept_failures->Increment();
          log::Warn("http_accept_failed", {{"listener", options.name}, {"error", ec.message()}});
          accept_backoff->expires_after(server_internal::kAcceptBackoff);
          accept_backoff->async_wait([this](beast::error_code wait_ec) {
            if (!wait_ec && !stopping.load()) Accept();
          });
          return;
        }
        // Only this handler (on worker 0) increments `active`: the check cannot overshoot.
        net::AddressCount::Ticket place;
        if (active.load() >= options.max_connections) {
          Refuse(std::move(socket), refused_counter);
        } else if (!AcquirePlace(socket, &place)) {
          Refuse(std::move(socket), client_refused_counter);
        } else {
          active.fetch_add(1);
          Admit(worker, std::move(socket), std::move(place));
        }
        if (!stopping.load()) Accept();
      });
}

void Server::Impl::LogHandlerException(std::string_view path, const char* what) {
  uint64_t held_back = 0;
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now().time_since_epoch())
                             .count();
  if (!handler_exception_log.Allow(now_ms, &held_back)) return;
  log::Error(
      "http_handler_exception",
      {{"listener", options.name}, {"path", path}, {"what", what}, {"held_back", held_back}});
}

void Server::Impl::SessionOpened() {
  connections.fetch_add(1, std::memory_order_relaxed);
  if (connections_gauge) connections_gauge->Increment();
}

bool Server::Impl::AcquirePlace(const WorkerSocket& socket, net::AddressCount::Ticket* place) {
  if (per_client.limit() == 0) return true;
  beast::error_code ec;
  auto remote = socket.remote_endpoint(ec);
  // A connection already reset has no address to count; its session closes at its first read.
  if (ec) return true;
  const net::IpAddress peer = server_internal::ToIpAddress(remote.address());
  // A trusted proxy (T-1) speaks for many clients: only the listener's cap bounds it. Read on
  // worker 0, the acceptor's thread, as the provider requires of a worker.
  if (options.trusted_proxies) {
    const net::CidrSet* trusted = options.trusted_proxies();
    if (trusted && trusted->Contains(peer.Unmapped())) return true;
  }
  return per_client.Acquire(peer, place);
}

void Server::Impl::Admit(Worker& worker, WorkerSocket socket, net::AddressCount::Ticket place) {
  SessionOpened();
  std::shared_ptr<SessionBase> session;
  if (tls_enabled) {
    std::shared_ptr<asio::ssl::context> tls_context = CurrentTls();
    asio::ssl::context& ref = *tls_context;
    session = std::make_shared<Session<TlsStream>>(this, &worker, std::move(tls_context),
                                                   std::move(socket), ref);
  } else {
    session = std::make_shared<Session<PlainStream>>(this, &worker, nullptr, std::move(socket));
  }
  session->client_place = std::move(place);
  worker.sessions.Add(*session);  // O(1); it leaves when destroyed
  session->Start();
}

void Server::Impl::Refuse(WorkerSocket socket, prometheus::Counter* counter) {
  if (counter) counter->Increment();
  if (tls_enabled) {
    // No answer is possible before a handshake; refuse by closing.
    beast::error_code ignored;
    socket.shutdown(tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
    return;
  }
  auto sock = std::make_shared<WorkerSocket>(std::move(socket));
  asio::async_write(*sock, asio::buffer(BusyResponse()), [sock](beast::error_code, size_t) {
    beast::error_code ignored;
    sock->shutdown(tcp::socket::shutdown_both, ignored);
    sock->close(ignored);
  });
}

void Server::Impl::SessionClosed() {
  connections.fetch_sub(1, std::memory_order_relaxed);
  if (connections_gauge) connections_gauge->Decrement();
  // Both atomics are sequentially consistent: either this sees `stopping`, or Stop's check
  // of `active` sees this decrement.
  if (active.fetch_sub(1) == 1 && stopping.load()) {
    absl::MutexLock wake(&drain_mu);  // its release re-evaluates DrainSessions' condition
  }
}

void Server::Impl::DrainSessions(std::chrono::milliseconds grace) {
  // One task per worker: it shuts down that worker's sessions on their own thread. A session
  // accepted after the list was taken sees `stopping` when it starts and closes by itself.
  for (size_t i = 0; i < workers.size(); ++i) {
    asio::post(*contexts[i], [worker = workers[i].get()] {
      for (auto& session : worker->sessions.LiveSessions()) session->Shutdown();
    });
  }
  absl::MutexLock lock(&drain_mu);
  auto drained = [this] { return active.load() == 0; };
  drain_mu.AwaitWithTimeout(absl::Condition(&drained),
                            absl::Milliseconds(static_cast<int64_t>(grace.count())));
}

}  // namespace meshwork::http
