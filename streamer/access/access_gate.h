// A-1…A-5, A-10 (spec 09): the node's check of every viewer request against its stream's
// access policy, before anything is served (playlists, MPDs, objects, archive; HTTP/1.1 and
// h2 alike, as both run the same routes).
//
// Order: (1) a request carrying the cluster token (`Authorization: Bearer`, M-3) is a node
// of the cluster (an edge's relay, archive proxy) and is admitted whatever the policy (a bearer
// shaped as a JWT is checked as a viewer's token first, and as the cluster token only before a
// refusal, which keeps the HMAC of the cluster-token check off viewers' requests);
// (2) a policy the node could not read, or a stream it has no configuration of, refuses
// (403 `policy_unreadable`, `policy_unknown`: fail closed);
// (3) `deny_cidrs`, then `allow_cidrs` on the client address (after T-2): 403
// `address_denied`; (4) in `token` mode the viewer token — `?token=`, else
// `Authorization: Bearer`, else the `meshwork_token` cookie — missing: 401 `token_missing`;
// refused by the verifier (jwt.h reason codes: `malformed`, `algorithm`, `unknown_kid`,
// `signature`, `no_exp`, `expired`, `not_yet_valid`, `claims`), or whose claims do not fit:
// `stream` (not in `streams`), `address` (outside `ip`), `dvr` (an archive read without
// `dvr: true`), `revoked` (central revoked the token's login, A-9): 403 with that reason. Refusals
// carry the M-1 error body with a `reason` member, `Cache-Control: no-store` and the stream's CORS
// origin.
//
// A token taken from the query is carried on, so players need no configuration:
// `Result::carry` is the query to put on every URI the node writes for this viewer
// (hls::WithQuery) — `sid=<id>`, a 16-character id standing for the token on this node
// (SessionIds: a playlist of a dozen URIs stays small, P-17) — and `Result::carry_token`
// ("token=…") the one for URIs that lead to another node. `?sid=` is accepted as the token
// it stands for; an id this node does not know: 403 `session_unknown`. Tokens from a header
// or cookie are not copied into URIs (the client sends them again by itself).
//
// In `backend` mode Check does not decide: after the address rules it returns
// `Result::ask`, and the route passes it to Resolve, which asks the node's AuthBackend (one call
// per new session, kept answers, never blocking the worker) and hands the verdict to the
// route's continuation on the request's executor: the backend's `reason` (403), `dvr` (archive
// reads), `revoked` (its login, A-9), and on a timeout or a broken answer `on_error`: `deny`
// (403 `backend_error`) or `allow`; over the node's call bound 503 `backend_busy` with
// Retry-After. A `?token=` is carried on and passed to the backend as in `token` mode.
//
// Verified tokens are cached (VerifiedTokens, A-5) until they expire; a new key set from
// central clears the cache. Tokens never appear in logs or metrics.
// Thread-safe; Check never blocks beyond a signature check (tens of microseconds, once per
// token).
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "common/crypto/jwt.h"
#include "common/crypto/token_file.h"
#include "common/http/types.h"
#include "common/sync/snapshot.h"
#include "common/time/clock.h"
#include "prometheus/counter.h"
#include "prometheus/registry.h"
#include "streamer/access/auth_backend.h"
#include "streamer/access/session_ids.h"
#include "streamer/access/verified_tokens.h"
#include "streamer/agent/node_config.h"

namespace meshwork::streamer {

class AccessGate {
 public:
  static constexpr size_t kDefaultCacheCapacity = 100'000;

  struct Options {
    size_t cache_capacity = kDefaultCacheCapacity;
    std::string node;  // this node's id, told to auth backends
    AuthBackend::Options backend;
  };
  // `config` and `cluster_tokens` may be null (no keys: every token refused `unknown_kid`;
  // no cluster token: no internode bypass); `registry` may be null (no metrics).
  AccessGate(const Snapshot<NodeConfig>* config, crypto::TokenFile* cluster_tokens,
             const Clock& clock, prometheus::Registry* registry, Options options);
  AccessGate(const Snapshot<NodeConfig>* config, crypto::TokenFile* cluster_tokens,
             const Clock& clock, prometheus::Registry* registry)
      : AccessGate(config, cluster_tokens, clock, registry, Options()) {}

  // a request whose verdict is the auth backend's.
  struct Ask {
    AccessBackend backend;
    BackendQuery query;  // the route sets `protocol`
    std::string carry;
    std::string carry_token;
    bool archive = false;
    uint64_t policy_max_sessions = 0;
    std::string cors;
  };
  struct Result {
    std::optional<http::Response> refusal;  // set: send it, serve nothing
    // the query this node's URIs for the viewer carry ("sid=…", SessionIds; "token=…"
    // in backend mode or when the id table is full), and the one URIs to other nodes carry
    // ("token=…": O-6 backups, O-3 redirects); both empty when the token did not come in
    // the query.
    std::string carry;
    std::string carry_token;
    std::string login;  // the token's `sub`, when there is one
    // the most active sessions `login` may hold on this node (the token's
    // `max_sessions`, else the policy's `max_sessions_per_login`); 0: no limit.
    uint64_t max_sessions = 0;
    std::optional<Ask> ask;  // set: no verdict yet, pass it to Resolve
  };
  using Continue = std::function<void(Result)>;
  // asks the backend for `ask` and runs `then` once, on `executor`, with the verdict
  // (never with another `ask`). `active`: the stream's session lifetime (S-18, A-7).
  void Resolve(Ask ask, std::chrono::milliseconds active, boost::asio::any_io_executor executor,
               Continue then);
  // The verdict on a viewer request `ctx` for `stream` under the policy of the node's current
  // configuration (not a pipeline's copy: a policy changes without restarting packaging); a
  // stream the configuration does not hold is refused (403 `policy_unknown`, fail closed).
  // `archive`: a D- read.
  Result Check(const http::RequestContext& ctx, const std::string& stream, bool archive,
               std::string_view cors);
  // The same under a given policy.
  Result Check(const http::RequestContext& ctx, const std::string& stream,
               const AccessConfig& access, bool archive, std::string_view cors);

  // a new play session of `stream` was admitted (counted once per session) under the
  // current policy.
  void CountAdmitted(const std::string& stream);
  void CountAdmitted(const std::string& stream, const AccessConfig& access);

  // the refusal of a new play session beyond its login's limit (403 `session_limit`).
  http::Response SessionLimit(const std::string& stream, std::string_view cors);

  size_t cached_tokens() const { return verified_.size(); }
  size_t session_ids() const { return ids_.size(); }
  AuthBackend& backend() { return backend_; }

 private:
  // Check under `node`, the configuration snapshot taken once for the request (may be null).
  Result CheckUnder(const http::RequestContext& ctx, const std::string& stream,
                    const AccessConfig& access, bool archive, std::string_view cors,
                    const NodeConfig* node);
  int64_t NowSeconds() const;
  // `bearer` is the cluster token (M-3): a node of the cluster.
  bool Internode(std::string_view bearer);
  // `node` holds a revocation of `login` that has not ended.
  bool Revoked(std::string_view login, const NodeConfig* node) const;
  Result Refuse(const std::string& stream, http::Status status, std::string_view reason,
                std::string_view cors);
  // The verdict for a backend's `answer` to `ask`.
  Result Verdict(const Ask& ask, const BackendAnswer& answer);
  // The verified claims of `token` under `node`'s keys (cache, else the verifier), held by
  // the calling thread until its next Verify; null with `reason` set otherwise.
  const crypto::JwtClaims* Verify(std::string_view token, const NodeConfig* node,
                                  std::string* reason);
  prometheus::Counter& Counter(prometheus::Family<prometheus::Counter>* family,
                               const std::string& stream, const char* label,
                               std::string_view value);

  const Snapshot<NodeConfig>* config_;
  crypto::TokenFile* cluster_tokens_;
  const Clock& clock_;
  const std::string node_;
  VerifiedTokens verified_;
  SessionIds ids_;
  AuthBackend backend_;
  absl::Mutex keys_mu_;
  // The key set the cache was filled under; a different one (central's update) clears it.
  std::shared_ptr<const crypto::JwtKeySet> cached_keys_ ABSL_GUARDED_BY(keys_mu_);
  std::atomic<const crypto::JwtKeySet*> cached_keys_raw_{nullptr};  // cached_keys_.get()
  prometheus::Family<prometheus::Counter>* admitted_ = nullptr;
  prometheus::Family<prometheus::Counter>* denied_ = nullptr;
  absl::Mutex counters_mu_;
  // (stream, label value) → counter of admitted_ or denied_; bounded by streams × reasons.
  std::map<std::tuple<const void*, std::string, std::string>, prometheus::Counter*> counters_
      ABSL_GUARDED_BY(counters_mu_);
};

}  // namespace meshwork::streamer
