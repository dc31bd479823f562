// A-1…A-5, A-10 (spec 09): the node's check of every viewer request against its stream's
// access policy, before anything is served (playlists, MPDs, objects, archive; HTTP/1.1 and
// h2 alike, as both run the same routes).
//
// Order: (1) a request carrying the cluster token (`Authorization: Bearer`, M-3) is a node
// of the cluster (an edge's relay, archive proxy) and is admitted whatever the policy;
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
// A token taken from the query is carried on: `Result::carry` is the query ("token=…") to
// put on every URI the node writes for this viewer (hls::WithQuery), so players need no
// configuration. Tokens from a header or cookie are not copied into URIs (the client sends
// them again by itself).
//
// Verified tokens are cached (VerifiedTokens, A-5) until they expire; a new key set from
// central clears the cache. Tokens never appear in logs or metrics.
// Thread-safe; Check never blocks beyond a signature check (tens of microseconds, once per
// token).
#pragma once

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
#include "streamer/access/verified_tokens.h"
#include "streamer/agent/node_config.h"

namespace meshwork::streamer {

class AccessGate {
 public:
  static constexpr size_t kDefaultCacheCapacity = 100'000;

  // `config` and `cluster_tokens` may be null (no keys: every token refused `unknown_kid`;
  // no cluster token: no internode bypass); `registry` may be null (no metrics).
  AccessGate(const Snapshot<NodeConfig>* config, crypto::TokenFile* cluster_tokens,
             const Clock& clock, prometheus::Registry* registry,
             size_t cache_capacity = kDefaultCacheCapacity);

  struct Result {
    std::optional<http::Response> refusal;  // set: send it, serve nothing
    std::string carry;                      // "token=…" or empty
    std::string login;                      // the token's `sub`, when there is one
    // the most active sessions `login` may hold on this node (the token's
    // `max_sessions`, else the policy's `max_sessions_per_login`); 0: no limit.
    uint64_t max_sessions = 0;
  };
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

 private:
  // The request carries the cluster token (M-3): a node of the cluster.
  bool Internode(const http::RequestContext& ctx);
  // central revoked `login` and the revocation has not ended.
  bool Revoked(std::string_view login) const;
  Result Refuse(const std::string& stream, http::Status status, std::string_view reason,
                std::string_view cors);
  // The verified claims of `token` (cache, else the verifier); the refusal reason otherwise.
  std::pair<std::optional<crypto::JwtClaims>, std::string> Verify(std::string_view token);
  prometheus::Counter& Counter(prometheus::Family<prometheus::Counter>* family,
                               const std::string& stream, const char* label,
                               std::string_view value);

  const Snapshot<NodeConfig>* config_;
  crypto::TokenFile* cluster_tokens_;
  const Clock& clock_;
  VerifiedTokens verified_;
  absl::Mutex keys_mu_;
  // The key set the cache was filled under; a different one (central's update) clears it.
  std::shared_ptr<const crypto::JwtKeySet> cached_keys_ ABSL_GUARDED_BY(keys_mu_);
  prometheus::Family<prometheus::Counter>* admitted_ = nullptr;
  prometheus::Family<prometheus::Counter>* denied_ = nullptr;
  absl::Mutex counters_mu_;
  // (stream, label value) → counter of admitted_ or denied_; bounded by streams × reasons.
  std::map<std::tuple<const void*, std::string, std::string>, prometheus::Counter*> counters_
      ABSL_GUARDED_BY(counters_mu_);
};

}  // namespace meshwork::streamer
