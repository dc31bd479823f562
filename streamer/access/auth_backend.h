// A-6, A-7 (spec 09): the node's calls to the operator's auth backend.
//
// One `POST` of JSON {stream, protocol, client, user_agent, token, session_id, node, referer}
// per new play session, asynchronously: Ask() returns at once and never blocks an HTTP worker;
// the answer reaches each asker's `done` on that asker's own executor. Concurrent askers with
// the same key (a player's first playlist, init and segment requests racing) wait on one call
// (at most kMaxWaitersPerCall each). Answers are kept per key — the viewer's token, else its
// client address and user agent, with the stream — for the answer's `ttl_s` (else the policy's
// `ttl_s`); an admitted session is kept beyond that for as long as it stays active (A-7: a
// request within `active` of the previous one costs no call). Refusals and errors are kept
// kRefusalTtl at most, so a viewer whose rights change waits seconds, not a minute.
//
// Bounds: at most `max_in_flight` calls at a time on the node and `max_cached` kept answers
// (expired ones dropped when full, at most once a second; beyond, answers are delivered but not
// kept). An asker over
// either call bound gets Verdict::kBusy (the route answers 503 + Retry-After). A call's deadline
// is the policy's `timeout_ms`; a timeout, a connection failure (an https:// backend whose
// certificate does not verify included) or an answer outside the protocol is Verdict::kError
// (the gate applies `on_error`).
//
// Metrics: meshwork_access_backend_seconds (histogram of call latency),
// meshwork_access_backend_calls_total{result=admit|refuse|error|timeout},
// meshwork_access_backend_busy_total. Tokens are never logged.
//
// Thread-safe: one mutex over the cache and the calls in flight, released before any `done`
// runs or is posted.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "boost/asio/any_io_executor.hpp"
#include "common/http/client.h"
#include "common/time/clock.h"
#include "prometheus/counter.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "streamer/access/backend_answer.h"
#include "streamer/config/stream_config.h"

namespace meshwork::streamer {

// What the node tells the backend about a new play session.
struct BackendQuery {
  std::string stream;
  std::string protocol;  // "hls", "ll-hls", "dash", "archive"
  std::string client;    // the client address after T-2
  std::string user_agent;
  std::string token;       // the viewer's `token` (query, Bearer or cookie), if any
  std::string session_id;  // stable for the key: a digest, never the token itself
  std::string node;
  std::string referer;
};

class AuthBackend {
 public:
  static constexpr size_t kDefaultMaxInFlight = 256;
  static constexpr size_t kDefaultMaxCached = 100'000;
  static constexpr size_t kMaxWaitersPerCall = 1024;
  static constexpr std::chrono::seconds kRefusalTtl{5};

  // The transport; http::AsyncFetch by default, a fake in unit tests.
  using Caller =
      std::function<void(boost::asio::any_io_executor, http::ClientRequest, http::FetchCallback)>;
  using Done = std::function<void(const BackendAnswer&)>;
  struct Options {
    size_t max_in_flight = kDefaultMaxInFlight;
    size_t max_cached = kDefaultMaxCached;
    Caller caller;  // empty: http::AsyncFetch
    // For https:// backends; null: http::ClientTlsContext("") (the system's CAs).
    std::shared_ptr<boost::asio::ssl::context> tls;
  };

  AuthBackend(const Clock& clock, Options options, prometheus::Registry* registry);
  AuthBackend(const AuthBackend&) = delete;
  AuthBackend& operator=(const AuthBackend&) = delete;

  // Runs `done` once on `executor` with the answer for `query` under `backend` (kept, or asked
  // now). `active`: how long an admitted session stays known after its last request (S-18).
  void Ask(const AccessBackend& backend, const BackendQuery& query,
           std::chrono::milliseconds active, boost::asio::any_io_executor executor, Done done);

  // The key `query` is kept under: its token (else client and user agent) with its stream,
  // as a digest (hex SHA-256), so no token is kept in clear.
  static std::string KeyOf(const BackendQuery& query);

  size_t in_flight() const;
  size_t cached() const;

 private:
  struct Kept {
    BackendAnswer answer;
    std::chrono::steady_clock::time_point expires;
    std::chrono::steady_clock::time_point last_used;
    std::chrono::milliseconds active{0};
  };
  struct Waiter {
    boost::asio::any_io_executor executor;
    Done done;
  };
  void Finish(const std::string& key, BackendAnswer answer, std::chrono::seconds policy_ttl,
              std::chrono::milliseconds active, std::chrono::steady_clock::time_point started,
              const char* result);
  void KeepLocked(const std::string& key, Kept kept) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static void Deliver(std::vector<Waiter> waiters, const BackendAnswer& answer);

  const Clock& clock_;
  Options options_;
  mutable absl::Mutex mu_;
  std::unordered_map<std::string, Kept> kept_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::string, std::vector<Waiter>> calls_ ABSL_GUARDED_BY(mu_);
  std::chrono::steady_clock::time_point last_sweep_ ABSL_GUARDED_BY(mu_);
  prometheus::Histogram* latency_ = nullptr;
  prometheus::Family<prometheus::Counter>* calls_total_ = nullptr;
  prometheus::Counter* busy_ = nullptr;
};

}  // namespace meshwork::streamer
