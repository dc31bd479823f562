// A-1 (a stream's `access` member) and A-4 (access keys): validation and canonical forms.
#include <catch2/catch.hpp>
#include <string>
#include <string_view>

#include "central/cluster/config_push.h"
#include "central/model/access_keys.h"
#include "central/model/config_service.h"
#include "central/model/object_codecs.h"
#include "common/status/status_map.h"
#include "nlohmann/json.hpp"

// A namespace of its own: unit tests compile in batches.
namespace meshwork::central::stream_access_test {

using nlohmann::json;

constexpr char kPublicPem[] =
    "-----BEGIN PUBLIC KEY-----\n"
    "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEBiitYVPCPZe7PAj/tlrqhYv0TZg7\n"
    "SkBoCjdfLhAIsIyTmR0GAopSRghD7h5P9G7ylZW7tIp5Qtb+ZQZ+0iV7Tw==\n"
    "-----END PUBLIC KEY-----\n";
constexpr char kEd25519Pem[] =
    "-----BEGIN PUBLIC KEY-----\n"
    "MCowBQYDK2VwAyEAso/EdUjmowgx6ySPXMESRToZC53OHnMTu4Y7kc1/uv4=\n"
    "-----END PUBLIC KEY-----\n";
// base64url of the 32 bytes "0123456789abcdef0123456789abcdef".
constexpr char kSecret[] = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY";

std::string AccessError(std::string_view access) {
  auto result =
      ValidateStream(json::parse(std::string(R"({"access": )") + std::string(access) + "}"), "ch1");
  if (result.ok()) return "ok";
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return FieldOf(result.status());
}

std::string KeyError(const json& body, std::string_view kid = "k1") {
  auto result = ValidateAccessKey(body, kid);
  if (result.ok()) return "ok";
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  // The secret is never quoted back.
  CHECK(std::string(result.status().message()).find(kSecret) == std::string::npos);
  return FieldOf(result.status());
}

TEST_CASE("A-1 a stream's access member: absent is open, CIDRs kept canonical") {
  auto none = ValidateStream(json::object(), "ch1");
  REQUIRE(none.ok());
  CHECK_FALSE(none->contains("access"));
  auto token = ValidateStream(
      json::parse(R"({"access": {"mode": "token", "allow_cidrs": ["10.0.0.0/8", "10.0.0.0/8"],
                                 "deny_cidrs": ["2001:DB8::/32"]}})"),
      "ch1");
  REQUIRE(token.ok());
  CHECK((*token)["access"] == json::parse(R"({"mode": "token", "allow_cidrs": ["10.0.0.0/8"],
                                              "deny_cidrs": ["2001:db8::/32"],
                                              "max_sessions_per_login": null,
                                              "backend": null})"));
  auto open = ValidateStream(json::parse(R"({"access": {}})"), "ch1");
  REQUIRE(open.ok());
  CHECK((*open)["access"]["mode"] == "open");
}

TEST_CASE("A-6 a backend policy: canonical with its defaults, each bad member named") {
  auto backend = ValidateStream(
      json::parse(
          R"({"access": {"mode": "backend", "backend": {"url": "http://[::1]:8080/auth"}}})"),
      "ch1");
  REQUIRE(backend.ok());
  CHECK((*backend)["access"]["backend"] == json::parse(R"({"url": "http://[::1]:8080/auth",
      "timeout_ms": 2000, "ttl_s": 60, "on_error": "deny"})"));
  CHECK(AccessError(R"({"mode": "backend"})") == "access.backend");
  CHECK(AccessError(R"({"mode": "backend", "backend": {}})") == "access.backend.url");
  CHECK(AccessError(R"({"mode": "backend", "backend": {"url": "https://a/"}})") == "ok");
  CHECK(AccessError(R"({"mode": "backend", "backend": {"url": "ftp://a/"}})") ==
        "access.backend.url");
  CHECK(AccessError(R"({"mode": "backend", "backend": {"url": "http://u:p@a/"}})") ==
        "access.backend.url");
  CHECK(AccessError(R"({"mode": "backend", "backend": {"url": "http://a:0/"}})") ==
        "access.backend.url");
  CHECK(AccessError(R"({"mode": "backend", "backend": {"url": "http://a/", "timeout_ms": 0}})") ==
        "access.backend.timeout_ms");
  CHECK(AccessError(R"({"mode": "backend", "backend": {"url": "http://a/", "ttl_s": 86401}})") ==
        "access.backend.ttl_s");
  CHECK(AccessError(R"({"mode": "backend", "backend": {"url": "http://a/", "on_error": "x"}})") ==
        "access.backend.on_error");
  CHECK(AccessError(R"({"mode": "backend", "backend": {"url": "http://a/", "extra": 1}})") ==
        "access.backend.extra");
  CHECK(AccessError(R"({"mode": "backend", "backend": {"url": "http://a/", "on_error": "allow",
                       "timeout_ms": 30000, "ttl_s": 1}})") == "ok");
}

TEST_CASE("A-1 a bad access member names its field, and is refused, not ignored") {
  CHECK(AccessError(R"("token")") == "access");
  CHECK(AccessError(R"({"mode": "closed"})") == "access.mode");
  CHECK(AccessError(R"({"mode": "token", "max_sessions_per_login": 2})") == "ok");
  CHECK(AccessError(R"({"mode": "token", "max_sessions_per_login": 0})") ==
        "access.max_sessions_per_login");
  CHECK(AccessError(R"({"mode": "token", "max_sessions_per_login": "2"})") ==
        "access.max_sessions_per_login");
  CHECK(AccessError(R"({"mode": "token", "max_sessions_per_login": null})") == "ok");
  CHECK(AccessError(R"({"allow_cidrs": "10.0.0.0/8"})") == "access.allow_cidrs");
  CHECK(AccessError(R"({"deny_cidrs": ["10.0.0.0/8", "x"]})") == "access.deny_cidrs[1]");
  CHECK(AccessError(R"({"deny_cidrs": [7]})") == "access.deny_cidrs[0]");
  CHECK(AccessError(R"({"mode": "token", "extra": 1})") == "access.extra");
}

TEST_CASE("A-4 access keys: HS256 secrets and ES256 public keys validated by field") {
  auto hs = ValidateAccessKey(json{{"alg", "HS256"}, {"secret", kSecret}}, "k1");
  REQUIRE(hs.ok());
  CHECK(*hs == json{{"kid", "k1"}, {"alg", "HS256"}, {"secret", kSecret}});
  CHECK(AccessKeyPublicJson(*hs) == json{{"kid", "k1"}, {"alg", "HS256"}});
  auto es = ValidateAccessKey(json{{"alg", "ES256"}, {"public_key_pem", kPublicPem}}, "ec-1");
  REQUIRE(es.ok());
  CHECK((*es)["public_key_pem"] == kPublicPem);

  CHECK(KeyError(json{{"alg", "none"}, {"secret", kSecret}}) == "alg");
  CHECK(KeyError(json{{"alg", "RS256"}, {"secret", kSecret}}) == "alg");
  CHECK(KeyError(json{{"secret", kSecret}}) == "alg");
  CHECK(KeyError(json{{"alg", "HS256"}, {"secret", "c2hvcnQ"}}) == "secret");  // 5 bytes
  CHECK(KeyError(json{{"alg", "HS256"}, {"secret", "not base64url!"}}) == "secret");
  CHECK(KeyError(json{{"alg", "HS256"}}) == "secret");
  CHECK(KeyError(json{{"alg", "HS256"}, {"secret", kSecret}, {"public_key_pem", kPublicPem}}) ==
        "public_key_pem");
  CHECK(KeyError(json{{"alg", "ES256"}, {"public_key_pem", kEd25519Pem}}) == "public_key_pem");
  CHECK(KeyError(json{{"alg", "ES256"}, {"public_key_pem", "garbage"}}) == "public_key_pem");
  CHECK(KeyError(json{{"alg", "ES256"}, {"secret", kSecret}}) == "secret");
  CHECK(KeyError(json{{"alg", "HS256"}, {"secret", kSecret}}, "bad kid") == "kid");
  CHECK(KeyError(json{{"alg", "HS256"}, {"secret", kSecret}, {"kid", "k2"}}) == "kid");
  CHECK(KeyError(json{{"alg", "HS256"}, {"secret", kSecret}, {"other", 1}}) == "other");
}

TEST_CASE("A-4 access keys go to every node with each change, an empty set included") {
  ClusterConfig config;
  config.revision = 7;
  config.access_keys["k1"] =
      ObjectRecord{json{{"kid", "k1"}, {"alg", "HS256"}, {"secret", kSecret}}, 5};
  config.access_keys["ec-1"] =
      ObjectRecord{json{{"kid", "ec-1"}, {"alg", "ES256"}, {"public_key_pem", kPublicPem}}, 6};
  config.access_keys_revision = 6;
  auto update = BuildConfigUpdate(config, "edge-1", 5);
  REQUIRE(update.has_access_keys());
  REQUIRE(update.access_keys().keys_size() == 2);
  CHECK(update.access_keys().keys(0).kid() == "ec-1");
  CHECK(update.access_keys().keys(0).public_key_pem() == kPublicPem);
  CHECK(update.access_keys().keys(1).secret() == kSecret);
  CHECK_FALSE(BuildConfigUpdate(config, "edge-1", 6).has_access_keys());
  config.access_keys.clear();  // every key deleted at revision 8
  config.access_keys_revision = config.revision = 8;
  auto cleared = BuildConfigUpdate(config, "edge-1", 7);
  REQUIRE(cleared.has_access_keys());
  CHECK(cleared.access_keys().keys_size() == 0);
}

TEST_CASE(
    "A-9 a revocation names a login and an end (none: until cleared), and goes to every node") {
  auto revoked = ValidateRevocation(json{{"until_unix_s", 1'800'000'000}}, "alice@example.com");
  REQUIRE(revoked.ok());
  CHECK(*revoked == json{{"login", "alice@example.com"}, {"until_unix_s", 1'800'000'000}});
  CHECK(*ValidateRevocation(json::object(), "alice") ==
        json{{"login", "alice"}, {"until_unix_s", nullptr}});
  CHECK(FieldOf(ValidateRevocation(json{{"until_unix_s", "soon"}}, "alice").status()) ==
        "until_unix_s");
  CHECK(FieldOf(ValidateRevocation(json{{"until_unix_s", 5}}, "").status()) == "login");
  CHECK(FieldOf(ValidateRevocation(json{{"until_unix_s", 5}}, "a\nb").status()) == "login");
  ClusterConfig config;
  config.revision = 3;
  config.revocations["alice"] =
      ObjectRecord{*ValidateRevocation(json{{"until_unix_s", 9}}, "alice"), 3};
  config.revocations_revision = 3;
  auto update = BuildConfigUpdate(config, "edge-1", 2);
  REQUIRE(update.revoked_logins().logins_size() == 1);
  CHECK(update.revoked_logins().logins(0).login() == "alice");
  CHECK(update.revoked_logins().logins(0).until_unix_s() == 9);
  CHECK_FALSE(BuildConfigUpdate(config, "edge-1", 3).has_revoked_logins());
  // Until cleared: sent as 0.
  config.revocations["bob"] = ObjectRecord{*ValidateRevocation(json::object(), "bob"), 4};
  config.revocations_revision = config.revision = 4;
  auto forever = BuildConfigUpdate(config, "edge-1", 3);
  REQUIRE(forever.revoked_logins().logins_size() == 2);
  CHECK(forever.revoked_logins().logins(1).login() == "bob");
  CHECK(forever.revoked_logins().logins(1).until_unix_s() == 0);
}

}  // namespace meshwork::central::stream_access_test
