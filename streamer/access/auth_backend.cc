#include "streamer/access/auth_backend.h"

#include <openssl/sha.h>

#include "absl/strings/escaping.h"
#include "boost/asio/post.hpp"
#include "common/log/log.h"
#include "common/status/absl_view.h"
#include "nlohmann/json.hpp"

namespace meshwork::streamer {

namespace {

using Steady = std::chrono::steady_clock;

BackendAnswer Busy() {
  BackendAnswer answer;
  answer.verdict = BackendAnswer::Verdict::kBusy;
  answer.reason = "backend_busy";
  return answer;
}

bool Fresh(const auto& kept, Steady::time_point now) {
  return now < kept.expires || (kept.answer.verdict == BackendAnswer::Verdict::kAdmit &&
                                now < kept.last_used + kept.active);
}

}  // namespace

AuthBackend::AuthBackend(const Clock& clock, Options options, prometheus::Registry* registry)
    : clock_(clock), options_(std::move(options)) {
  if (!options_.caller) options_.caller = http::AsyncFetch;
  if (!options_.tls) {
    if (auto tls = http::ClientTlsContext(""); tls.ok()) options_.tls = *std::move(tls);
  }
  if (!registry) return;
  latency_ = &prometheus::BuildHistogram()
                  .Name("meshwork_access_backend_seconds")
                  .Help("Latency of calls to auth backends (A-6, A-10)")
                  .Register(*registry)
                  .Add({}, prometheus::Histogram::BucketBoundaries{0.005, 0.01, 0.025, 0.05, 0.1,
                                                                   0.25, 0.5, 1, 2.5, 5, 10, 30});
  calls_total_ = &prometheus::BuildCounter()
                      .Name("meshwork_access_backend_calls_total")
                      .Help("Calls to auth backends by result: admit, refuse, error, timeout")
                      .Register(*registry);
  busy_ = &prometheus::BuildCounter()
               .Name("meshwork_access_backend_busy_total")
               .Help(
                   "New sessions answered 503 because the node's backend calls were at their "
                   "bound")
               .Register(*registry)
               .Add({});
}

std::string AuthBackend::KeyOf(const BackendQuery& query) {
  std::string material =
      query.token.empty() ? "c\n" + query.client + "\n" + query.user_agent : "t\n" + query.token;
  material += "\n" + query.stream;
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(material.data()), material.size(), digest);
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(digest), sizeof(digest)));
}

size_t AuthBackend::in_flight() const {
  absl::MutexLock lock(&mu_);
  return calls_.size();
}

size_t AuthBackend::cached() const {
  absl::MutexLock lock(&mu_);
  return kept_.size();
}

void AuthBackend::Deliver(std::vector<Waiter> waiters, const BackendAnswer& answer) {
  for (auto& w : waiters) {
    boost::asio::post(w.executor, [done = std::move(w.done), answer] { done(answer); });
  }
}

void AuthBackend::Ask(const AccessBackend& backend, const BackendQuery& query,
                      std::chrono::milliseconds active, boost::asio::any_io_executor executor,
                      Done done) {
  std::string key = KeyOf(query);
  const auto now = clock_.Monotonic();
  {
    absl::MutexLock lock(&mu_);
    if (auto it = kept_.find(key); it != kept_.end()) {
      if (Fresh(it->second, now)) {
        it->second.last_used = now;
        it->second.active = std::max(it->second.active, active);
        // Posting runs nothing here: `done` runs later, on `executor`, outside the lock.
        boost::asio::post(executor,
                          [done = std::move(done), answer = it->second.answer] { done(answer); });
        return;
      }
      kept_.erase(it);
    }
    if (auto call = calls_.find(key); call != calls_.end()) {
      if (call->second.size() < kMaxWaitersPerCall) {
        call->second.push_back({executor, std::move(done)});
        return;
      }
    } else if (calls_.size() < options_.max_in_flight) {
      calls_[key].push_back({executor, std::move(done)});
      done = nullptr;
    }
  }
  if (done) {  // over a bound
    if (busy_) busy_->Increment();
    boost::asio::post(executor, [done = std::move(done)] { done(Busy()); });
    return;
  }
  nlohmann::json body = {{"stream", query.stream}, {"protocol", query.protocol},
                         {"client", query.client}, {"user_agent", query.user_agent},
                         {"token", query.token},   {"session_id", query.session_id},
                         {"node", query.node},     {"referer", query.referer}};
  http::ClientRequest request;
  request.host = backend.url.host;
  request.port = backend.url.port;
  request.method = http::Verb::post;
  request.target = backend.url.target;
  request.headers = {{"Content-Type", "application/json"}, {"Accept", "application/json"}};
  request.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  request.timeout = backend.timeout;
  if (backend.url.tls) request.tls = options_.tls;
  request.body_limit_bytes = kMaxBackendAnswerBytes;
  const std::chrono::seconds ttl = backend.ttl;
  options_.caller(executor, std::move(request),
                  [this, key, ttl, active, started = now](absl::StatusOr<http::Response> res) {
                    const char* result = "error";
                    BackendAnswer answer;
                    if (!res.ok()) {
                      bool timeout = res.status().code() == absl::StatusCode::kDeadlineExceeded;
                      result = timeout ? "timeout" : "error";
                      answer.reason = result;
                    } else {
                      answer = ParseBackendAnswer(res->result_int(), res->body());
                      if (answer.verdict == BackendAnswer::Verdict::kAdmit) result = "admit";
                      if (answer.verdict == BackendAnswer::Verdict::kRefuse) result = "refuse";
                    }
                    if (answer.verdict == BackendAnswer::Verdict::kError) {
                      log::Warn("access_backend_failed",
                                {{"reason", answer.reason},
                                 {"detail", res.ok() ? std::to_string(res->result_int())
                                                     : std::string(res.status().message())}});
                    }
                    Finish(key, std::move(answer), ttl, active, started, result);
                  });
}

void AuthBackend::Finish(const std::string& key, BackendAnswer answer,
                         std::chrono::seconds policy_ttl, std::chrono::milliseconds active,
                         Steady::time_point started, const char* result) {
  const auto now = clock_.Monotonic();
  if (latency_) latency_->Observe(std::chrono::duration<double>(now - started).count());
  if (calls_total_) calls_total_->Add({{"result", result}}).Increment();
  std::vector<Waiter> waiters;
  {
    absl::MutexLock lock(&mu_);
    if (auto it = calls_.find(key); it != calls_.end()) {
      waiters = std::move(it->second);
      calls_.erase(it);
    }
    std::chrono::seconds ttl = answer.ttl_s ? std::chrono::seconds(*answer.ttl_s) : policy_ttl;
    if (answer.verdict != BackendAnswer::Verdict::kAdmit) ttl = std::min(ttl, kRefusalTtl);
    KeepLocked(key, Kept{answer, now + ttl, now, active});
  }
  Deliver(std::move(waiters), answer);
}

void AuthBackend::KeepLocked(const std::string& key, Kept kept) {
  const auto now = kept.last_used;
  if (kept_.size() >= options_.max_cached) {
    // A full cache is swept at most once a second (a sweep reads every entry); in between,
    // new answers are delivered without being kept.
    if (now - last_sweep_ < std::chrono::seconds(1)) return;
    last_sweep_ = now;
    std::erase_if(kept_, [now](const auto& entry) { return !Fresh(entry.second, now); });
    if (kept_.size() >= options_.max_cached) return;
  }
  kept_[key] = std::move(kept);
}

}  // namespace meshwork::streamer
