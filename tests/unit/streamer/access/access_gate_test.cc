// A-1…A-5, A-10: the node's check of viewer requests against a stream's access policy.
#include "streamer/access/access_gate.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/crypto/base64url.h"
#include "prometheus/registry.h"
#include "tests/unit/temp_dir.h"

// A namespace of its own: unit tests compile in batches.
namespace meshwork::streamer::access_gate_test {

using Mode = AccessConfig::Mode;

constexpr char kSecret[] = "0123456789abcdef0123456789abcdef";
constexpr int64_t kNow = 1'700'000'000;  // FakeClock's start, in Unix seconds

std::string Token(const std::string& claims, const std::string& kid = "k1") {
  return crypto::SignJwtHs256(claims, kid, kSecret);
}
std::string Claims(const std::string& extra = "", int64_t exp = kNow + 600) {
  return absl::StrCat(R"({"exp":)", exp, R"(,"sub":"alice")", extra, "}");
}

struct Fixture {
  Fixture() {
    auto keys = std::make_shared<crypto::JwtKeySet>();
    REQUIRE(keys->AddHs256("k1", kSecret).ok());
    auto node = std::make_shared<NodeConfig>();
    node->access_keys = std::move(keys);
    config.Set(std::move(node));
  }
  // A request from `client` with `query` (no '?') and optional headers.
  http::RequestContext Request(std::string query = "", std::string client = "198.51.100.7") {
    queries.push_back(std::move(query));
    http::RequestContext ctx;
    ctx.query = queries.back();
    ctx.client = *net::IpAddress::Parse(client);
    return ctx;
  }
  AccessGate::Result Check(const http::RequestContext& ctx, const AccessConfig& access,
                           const std::string& stream = "news", bool archive = false) {
    return gate.Check(ctx, stream, access, archive, "*");
  }
  // The reason member of a refusal's M-1 body.
  static std::string Reason(const AccessGate::Result& r) {
    REQUIRE(r.refusal.has_value());
    auto body = nlohmann::json::parse(r.refusal->body());
    return body["error"]["reason"].get<std::string>();
  }
  FakeClock clock;
  Snapshot<NodeConfig> config;
  prometheus::Registry registry;
  AccessGate gate{&config, nullptr, clock, &registry};
  std::list<std::string> queries;  // stable storage for the contexts' string_views
};

AccessConfig TokenMode() {
  AccessConfig a;
  a.mode = Mode::kToken;
  return a;
}

double CounterValue(prometheus::Registry& registry, const std::string& name,
                    const std::string& label, const std::string& value) {
  for (const auto& family : registry.Collect()) {
    if (family.name != name) continue;
    for (const auto& metric : family.metric) {
      for (const auto& l : metric.label) {
        if (l.name == label && l.value == value) return metric.counter.value;
      }
    }
  }
  return 0;
}

TEST_CASE("A-1 an open stream admits everyone, deny_cidrs and allow_cidrs refuse first") {
  Fixture f;
  AccessConfig open;
  auto r = f.Check(f.Request(), open);
  CHECK_FALSE(r.refusal.has_value());
  CHECK(r.carry.empty());

  AccessConfig fenced;
  fenced.deny = *net::CidrSet::Parse({"198.51.100.0/24"}, "deny_cidrs");
  CHECK(Fixture::Reason(f.Check(f.Request(), fenced)) == "address_denied");
  CHECK_FALSE(f.Check(f.Request("", "203.0.113.9"), fenced).refusal.has_value());

  AccessConfig only;
  only.allow = *net::CidrSet::Parse({"10.0.0.0/8"}, "allow_cidrs");
  auto refused = f.Check(f.Request(), only);
  CHECK(refused.refusal->result() == http::Status::forbidden);
  CHECK(Fixture::Reason(refused) == "address_denied");
  CHECK_FALSE(f.Check(f.Request("", "10.1.2.3"), only).refusal.has_value());

  // In token mode the address rules come before the token: a good token does not help.
  AccessConfig token = TokenMode();
  token.deny = fenced.deny;
  CHECK(Fixture::Reason(f.Check(f.Request("token=" + Token(Claims())), token)) == "address_denied");
}

TEST_CASE("A-1 a policy the node cannot read refuses the stream, never serves it open") {
  Fixture f;
  for (const char* object : {R"({"access": {"mode": "backend"}})", R"({"access": "token"})",
                             R"({"access": {"mode": "token", "deny_cidrs": ["nonsense"]}})"}) {
    INFO(object);
    auto config = ParseStreamConfig("news", nlohmann::json::parse(object));
    CHECK(config->access.mode == Mode::kRefuse);
    auto r = f.Check(f.Request("token=" + Token(Claims())), config->access);
    CHECK(r.refusal->result() == http::Status::forbidden);
    CHECK(Fixture::Reason(r) == "policy_unreadable");
  }
  auto token = ParseStreamConfig(
      "news",
      nlohmann::json::parse(R"({"access": {"mode": "token", "allow_cidrs": ["10.0.0.0/8"]}})"));
  CHECK(token->access.mode == Mode::kToken);
  CHECK(token->access.allow.size() == 1);
  CHECK(ParseStreamConfig("news", nlohmann::json::object())->access.open());
}

TEST_CASE(
    "A-3 a token from the query, a Bearer header or the cookie is accepted, only the "
    "query's is carried into URIs") {
  Fixture f;
  const std::string token = Token(Claims());
  auto missing = f.Check(f.Request(), TokenMode());
  REQUIRE(missing.refusal.has_value());
  CHECK(missing.refusal->result() == http::Status::unauthorized);
  CHECK(Fixture::Reason(missing) == "token_missing");
  CHECK(missing.refusal->at(http::beast_http::field::www_authenticate).find("Bearer") == 0);
  CHECK(missing.refusal->at(http::beast_http::field::cache_control) == "no-store");

  auto by_query = f.Check(f.Request("v=2&token=" + token), TokenMode());
  CHECK_FALSE(by_query.refusal.has_value());
  CHECK(by_query.carry.rfind("sid=", 0) == 0);  // this node's URIs: the short id
  CHECK(by_query.carry.size() == 4 + SessionIds::kIdChars);
  CHECK(by_query.carry_token == "token=" + token);  // other nodes' URIs: the token itself
  CHECK(by_query.login == "alice");

  auto header = f.Request();
  header.request.set(http::beast_http::field::authorization, "bearer " + token);
  auto by_header = f.Check(header, TokenMode());
  CHECK_FALSE(by_header.refusal.has_value());
  CHECK(by_header.carry.empty());
  CHECK(by_header.carry_token.empty());

  auto cookie = f.Request();
  cookie.request.set(http::beast_http::field::cookie, "theme=dark; meshwork_token=" + token);
  auto by_cookie = f.Check(cookie, TokenMode());
  CHECK_FALSE(by_cookie.refusal.has_value());
  CHECK(by_cookie.carry.empty());
  // Over HTTP/2 each cookie comes as a field of its own (RFC 9113 8.2.3).
  auto crumbs = f.Request();
  crumbs.request.insert(http::beast_http::field::cookie, "theme=dark");
  crumbs.request.insert(http::beast_http::field::cookie, "meshwork_token=" + token);
  CHECK_FALSE(f.Check(crumbs, TokenMode()).refusal.has_value());
}

TEST_CASE("A-4 a token that does not fit is refused 403 with its reason") {
  Fixture f;
  auto reason = [&](const std::string& token, const std::string& stream = "news",
                    bool archive = false, const std::string& client = "198.51.100.7") {
    auto r = f.Check(f.Request("token=" + token, client), TokenMode(), stream, archive);
    if (!r.refusal) return std::string("admitted");
    CHECK(r.refusal->result() == http::Status::forbidden);
    return Fixture::Reason(r);
  };
  CHECK(reason(Token(Claims("", kNow - 31))) == "expired");  // beyond the 30 s skew
  CHECK(reason(Token(Claims("", kNow - 29))) == "admitted");
  CHECK(reason(Token(Claims(R"(,"nbf":)" + std::to_string(kNow + 60)))) == "not_yet_valid");
  CHECK(reason(Token(Claims(R"(,"streams":["sport/*"])"))) == "stream");
  CHECK(reason(Token(Claims(R"(,"streams":["sport/*"])")), "sport/live") == "admitted");
  CHECK(reason(Token(Claims(R"(,"ip":"10.0.0.0/8")"))) == "address");
  CHECK(reason(Token(Claims(R"(,"ip":"10.0.0.0/8")")), "news", false, "10.9.9.9") == "admitted");
  CHECK(reason(Token(Claims()), "news", /*archive=*/true) == "dvr");
  CHECK(reason(Token(Claims(R"(,"dvr":true)")), "news", true) == "admitted");
  CHECK(reason(Token(Claims(), "k9")) == "unknown_kid");
  CHECK(reason(crypto::SignJwtHs256(Claims(), "k1", "another secret of 32 bytes......")) ==
        "signature");
  CHECK(reason("not-a-token") == "malformed");
  // alg "none" ({"alg":"none","kid":"k1"}): without a signature it is not even a JWS, with one
  // the algorithm is refused.
  const std::string none =
      "eyJhbGciOiJub25lIiwia2lkIjoiazEifQ." + crypto::Base64UrlEncode(Claims());
  CHECK(reason(none + ".") == "malformed");
  CHECK(reason(none + ".c2ln") == "algorithm");
  CHECK(reason(Token(R"({"sub":"alice"})")) == "no_exp");
}

TEST_CASE("A-5 a verified token is not checked again until the keys change") {
  Fixture f;
  const std::string token = Token(Claims());
  CHECK_FALSE(f.Check(f.Request("token=" + token), TokenMode()).refusal.has_value());
  CHECK(f.gate.cached_tokens() == 1);
  CHECK_FALSE(f.Check(f.Request("token=" + token), TokenMode()).refusal.has_value());
  CHECK(f.gate.cached_tokens() == 1);
  // Central retires k1: the cached verdict goes with it.
  auto node = std::make_shared<NodeConfig>();
  f.config.Set(node);
  CHECK(Fixture::Reason(f.Check(f.Request("token=" + token), TokenMode())) == "unknown_kid");
  CHECK(f.gate.cached_tokens() == 0);
}

TEST_CASE("A-2 the cluster token admits internode reads whatever the policy") {
  TempDir dir("access-gate");
  const auto path = dir.path() / "cluster.token";
  std::ofstream(path) << "cluster-secret-token\n";
  auto tokens = crypto::TokenFile::Open(path.string(), RealClock::Get());
  REQUIRE(tokens.ok());
  Fixture f;
  AccessGate gate(&f.config, tokens->get(), f.clock, nullptr);
  AccessConfig refuse;
  refuse.mode = Mode::kRefuse;
  for (const AccessConfig& access : {TokenMode(), refuse}) {
    auto internode = f.Request();
    internode.request.set(http::beast_http::field::authorization, "Bearer cluster-secret-token");
    CHECK_FALSE(gate.Check(internode, "news", access, true, "*").refusal.has_value());
    auto wrong = f.Request();
    wrong.request.set(http::beast_http::field::authorization, "Bearer cluster-secret-tokeN");
    CHECK(gate.Check(wrong, "news", access, false, "*").refusal.has_value());
  }
}

TEST_CASE("A-10 refusals are counted by stream and reason, admissions by mode") {
  Fixture f;
  f.Check(f.Request(), TokenMode());
  f.Check(f.Request(), TokenMode());
  f.Check(f.Request("token=" + Token(Claims("", kNow - 100))), TokenMode());
  f.gate.CountAdmitted("news", TokenMode());
  CHECK(CounterValue(f.registry, "meshwork_play_denied_total", "reason", "token_missing") == 2);
  CHECK(CounterValue(f.registry, "meshwork_play_denied_total", "reason", "expired") == 1);
  CHECK(CounterValue(f.registry, "meshwork_play_admitted_total", "mode", "token") == 1);
}

TEST_CASE(
    "A-1 the policy comes from the node's current configuration: a stream it does not "
    "hold is refused, a policy changed applies to the next request") {
  Fixture f;
  auto unknown = f.gate.Check(f.Request(), "news", false, "*");
  CHECK(Fixture::Reason(unknown) == "policy_unknown");
  auto node = std::make_shared<NodeConfig>(*f.config.Get());
  node->streams["news"] = ParseStreamConfig("news", nlohmann::json::object());
  f.config.Set(node);
  CHECK_FALSE(f.gate.Check(f.Request(), "news", false, "*").refusal.has_value());
  node = std::make_shared<NodeConfig>(*node);
  node->streams["news"] =
      ParseStreamConfig("news", nlohmann::json::parse(R"({"access": {"mode": "token"}})"));
  f.config.Set(node);
  CHECK(Fixture::Reason(f.gate.Check(f.Request(), "news", false, "*")) == "token_missing");
}

TEST_CASE("A-8 the login and its session limit come from the token, else the policy") {
  Fixture f;
  AccessConfig limited = TokenMode();
  limited.max_sessions_per_login = 3;
  auto by_policy = f.Check(f.Request("token=" + Token(Claims())), limited);
  CHECK(by_policy.login == "alice");
  CHECK(by_policy.max_sessions == 3);
  auto by_claim = f.Check(f.Request("token=" + Token(Claims(R"(,"max_sessions":1)"))), limited);
  CHECK(by_claim.max_sessions == 1);
  auto unlimited = f.Check(f.Request("token=" + Token(Claims())), TokenMode());
  CHECK(unlimited.max_sessions == 0);
  auto refusal = f.gate.SessionLimit("news", "*");
  CHECK(refusal.result() == http::Status::forbidden);
  CHECK(nlohmann::json::parse(refusal.body())["error"]["reason"] == "session_limit");
}

TEST_CASE("A-9 a revoked login is refused until its revocation ends") {
  Fixture f;
  const std::string token = Token(Claims());
  auto node = std::make_shared<NodeConfig>(*f.config.Get());
  node->revoked_logins["alice"] = kNow + 60;
  f.config.Set(node);
  CHECK(Fixture::Reason(f.Check(f.Request("token=" + token), TokenMode())) == "revoked");
  f.clock.Advance(std::chrono::seconds(60));
  CHECK_FALSE(f.Check(f.Request("token=" + token), TokenMode()).refusal.has_value());
  // 0: until the revocation is cleared, however long that takes.
  node = std::make_shared<NodeConfig>(*f.config.Get());
  node->revoked_logins["alice"] = 0;
  f.config.Set(node);
  const std::string lasting = Token(Claims("", kNow + 500LL * 86'400));
  f.clock.Advance(std::chrono::hours(24 * 400));
  CHECK(Fixture::Reason(f.Check(f.Request("token=" + lasting), TokenMode())) == "revoked");
}

TEST_CASE("A-3 the short session id stands for its token on the node that wrote it, only there") {
  Fixture f;
  const std::string token = Token(Claims(R"(,"max_sessions":3,"streams":["news"])"));
  auto first = f.Check(f.Request("token=" + token), TokenMode());
  REQUIRE_FALSE(first.refusal.has_value());
  // The same token always gets the same id here; the id is no part of the token.
  CHECK(f.Check(f.Request("token=" + token), TokenMode()).carry == first.carry);
  CHECK(token.find(first.carry.substr(4)) == std::string::npos);
  auto by_id = f.Check(f.Request(first.carry), TokenMode());
  REQUIRE_FALSE(by_id.refusal.has_value());
  CHECK(by_id.carry == first.carry);
  CHECK(by_id.carry_token == "token=" + token);
  CHECK(by_id.login == "alice");
  CHECK(by_id.max_sessions == 3);
  CHECK(f.gate.session_ids() == 1);

  // An id another node wrote, a made-up one, a malformed one: refused, never served open.
  Fixture other;
  auto elsewhere = other.Check(other.Request(first.carry), TokenMode());
  CHECK(elsewhere.refusal->result() == http::Status::forbidden);
  CHECK(Fixture::Reason(elsewhere) == "session_unknown");
  CHECK(Fixture::Reason(f.Check(f.Request("sid=AAAAAAAAAAAAAAAA"), TokenMode())) ==
        "session_unknown");
  CHECK(Fixture::Reason(f.Check(f.Request("sid=" + token), TokenMode())) == "session_unknown");

  // The id is checked as its token is: the stream, the archive claim, revocation, expiry.
  CHECK(Fixture::Reason(f.Check(f.Request(first.carry), TokenMode(), "sport")) == "stream");
  CHECK(Fixture::Reason(f.Check(f.Request(first.carry), TokenMode(), "news", true)) == "dvr");
  auto node = std::make_shared<NodeConfig>(*f.config.Get());
  node->revoked_logins["alice"] = kNow + 60;
  f.config.Set(node);
  CHECK(Fixture::Reason(f.Check(f.Request(first.carry), TokenMode())) == "revoked");
  f.clock.Advance(std::chrono::seconds(600 + crypto::kJwtSkewSeconds));
  CHECK(Fixture::Reason(f.Check(f.Request(first.carry), TokenMode())) == "expired");
}

TEST_CASE("A-3 session ids are bounded: a full table carries the token itself, evicts nothing") {
  SessionIds ids(2);
  std::string a = ids.Issue("token-a", kNow + 10, kNow);
  std::string b = ids.Issue("token-b", kNow + 100, kNow);
  CHECK(a.size() == SessionIds::kIdChars);
  CHECK(a != b);
  CHECK(ids.Issue("token-c", kNow + 100, kNow).empty());
  CHECK(*ids.Find(a) == "token-a");
  CHECK(*ids.Find(b) == "token-b");
  // Past token-a's expiry its id is swept and token-c gets room.
  std::string c = ids.Issue("token-c", kNow + 100, kNow + 11);
  CHECK(c.size() == SessionIds::kIdChars);
  CHECK(ids.Find(a) == nullptr);
  CHECK(*ids.Find(c) == "token-c");
  CHECK(ids.size() == 2);

  // A gate whose table is full writes the token into URIs.
  Fixture f;
  AccessGate small(&f.config, nullptr, f.clock, nullptr, AccessGate::Options{1, "n", {}});
  auto check = [&](const std::string& token) {
    return small.Check(f.Request("token=" + token), "news", TokenMode(), false, "*");
  };
  CHECK(check(Token(Claims())).carry.rfind("sid=", 0) == 0);
  const std::string second = Token(Claims(R"(,"dvr":true)"));
  auto full = check(second);
  CHECK_FALSE(full.refusal.has_value());
  CHECK(full.carry == "token=" + second);
}

}  // namespace meshwork::streamer::access_gate_test
