#include "streamer/access/access_gate.h"

#include <algorithm>
#include <array>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/http/content.h"
#include "common/http/response.h"
#include "common/net/cidr.h"
#include "common/status/absl_view.h"
#include "nlohmann/json.hpp"

namespace meshwork::streamer {

namespace {

using http::beast_http::field;

std::string_view HeaderValue(const http::RequestContext& ctx, field name) {
  auto it = ctx.request.find(name);
  return it == ctx.request.end() ? std::string_view() : std::string_view(it->value());
}

// "Bearer <token>" (scheme case-insensitive, RFC 9110 §11.1); empty otherwise.
std::string_view BearerToken(const http::RequestContext& ctx) {
  std::string_view value = HeaderValue(ctx, field::authorization);
  constexpr std::string_view kScheme = "bearer ";
  if (value.size() <= kScheme.size() ||
      !absl::EqualsIgnoreCase(AbslView(value.substr(0, kScheme.size())), AbslView(kScheme))) {
    return {};
  }
  value.remove_prefix(kScheme.size());
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  return value;
}

// The value of the `meshwork_token` cookie (RFC 6265 §4.2.1 "name=value; name=value"), in any
// Cookie field: over HTTP/2 browsers send each cookie as a field of its own (RFC 9113 §8.2.3).
std::string_view CookieToken(const http::RequestContext& ctx) {
  constexpr std::string_view kName = "meshwork_token=";
  for (auto [it, end] = ctx.request.equal_range(field::cookie); it != end; ++it) {
    std::string_view cookies = it->value();
    while (!cookies.empty()) {
      size_t semicolon = cookies.find(';');
      std::string_view pair = cookies.substr(0, semicolon);
      while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
      if (pair.substr(0, kName.size()) == kName) return pair.substr(kName.size());
      if (semicolon == std::string_view::npos) break;
      cookies.remove_prefix(semicolon + 1);
    }
  }
  return {};
}

// Only the characters a compact JWT is made of (base64url and '.') may be copied into a URI;
// a table, since a token is checked on every request that carries it in the query.
constexpr std::array<bool, 256> kCompactTokenChars = [] {
  std::array<bool, 256> table{};
  for (int c = 0; c < 256; ++c) {
    table[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '_' || c == '.';
  }
  return table;
}();

// `value` for a query: unreserved characters (RFC 3986 §2.3) as they are, the rest %XX.
std::string QueryEscaped(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(value.size());
  for (unsigned char c : value) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

bool IsCompactToken(std::string_view token) {
  if (token.empty() || token.size() > crypto::kMaxJwtBytes) return false;
  bool ok = true;
  for (char c : token) ok &= kCompactTokenChars[static_cast<unsigned char>(c)];
  return ok;
}

std::string_view ModeName(const AccessConfig& access) {
  switch (access.mode) {
    case AccessConfig::Mode::kOpen:
      return "open";
    case AccessConfig::Mode::kToken:
      return "token";
    case AccessConfig::Mode::kBackend:
      return "backend";
    case AccessConfig::Mode::kRefuse:
      return "refuse";
  }
  return "open";
}

}  // namespace

AccessGate::AccessGate(const Snapshot<NodeConfig>* config, crypto::TokenFile* cluster_tokens,
                       const Clock& clock, prometheus::Registry* registry, Options options)
    : config_(config),
      cluster_tokens_(cluster_tokens),
      clock_(clock),
      node_(std::move(options.node)),
      verified_(options.cache_capacity),
      ids_(options.cache_capacity),
      backend_(clock, std::move(options.backend), registry) {
  if (!registry) return;
  admitted_ = &prometheus::BuildCounter()
                   .Name("meshwork_play_admitted_total")
                   .Help("Play sessions admitted (A-10), by stream and access mode")
                   .Register(*registry);
  denied_ = &prometheus::BuildCounter()
                 .Name("meshwork_play_denied_total")
                 .Help("Viewer requests refused by the access policy (A-10), by stream and reason")
                 .Register(*registry);
}

prometheus::Counter& AccessGate::Counter(prometheus::Family<prometheus::Counter>* family,
                                         const std::string& stream, const char* label,
                                         std::string_view value) {
  absl::MutexLock lock(&counters_mu_);
  auto key = std::make_tuple(static_cast<const void*>(family), stream, std::string(value));
  auto it = counters_.find(key);
  if (it == counters_.end()) {
    it = counters_.emplace(key, &family->Add({{"stream", stream}, {label, std::string(value)}}))
             .first;
  }
  return *it->second;
}

void AccessGate::CountAdmitted(const std::string& stream) {
  if (!admitted_ || !config_) return;
  auto config = config_->Get();
  if (auto it = config->streams.find(stream); it != config->streams.end()) {
    CountAdmitted(stream, it->second->access);
  }
}

AccessGate::Result AccessGate::Check(const http::RequestContext& ctx, const std::string& stream,
                                     bool archive, std::string_view cors) {
  // Every viewer request comes here: the configuration is read through this thread's cache.
  thread_local Snapshot<NodeConfig>::ReadCache cache;
  const NodeConfig* config = config_ ? config_->Read(cache) : nullptr;
  const StreamConfig* settings = nullptr;
  if (config) {
    if (auto it = config->streams.find(stream); it != config->streams.end()) {
      settings = it->second.get();
    }
  }
  if (!settings) {
    if (Internode(BearerToken(ctx))) return {};
    return Refuse(stream, http::Status::forbidden, "policy_unknown", cors);
  }
  return CheckUnder(ctx, stream, settings->access, archive, cors, config);
}

void AccessGate::CountAdmitted(const std::string& stream, const AccessConfig& access) {
  if (admitted_) Counter(admitted_, stream, "mode", ModeName(access)).Increment();
}

bool AccessGate::Revoked(std::string_view login, const NodeConfig* node) const {
  if (!node) return false;
  auto it = node->revoked_logins.find(login);
  // 0: until cleared.
  return it != node->revoked_logins.end() && (it->second == 0 || NowSeconds() < it->second);
}

bool AccessGate::Internode(std::string_view bearer) {
  return !bearer.empty() && cluster_tokens_ && cluster_tokens_->Accepts(bearer);
}

AccessGate::Result AccessGate::Refuse(const std::string& stream, http::Status status,
                                      std::string_view reason, std::string_view cors) {
  if (denied_) Counter(denied_, stream, "reason", reason).Increment();
  nlohmann::json body = {
      {"error",
       {{"status", static_cast<int>(status)},
        {"code", status == http::Status::unauthorized ? "unauthenticated" : "permission_denied"},
        {"reason", reason},
        {"message", absl::StrCat("viewer access refused: ", AbslView(reason))}}}};
  http::Response res = http::JsonResponse(status, body);
  res.set(field::cache_control, "no-store");
  if (status == http::Status::unauthorized) {
    res.set(field::www_authenticate, "Bearer realm=\"meshwork\"");
  }
  http::AddCors(res, cors);
  Result result;
  result.refusal = std::move(res);
  return result;
}

http::Response AccessGate::SessionLimit(const std::string& stream, std::string_view cors) {
  return std::move(*Refuse(stream, http::Status::forbidden, "session_limit", cors).refusal);
}

int64_t AccessGate::NowSeconds() const {
  return std::chrono::duration_cast<std::chrono::seconds>(clock_.Now().time_since_epoch()).count();
}

const crypto::JwtClaims* AccessGate::Verify(std::string_view token, const NodeConfig* node,
                                            std::string* reason) {
  const int64_t now_s = NowSeconds();
  const std::shared_ptr<const crypto::JwtKeySet> no_keys;
  const auto& keys = node ? node->access_keys : no_keys;
  // The cache holds tokens verified under cached_keys_; another key set empties it. The lock is
  // taken only when the set changed (cached_keys_ keeps the old set alive, so its address
  // cannot be reused by a new one while it is compared).
  if (keys.get() != cached_keys_raw_.load(std::memory_order_acquire)) {
    absl::MutexLock lock(&keys_mu_);
    if (keys != cached_keys_) {
      verified_.Clear();
      cached_keys_ = keys;
      cached_keys_raw_.store(keys.get(), std::memory_order_release);
    }
  }
  // A player's requests on one worker repeat one token: the thread's last verified token is
  // answered without the digest and the cache's lock. The memo holds its key set, so a set that
  // replaced it (a rotation) cannot share its address.
  struct Memo {
    std::shared_ptr<const crypto::JwtKeySet> keys;
    std::string token;
    std::shared_ptr<const crypto::JwtClaims> claims;
  };
  thread_local Memo memo;
  if (memo.claims && memo.keys == keys && memo.token == token &&
      memo.claims->exp + crypto::kJwtSkewSeconds > now_s) {
    return memo.claims.get();
  }
  // The memo holds what it answers until this thread's next Verify (the caller uses the claims
  // only within its request); only verified tokens, at most kMaxJwtBytes, are kept.
  auto remember = [&](std::shared_ptr<const crypto::JwtClaims> claims) {
    memo = Memo{keys, std::string(token), std::move(claims)};
    return memo.claims.get();
  };
  if (auto found = verified_.Find(token, now_s, keys.get())) return remember(std::move(found));
  if (!keys) {
    *reason = "unknown_kid";
    return nullptr;
  }
  auto claims = crypto::VerifyJwt(token, *keys, now_s);
  if (!claims.ok()) {
    *reason = std::string(claims.status().message());
    return nullptr;
  }
  verified_.Insert(token, *claims, keys);
  return remember(std::make_shared<const crypto::JwtClaims>(*std::move(claims)));
}

AccessGate::Result AccessGate::Check(const http::RequestContext& ctx, const std::string& stream,
                                     const AccessConfig& access, bool archive,
                                     std::string_view cors) {
  auto config = config_ ? config_->Get() : nullptr;
  return CheckUnder(ctx, stream, access, archive, cors, config.get());
}

AccessGate::Result AccessGate::CheckUnder(const http::RequestContext& ctx,
                                          const std::string& stream, const AccessConfig& access,
                                          bool archive, std::string_view cors,
                                          const NodeConfig* node) {
  if (access.open()) return {};
  const std::string_view bearer = BearerToken(ctx);
  // A bearer shaped as a compact JWT is a viewer's token: the cluster-token check (an HMAC
  // under a lock) is put off until the request would be refused.
  const bool viewer_bearer = std::count(bearer.begin(), bearer.end(), '.') == 2;
  if (!bearer.empty() && !viewer_bearer && Internode(bearer)) return {};
  auto refuse = [&](http::Status status, std::string_view reason) -> Result {
    if (viewer_bearer && Internode(bearer)) return {};
    return Refuse(stream, status, reason, cors);
  };
  if (access.mode == AccessConfig::Mode::kRefuse) {
    return refuse(http::Status::forbidden, "policy_unreadable");
  }
  if (access.deny.Contains(ctx.client) ||
      (!access.allow.empty() && !access.allow.Contains(ctx.client))) {
    return refuse(http::Status::forbidden, "address_denied");
  }
  if (access.mode == AccessConfig::Mode::kOpen) return {};
  std::string decoded;  // a `?token=` that was percent-encoded
  const std::optional<std::string_view> from_query = ctx.QueryParam("token", &decoded);
  if (access.mode == AccessConfig::Mode::kBackend) {
    std::string_view token = from_query ? *from_query : bearer;
    if (token.empty()) token = CookieToken(ctx);
    Ask ask;
    ask.backend = access.backend;
    ask.archive = archive;
    ask.policy_max_sessions = access.max_sessions_per_login;
    ask.cors = std::string(cors);
    // a backend's tokens are opaque (base64 with '+/=', "exp=…~hmac=…"): carried
    // percent-encoded, bounded like a JWT.
    if (from_query && !from_query->empty() && from_query->size() <= crypto::kMaxJwtBytes) {
      ask.carry = absl::StrCat("token=", QueryEscaped(*from_query));
      ask.carry_token = ask.carry;
    }
    BackendQuery& q = ask.query;
    q.stream = stream;
    q.client = ctx.client.ToString();
    q.user_agent = std::string(HeaderValue(ctx, field::user_agent).substr(0, 512));
    q.referer = std::string(HeaderValue(ctx, field::referer).substr(0, 2048));
    q.token = std::string(token.substr(0, crypto::kMaxJwtBytes));
    q.node = node_;
    q.session_id = AuthBackend::KeyOf(q).substr(0, 32);
    Result result;
    result.ask = std::move(ask);
    return result;
  }
  // `?sid=` is the short id this node wrote for a token (SessionIds); it stands for it.
  const std::string* from_id = nullptr;
  std::optional<std::string> sid;
  if (!from_query) {
    if ((sid = ctx.QueryParam("sid"))) {
      from_id = ids_.Find(*sid);
      if (!from_id) return refuse(http::Status::forbidden, "session_unknown");
    }
  }
  std::string_view token = from_query ? *from_query : from_id ? std::string_view(*from_id) : bearer;
  if (token.empty()) token = CookieToken(ctx);
  if (token.empty()) return refuse(http::Status::unauthorized, "token_missing");
  std::string reason;
  const crypto::JwtClaims* claims = Verify(token, node, &reason);
  if (!claims) return refuse(http::Status::forbidden, reason);
  if (!crypto::JwtAllowsStream(*claims, stream)) return refuse(http::Status::forbidden, "stream");
  if (claims->ip) {
    auto cidr = net::Cidr::Parse(*claims->ip);
    if (!cidr.ok() || !cidr->Contains(ctx.client)) {
      return refuse(http::Status::forbidden, "address");
    }
  }
  if (archive && !claims->dvr) return refuse(http::Status::forbidden, "dvr");
  if (!claims->sub.empty() && Revoked(claims->sub, node)) {
    return refuse(http::Status::forbidden, "revoked");
  }
  Result result;
  // An id stands only for a token that was compact when the id was issued.
  if (from_id || (from_query && IsCompactToken(token))) {
    // This node's URIs carry the short id (the token when the id table is full); URIs to other
    // nodes the token itself.
    result.carry_token = absl::StrCat("token=", AbslView(token));
    if (from_id) {
      result.carry = absl::StrCat("sid=", *sid);  // the id the viewer presented stands already
    } else {
      std::string id = ids_.Issue(token, claims->exp + crypto::kJwtSkewSeconds, NowSeconds());
      result.carry = id.empty() ? result.carry_token : absl::StrCat("sid=", id);
    }
  }
  result.login = claims->sub;
  if (!result.login.empty()) {
    result.max_sessions = claims->max_sessions && *claims->max_sessions > 0
                              ? static_cast<uint64_t>(*claims->max_sessions)
                              : access.max_sessions_per_login;
  }
  return result;
}

void AccessGate::Resolve(Ask ask, std::chrono::milliseconds active,
                         boost::asio::any_io_executor executor, Continue then) {
  auto shared = std::make_shared<const Ask>(std::move(ask));
  backend_.Ask(shared->backend, shared->query, active, std::move(executor),
               [this, shared, then = std::move(then)](const BackendAnswer& answer) {
                 then(Verdict(*shared, answer));
               });
}

AccessGate::Result AccessGate::Verdict(const Ask& ask, const BackendAnswer& answer) {
  const std::string& stream = ask.query.stream;
  switch (answer.verdict) {
    case BackendAnswer::Verdict::kRefuse:
      return Refuse(stream, http::Status::forbidden, answer.reason, ask.cors);
    case BackendAnswer::Verdict::kBusy: {
      Result busy = Refuse(stream, http::Status::service_unavailable, "backend_busy", ask.cors);
      busy.refusal->set(field::retry_after, "1");
      return busy;
    }
    case BackendAnswer::Verdict::kError:
      if (!ask.backend.allow_on_error) {
        return Refuse(stream, http::Status::forbidden, "backend_error", ask.cors);
      }
      break;
    case BackendAnswer::Verdict::kAdmit:
      if (ask.archive && !answer.dvr) {
        return Refuse(stream, http::Status::forbidden, "dvr", ask.cors);
      }
      if (!answer.login.empty() &&
          Revoked(answer.login, config_ ? config_->Get().get() : nullptr)) {
        return Refuse(stream, http::Status::forbidden, "revoked", ask.cors);
      }
      break;
  }
  Result result;
  result.carry = ask.carry;
  result.carry_token = ask.carry_token;
  if (answer.verdict == BackendAnswer::Verdict::kAdmit && !answer.login.empty()) {
    result.login = answer.login;
    result.max_sessions = answer.max_sessions ? answer.max_sessions : ask.policy_max_sessions;
  }
  return result;
}

}  // namespace meshwork::streamer
