// A-6, A-7: the node's calls to an auth backend (one per new session, kept answers, bounds),
// the gate's verdicts on the backend's answers, and the answer parser.
#include "streamer/access/auth_backend.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "boost/asio/io_context.hpp"
#include "nlohmann/json.hpp"
#include "prometheus/registry.h"
#include "streamer/access/access_gate.h"

// A namespace of its own: unit tests compile in batches.
namespace meshwork::streamer::auth_backend_test {

using Verdict = BackendAnswer::Verdict;
using namespace std::chrono_literals;

// A transport that records the requests and answers them when the test says.
struct FakeBackend {
  struct Call {
    http::ClientRequest request;
    http::FetchCallback done;
  };
  AuthBackend::Caller Caller() {
    return [this](boost::asio::any_io_executor, http::ClientRequest request,
                  http::FetchCallback done) {
      calls.push_back({std::move(request), std::move(done)});
    };
  }
  static http::Response Answer(http::Status status, std::string body) {
    http::Response res{status, 11};
    res.body() = std::move(body);
    return res;
  }
  std::vector<Call> calls;
};

AccessBackend Policy(std::chrono::seconds ttl = 60s) {
  AccessBackend b;
  b.url = *net::ParseHttpUrl("http://127.0.0.1:9/auth");
  b.ttl = ttl;
  b.timeout = 500ms;
  return b;
}

BackendQuery Query(std::string token = "tok-1", std::string stream = "news") {
  BackendQuery q;
  q.stream = std::move(stream);
  q.token = std::move(token);
  q.client = "198.51.100.7";
  q.protocol = "hls";
  return q;
}

struct Fixture {
  Fixture(size_t max_in_flight = 8) : backend(clock, Options(max_in_flight), &registry) {}
  AuthBackend::Options Options(size_t max_in_flight) {
    AuthBackend::Options o;
    o.max_in_flight = max_in_flight;
    o.caller = fake.Caller();
    return o;
  }
  // Asks and returns where the answer will be written (after io.run()).
  std::shared_ptr<std::optional<BackendAnswer>> Ask(const BackendQuery& q,
                                                    const AccessBackend& policy = Policy()) {
    auto out = std::make_shared<std::optional<BackendAnswer>>();
    backend.Ask(policy, q, 2s, io.get_executor(), [out](const BackendAnswer& a) { *out = a; });
    return out;
  }
  void Run() {
    io.restart();
    io.run();
  }
  FakeClock clock;
  prometheus::Registry registry;
  FakeBackend fake;
  boost::asio::io_context io;
  AuthBackend backend;
};

TEST_CASE("A-6 concurrent first requests of one session wait on one backend call") {
  Fixture f;
  std::vector<std::shared_ptr<std::optional<BackendAnswer>>> answers;
  for (int i = 0; i < 5; ++i) answers.push_back(f.Ask(Query()));
  REQUIRE(f.fake.calls.size() == 1);
  // The request: POST of the documented JSON to the policy's URL, with its deadline.
  const auto& request = f.fake.calls[0].request;
  CHECK(request.method == http::Verb::post);
  CHECK(request.host == "127.0.0.1");
  CHECK(request.port == 9);
  CHECK(request.target == "/auth");
  CHECK(request.timeout == 500ms);
  auto body = nlohmann::json::parse(request.body);
  CHECK(body["stream"] == "news");
  CHECK(body["token"] == "tok-1");
  CHECK(body["protocol"] == "hls");
  CHECK(body.contains("session_id"));
  CHECK(body.contains("user_agent"));
  CHECK(body.contains("referer"));
  CHECK(f.backend.in_flight() == 1);
  f.Run();
  for (auto& a : answers) CHECK_FALSE(a->has_value());  // nothing before the answer
  f.fake.calls[0].done(FakeBackend::Answer(http::Status::ok, R"({"login": "bob"})"));
  f.Run();
  for (auto& a : answers) {
    REQUIRE(a->has_value());
    CHECK((*a)->verdict == Verdict::kAdmit);
    CHECK((*a)->login == "bob");
  }
  CHECK(f.backend.in_flight() == 0);
  // The next request of the session is answered from what was kept.
  auto again = f.Ask(Query());
  f.Run();
  CHECK(f.fake.calls.size() == 1);
  CHECK((*again)->login == "bob");
  // Another token, or the same token for another stream, is another session.
  f.Ask(Query("tok-2"));
  f.Ask(Query("tok-1", "sports"));
  CHECK(f.fake.calls.size() == 3);
}

TEST_CASE("A-7 an admitted session is not asked again while it stays active, past ttl_s") {
  Fixture f;
  f.Ask(Query());
  f.fake.calls[0].done(FakeBackend::Answer(http::Status::ok, R"({"ttl_s": 1})"));
  f.Run();
  // Requests every second for 10 s (active: 2 s): one call in all.
  for (int i = 0; i < 10; ++i) {
    f.clock.Advance(1s);
    auto a = f.Ask(Query());
    f.Run();
    CHECK((*a)->verdict == Verdict::kAdmit);
  }
  CHECK(f.fake.calls.size() == 1);
  // Idle beyond both the answer's ttl_s and the session's lifetime: asked again.
  f.clock.Advance(3s);
  f.Ask(Query());
  CHECK(f.fake.calls.size() == 2);
}

TEST_CASE("A-6 refusals and errors are kept 5 s at most, admissions for ttl_s") {
  Fixture f;
  f.Ask(Query("refused"));
  f.fake.calls[0].done(FakeBackend::Answer(http::Status::forbidden, R"({"reason": "unpaid"})"));
  f.Run();
  auto kept = f.Ask(Query("refused"));
  f.Run();
  CHECK((*kept)->verdict == Verdict::kRefuse);
  CHECK((*kept)->reason == "unpaid");
  CHECK(f.fake.calls.size() == 1);
  f.clock.Advance(6s);
  f.Ask(Query("refused"));
  CHECK(f.fake.calls.size() == 2);

  // A timeout: an error, kept briefly too.
  f.Ask(Query("slow"));
  REQUIRE(f.fake.calls.size() == 3);
  f.fake.calls[2].done(absl::DeadlineExceededError("deadline"));
  f.Run();
  auto timed_out = f.Ask(Query("slow"));
  f.Run();
  CHECK((*timed_out)->verdict == Verdict::kError);
  CHECK((*timed_out)->reason == "timeout");

  // An admission without ttl_s lives for the policy's ttl_s (idle beyond the session).
  f.Ask(Query("ok"), Policy(30s));
  f.fake.calls[3].done(FakeBackend::Answer(http::Status::ok, ""));
  f.Run();
  f.clock.Advance(29s);
  f.Ask(Query("ok"), Policy(30s));
  CHECK(f.fake.calls.size() == 4);
  f.clock.Advance(31s + 2s);
  f.Ask(Query("ok"), Policy(30s));
  CHECK(f.fake.calls.size() == 5);
}

TEST_CASE("A-6 calls in flight are bounded per node: beyond, kBusy without a call") {
  Fixture f(2);
  f.Ask(Query("a"));
  f.Ask(Query("b"));
  auto third = f.Ask(Query("c"));
  f.Run();
  CHECK(f.fake.calls.size() == 2);
  REQUIRE(third->has_value());
  CHECK((*third)->verdict == Verdict::kBusy);
  // A waiter on a call already in flight is not a new call: it waits.
  auto joined = f.Ask(Query("a"));
  f.fake.calls[0].done(FakeBackend::Answer(http::Status::ok, ""));
  f.Run();
  CHECK((*joined)->verdict == Verdict::kAdmit);
  f.Ask(Query("c"));
  CHECK(f.fake.calls.size() == 3);
  double busy = 0;
  for (const auto& family : f.registry.Collect()) {
    if (family.name == "meshwork_access_backend_busy_total") busy = family.metric[0].counter.value;
  }
  CHECK(busy == 1);
}

TEST_CASE("A-6 kept answers are bounded: a full cache keeps no more until a sweep frees room") {
  FakeClock clock;
  FakeBackend fake;
  boost::asio::io_context io;
  AuthBackend::Options options;
  options.max_cached = 2;
  options.caller = fake.Caller();
  AuthBackend backend(clock, options, nullptr);
  auto ask = [&](const char* token) {
    backend.Ask(Policy(1s), Query(token), 2s, io.get_executor(), [](const BackendAnswer&) {});
    if (!fake.calls.empty() && fake.calls.back().done) {
      auto done = std::move(fake.calls.back().done);
      fake.calls.back().done = nullptr;
      done(FakeBackend::Answer(http::Status::ok, ""));
    }
    io.restart();
    io.run();
  };
  ask("a");
  ask("b");
  ask("c");  // the cache is full of fresh answers: c is answered, not kept
  CHECK(backend.cached() == 2);
  ask("c");
  CHECK(fake.calls.size() == 4);
  ask("a");  // still kept
  CHECK(fake.calls.size() == 4);
  // a and b lapse (ttl 1 s, sessions idle beyond 2 s): the next answer sweeps them out.
  clock.Advance(5s);
  ask("c");
  CHECK(fake.calls.size() == 5);
  CHECK(backend.cached() == 1);
  ask("c");
  CHECK(fake.calls.size() == 5);
}

TEST_CASE("A-6 the session key never holds the token in clear") {
  auto key = AuthBackend::KeyOf(Query("secret-token-value"));
  CHECK(key.size() == 64);
  CHECK(key.find("secret") == std::string::npos);
  BackendQuery anonymous = Query("");
  anonymous.user_agent = "hls.js";
  BackendQuery other = anonymous;
  other.client = "198.51.100.8";
  CHECK(AuthBackend::KeyOf(anonymous) != AuthBackend::KeyOf(other));
}

TEST_CASE("A-6 the backend answer: admit, refuse with a safe reason, everything else an error") {
  auto admit = ParseBackendAnswer(200, R"({"login": "carol", "max_sessions": 3, "ttl_s": 0,
                                          "dvr": true, "extra": [1]})");
  CHECK(admit.verdict == Verdict::kAdmit);
  CHECK(admit.login == "carol");
  CHECK(admit.max_sessions == 3);
  CHECK(admit.ttl_s == 0);
  CHECK(admit.dvr);
  CHECK(ParseBackendAnswer(200, "").verdict == Verdict::kAdmit);
  CHECK(ParseBackendAnswer(200, " \r\n").verdict == Verdict::kAdmit);
  CHECK(ParseBackendAnswer(200, "yes").verdict == Verdict::kError);
  CHECK(ParseBackendAnswer(200, "[]").verdict == Verdict::kError);
  CHECK(ParseBackendAnswer(200, R"({"login": ""})").verdict == Verdict::kError);
  CHECK(ParseBackendAnswer(200, R"({"login": "a\nb"})").verdict == Verdict::kError);
  CHECK(ParseBackendAnswer(200, R"({"max_sessions": 0})").verdict == Verdict::kError);
  CHECK(ParseBackendAnswer(200, R"({"max_sessions": 18446744073709551615})").verdict ==
        Verdict::kError);
  CHECK(ParseBackendAnswer(200, R"({"ttl_s": -1})").verdict == Verdict::kError);
  CHECK(ParseBackendAnswer(200, R"({"dvr": "yes"})").verdict == Verdict::kError);
  CHECK(ParseBackendAnswer(200, std::string(20, '[') + std::string(20, ']')).verdict ==
        Verdict::kError);
  CHECK(ParseBackendAnswer(200, std::string(kMaxBackendAnswerBytes + 1, ' ')).verdict ==
        Verdict::kError);
  auto refused = ParseBackendAnswer(403, R"({"reason": "not_subscribed"})");
  CHECK(refused.verdict == Verdict::kRefuse);
  CHECK(refused.reason == "not_subscribed");
  CHECK(ParseBackendAnswer(401, "").reason == "backend_denied");
  CHECK(ParseBackendAnswer(404, R"({"reason": "<script>"})").reason == "backend_denied");
  CHECK(ParseBackendAnswer(403, R"({"reason": "Not-Allowed"})").reason == "backend_denied");
  CHECK(ParseBackendAnswer(500, R"({"login": "x"})").verdict == Verdict::kError);
  CHECK(ParseBackendAnswer(302, "").verdict == Verdict::kError);
  CHECK(ParseBackendAnswer(204, "").verdict == Verdict::kError);
}

// The gate: the backend's answer turned into the viewer's verdict.
struct GateFixture {
  GateFixture(bool allow_on_error = false) {
    auto node = std::make_shared<NodeConfig>();
    auto stream = std::make_shared<StreamConfig>();
    stream->name = "news";
    stream->access.mode = AccessConfig::Mode::kBackend;
    stream->access.backend = Policy();
    stream->access.backend.allow_on_error = allow_on_error;
    stream->access.max_sessions_per_login = 4;
    node->streams["news"] = stream;
    node->revoked_logins["mallory"] = 1'900'000'000;
    config.Set(std::move(node));
  }
  AccessGate::Options Options() {
    AccessGate::Options o;
    o.node = "edge-7";
    o.backend.caller = fake.Caller();
    return o;
  }
  // Checks a request (query `query`) and answers its backend call with `status` and `body`.
  AccessGate::Result Verdict(std::string query, http::Status status, std::string body,
                             bool archive = false) {
    http::RequestContext ctx;
    ctx.query = query;
    ctx.client = *net::IpAddress::Parse("198.51.100.7");
    ctx.request.set(http::beast_http::field::user_agent, "hls.js");
    auto result = gate.Check(ctx, "news", archive, "*");
    REQUIRE(result.ask.has_value());
    CHECK_FALSE(result.refusal.has_value());
    result.ask->query.protocol = "hls";
    std::optional<AccessGate::Result> out;
    size_t before = fake.calls.size();
    gate.Resolve(std::move(*result.ask), 2s, io.get_executor(),
                 [&out](AccessGate::Result r) { out = std::move(r); });
    if (fake.calls.size() > before) {
      auto sent = nlohmann::json::parse(fake.calls.back().request.body);
      CHECK(sent["node"] == "edge-7");
      CHECK(sent["user_agent"] == "hls.js");
      fake.calls.back().done(FakeBackend::Answer(status, std::move(body)));
    }
    io.restart();
    io.run();
    REQUIRE(out.has_value());
    CHECK_FALSE(out->ask.has_value());
    return std::move(*out);
  }
  static std::string Reason(const AccessGate::Result& r) {
    REQUIRE(r.refusal.has_value());
    return nlohmann::json::parse(r.refusal->body())["error"]["reason"].get<std::string>();
  }
  FakeClock clock;
  FakeBackend fake;
  Snapshot<NodeConfig> config;
  boost::asio::io_context io;
  AccessGate gate{&config, nullptr, clock, nullptr, Options()};
};

TEST_CASE("A-6 backend mode: the backend's verdict with its login, reason, dvr and revocations") {
  GateFixture f;
  auto admitted = f.Verdict("token=abc.def.ghi", http::Status::ok, R"({"login": "bob"})");
  CHECK_FALSE(admitted.refusal.has_value());
  CHECK(admitted.login == "bob");
  CHECK(admitted.max_sessions == 4);  // the policy's, the answer naming none
  CHECK(admitted.carry == "token=abc.def.ghi");
  // A-3: an opaque token (base64 '+/=', "~" fields) is carried too, escaped for a query.
  auto opaque =
      f.Verdict("token=exp%3D9~hmac%3Dab%2B%2F%3D%3D", http::Status::ok, R"({"login": "bob"})");
  CHECK(opaque.carry == "token=exp%3D9~hmac%3Dab%2B%2F%3D%3D");
  auto own_limit =
      f.Verdict("token=t2", http::Status::ok, R"({"login": "eve", "max_sessions": 1})");
  CHECK(own_limit.max_sessions == 1);
  CHECK(GateFixture::Reason(f.Verdict("token=t3", http::Status::forbidden,
                                      R"({"reason": "not_subscribed"})")) == "not_subscribed");
  CHECK(GateFixture::Reason(f.Verdict("token=t4", http::Status::ok, "{}", true)) == "dvr");
  CHECK_FALSE(
      f.Verdict("token=t5", http::Status::ok, R"({"dvr": true})", true).refusal.has_value());
  CHECK(GateFixture::Reason(f.Verdict("token=t6", http::Status::ok, R"({"login": "mallory"})")) ==
        "revoked");
  // on_error deny (the default): a broken backend refuses.
  auto broken = f.Verdict("token=t7", http::Status::bad_gateway, "");
  CHECK(GateFixture::Reason(broken) == "backend_error");
  CHECK(broken.refusal->result() == http::Status::forbidden);
}

TEST_CASE("A-6 on_error allow admits when the backend fails, without a login") {
  GateFixture f(true);
  auto admitted = f.Verdict("", http::Status::internal_server_error, "");
  CHECK_FALSE(admitted.refusal.has_value());
  CHECK(admitted.login.empty());
  CHECK(admitted.carry.empty());
}

}  // namespace meshwork::streamer::auth_backend_test
