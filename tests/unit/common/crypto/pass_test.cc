#include "common/crypto/pass.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace meshwork::crypto {
namespace {

constexpr int64_t kNow = 1767225600;  // 2026-01-01T00:00:00Z
constexpr int64_t kSixHours = 6 * 3600;

ViewingKey Key(std::string id, char fill) { return {std::move(id), std::string(32, fill)}; }

PassClaims Claims(std::string key_id = "k3") {
  PassClaims c;
  c.key_id = std::move(key_id);
  c.stream = "live/news";
  c.group = "eu";
  c.issuer = "edge-1";
  c.issued_unix_s = kNow;
  c.expires_unix_s = kNow + kSixHours;
  return c;
}

// "<ok>" or the PermissionDenied message.
std::string Outcome(std::string_view token, std::string_view stream,
                    const std::vector<ViewingKey>& keys, int64_t now) {
  absl::StatusOr<PassClaims> got = VerifyPass(token, stream, keys, now);
  if (got.ok()) return "<ok>";
  CHECK(got.status().code() == absl::StatusCode::kPermissionDenied);
  return std::string(got.status().message());
}

TEST_CASE("O-7 a pass signed with the viewing key verifies on another node") {
  // The issuing node and the backup node hold the same key, each in its own copy.
  ViewingKey on_issuer{"k3", RandomBytes(32)};
  std::vector<ViewingKey> on_backup = {ViewingKey{on_issuer.id, on_issuer.secret}};
  PassClaims claims = Claims();
  std::string token = SignPass(claims, on_issuer);

  absl::StatusOr<PassClaims> got = VerifyPass(token, "live/news", on_backup, kNow + 60);
  REQUIRE(got.ok());
  CHECK(*got == claims);
  // The token is URL-safe as it stands (pass=<token>).
  CHECK(token.find_first_not_of(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.") ==
        std::string::npos);
  CHECK(std::count(token.begin(), token.end(), '.') == 1);
  // Signing is deterministic.
  CHECK(SignPass(claims, on_issuer) == token);
}

TEST_CASE("O-7 the pass format is stable across builds and nodes") {
  // Computed independently (Python: struct + hmac) from the format documented in pass.h.
  std::string secret;
  for (int i = 0; i < 32; ++i) secret.push_back(static_cast<char>(i));
  PassClaims claims = Claims();
  claims.issued_unix_s = 1767225600;
  claims.expires_unix_s = 1767247200;
  const std::string golden =
      "TVdQMQAAAAJrMwAAAAlsaXZlL25ld3MAAAACZXUAAAAGZWRnZS0xAAAAAGlVuQAAAAAAaVYNYA."
      "zZDkP0E-5VMjPadnapUlVn9FffSqljYvEJ-s2McpVjU";
  CHECK(SignPass(claims, ViewingKey{"k3", secret}) == golden);
  absl::StatusOr<PassClaims> got = VerifyPass(golden, "live/news", {{"k3", secret}}, kNow);
  REQUIRE(got.ok());
  CHECK(*got == claims);
}

TEST_CASE("O-7 claims with any bytes round trip and distinct claims sign differently") {
  ViewingKey key = Key("k3", 'x');
  PassClaims odd;
  odd.key_id = "k3";
  odd.stream = std::string("a.b\0c=\xff", 7);
  odd.group = "";
  odd.issuer = std::string(300, '\x01');
  odd.issued_unix_s = -5;
  odd.expires_unix_s = INT64_MAX;
  absl::StatusOr<PassClaims> got = VerifyPass(SignPass(odd, key), odd.stream, {key}, kNow);
  REQUIRE(got.ok());
  CHECK(*got == odd);

  // Moving bytes between adjacent fields changes the payload (length-delimited fields).
  PassClaims a = Claims(), b = Claims();
  a.stream = "live/news";
  a.group = "eu";
  b.stream = "live/new";
  b.group = "seu";
  CHECK(SignPass(a, key) != SignPass(b, key));
}

TEST_CASE("O-7 R-3 a forged pass is refused: another secret under the same key id") {
  std::string token = SignPass(Claims(), Key("k3", 'a'));
  CHECK(Outcome(token, "live/news", {Key("k3", 'b')}, kNow) == "bad signature");
  // A held key with an empty secret never verifies, even a pass "signed" with it.
  std::string unsigned_token = SignPass(Claims(), ViewingKey{"k3", ""});
  CHECK(Outcome(unsigned_token, "live/news", {ViewingKey{"k3", ""}}, kNow) == "bad signature");
}

TEST_CASE("O-7 a pass naming a key this node does not hold is refused naming the id") {
  std::string token = SignPass(Claims("k9"), Key("k9", 'a'));
  CHECK(Outcome(token, "live/news", {Key("k3", 'a'), Key("k2", 'a')}, kNow) == "unknown key id k9");
  CHECK(Outcome(token, "live/news", {}, kNow) == "unknown key id k9");
  // An unprintable or long id is escaped and cut in the message.
  std::string odd_id = std::string("\n\"", 2) + std::string(100, 'z');
  std::string odd = SignPass(Claims(odd_id), Key(odd_id, 'a'));
  std::string message = Outcome(odd, "live/news", {Key("k3", 'a')}, kNow);
  CHECK(message.rfind("unknown key id \\n\\\"zz", 0) == 0);
  CHECK(message.size() == std::string("unknown key id ").size() + 32);
}

TEST_CASE("O-7 R-3 a pass for another stream is refused") {
  ViewingKey key = Key("k3", 'a');
  std::string token = SignPass(Claims(), key);
  CHECK(Outcome(token, "live/sports", {key}, kNow) == "pass is for another stream");
  CHECK(Outcome(token, "live/news/", {key}, kNow) == "pass is for another stream");
  CHECK(Outcome(token, "live/new", {key}, kNow) == "pass is for another stream");
  CHECK(Outcome(token, "", {key}, kNow) == "pass is for another stream");
}

TEST_CASE("O-7 R-3 an expired pass is refused beyond 240 s past its expiry") {
  ViewingKey key = Key("k3", 'a');
  PassClaims claims = Claims();
  std::string token = SignPass(claims, key);
  int64_t exp = claims.expires_unix_s;
  CHECK(Outcome(token, "live/news", {key}, exp) == "<ok>");
  CHECK(Outcome(token, "live/news", {key}, exp + 240) == "<ok>");
  CHECK(Outcome(token, "live/news", {key}, exp + 241) == "pass expired");
  CHECK(Outcome(token, "live/news", {key}, exp + 100000) == "pass expired");
  // A custom skew moves the edge.
  CHECK(VerifyPass(token, "live/news", {key}, exp + 10, 10).ok());
  CHECK(VerifyPass(token, "live/news", {key}, exp + 11, 10).status().message() == "pass expired");
  CHECK(VerifyPass(token, "live/news", {key}, exp + 1, -50).status().message() == "pass expired");
}

TEST_CASE("O-7 R-3 a pass issued more than 240 s ahead of this node's clock is not yet valid") {
  ViewingKey key = Key("k3", 'a');
  PassClaims claims = Claims();
  claims.issued_unix_s = kNow + 240;
  claims.expires_unix_s = kNow + 240 + kSixHours;
  CHECK(Outcome(SignPass(claims, key), "live/news", {key}, kNow) == "<ok>");
  claims.issued_unix_s = kNow + 241;
  claims.expires_unix_s = kNow + 241 + kSixHours;
  CHECK(Outcome(SignPass(claims, key), "live/news", {key}, kNow) == "pass not yet valid");
}

TEST_CASE("O-7 time checks do not overflow at the ends of the clock") {
  ViewingKey key = Key("k3", 'a');
  PassClaims claims = Claims();
  claims.issued_unix_s = INT64_MIN;
  claims.expires_unix_s = INT64_MAX;
  std::string token = SignPass(claims, key);
  CHECK(Outcome(token, "live/news", {key}, INT64_MAX) == "<ok>");
  CHECK(Outcome(token, "live/news", {key}, INT64_MIN) == "<ok>");
  claims.issued_unix_s = INT64_MAX;
  CHECK(Outcome(SignPass(claims, key), "live/news", {key}, INT64_MAX) == "<ok>");
  CHECK(Outcome(SignPass(claims, key), "live/news", {key}, kNow) == "pass not yet valid");
  claims.issued_unix_s = INT64_MIN;
  claims.expires_unix_s = INT64_MIN;
  CHECK(Outcome(SignPass(claims, key), "live/news", {key}, kNow) == "pass expired");
}

TEST_CASE("O-7 during a key rotation overlap passes signed with the previous key still verify") {
  ViewingKey previous{"k3", RandomBytes(32)};
  ViewingKey current{"k4", RandomBytes(32)};
  std::string old_pass = SignPass(Claims("k3"), previous);
  std::string new_pass = SignPass(Claims("k4"), current);

  std::vector<ViewingKey> overlap = {current, previous};
  CHECK(Outcome(old_pass, "live/news", overlap, kNow) == "<ok>");
  CHECK(Outcome(new_pass, "live/news", overlap, kNow) == "<ok>");

  std::vector<ViewingKey> after = {current};
  CHECK(Outcome(old_pass, "live/news", after, kNow) == "unknown key id k3");
  CHECK(Outcome(new_pass, "live/news", after, kNow) == "<ok>");
}

TEST_CASE("O-7 R-3 a tampered pass is refused") {
  ViewingKey key = Key("k3", 'a');
  std::string token = SignPass(Claims(), key);
  size_t dot = token.find('.');
  std::string payload = *Base64UrlDecode(token.substr(0, dot));
  std::string mac = *Base64UrlDecode(token.substr(dot + 1));

  SECTION("a changed claim under the original signature") {
    PassClaims other = Claims();
    other.expires_unix_s += 86400;
    std::string forged = SignPass(other, Key("k3", 'z'));
    std::string spliced = forged.substr(0, forged.find('.')) + token.substr(dot);
    CHECK(Outcome(spliced, "live/news", {key}, kNow) == "bad signature");
  }
  SECTION("every single-bit flip of the signature") {
    for (size_t i = 0; i < mac.size() * 8; ++i) {
      std::string bad = mac;
      bad[i / 8] = static_cast<char>(bad[i / 8] ^ (1 << (i % 8)));
      std::string t = token.substr(0, dot + 1) + Base64UrlEncode(bad);
      INFO(i);
      CHECK(Outcome(t, "live/news", {key}, kNow) == "bad signature");
    }
  }
  SECTION("every single-bit flip of the payload") {
    for (size_t i = 0; i < payload.size() * 8; ++i) {
      std::string bad = payload;
      bad[i / 8] = static_cast<char>(bad[i / 8] ^ (1 << (i % 8)));
      std::string t = Base64UrlEncode(bad) + token.substr(dot);
      INFO(i);
      CHECK_FALSE(VerifyPass(t, "live/news", {key}, kNow).ok());
    }
  }
  SECTION("a truncated or lengthened signature") {
    CHECK(Outcome(token.substr(0, token.size() - 1), "live/news", {key}, kNow) == "malformed pass");
    CHECK(Outcome(token.substr(0, dot + 1) + Base64UrlEncode(mac.substr(0, 31)), "live/news", {key},
                  kNow) == "malformed pass");
    CHECK(Outcome(token.substr(0, dot + 1) + Base64UrlEncode(mac + "x"), "live/news", {key},
                  kNow) == "malformed pass");
  }
  SECTION("trailing payload bytes") {
    std::string t = Base64UrlEncode(payload + std::string(1, '\0')) + "." +
                    Base64UrlEncode(HmacSha256(key.secret, payload + std::string(1, '\0')));
    CHECK(Outcome(t, "live/news", {key}, kNow) == "malformed pass");
  }
}

TEST_CASE("R-3 garbage, empty and oversized passes are malformed") {
  ViewingKey key = Key("k3", 'a');
  std::string token = SignPass(Claims(), key);
  size_t dot = token.find('.');
  for (std::string bad :
       {std::string(), std::string("."), std::string(".."), std::string("abc"),
        std::string("abc.def"), token.substr(0, dot), token.substr(0, dot + 1), token.substr(dot),
        token + ".", token + "." + token.substr(dot + 1), "." + token, token + "=",
        token.substr(0, dot) + "=" + token.substr(dot), token + " ", std::string("\0", 1) + token,
        std::string(5000, 'A'), std::string("%%%.%%%")}) {
    INFO(bad);
    CHECK(Outcome(bad, "live/news", {key}, kNow) == "malformed pass");
  }
  // A well-formed, correctly signed pass just above the length bound is refused unread.
  PassClaims big = Claims();
  big.group = std::string(1500, 'g');
  std::string long_token = SignPass(big, key);
  REQUIRE(long_token.size() > kMaxPassTokenBytes);
  CHECK(Outcome(long_token, "live/news", {key}, kNow) == "malformed pass");
  big.group = std::string(1400, 'g');
  REQUIRE(SignPass(big, key).size() <= kMaxPassTokenBytes);
  CHECK(Outcome(SignPass(big, key), "live/news", {key}, kNow) == "<ok>");
  // Another format version is malformed, even when signed.
  std::string payload = *Base64UrlDecode(token.substr(0, dot));
  payload[3] = '2';
  std::string v2 =
      Base64UrlEncode(payload) + "." + Base64UrlEncode(HmacSha256(key.secret, payload));
  CHECK(Outcome(v2, "live/news", {key}, kNow) == "malformed pass");
}

TEST_CASE("R-7 no refusal message contains the viewing key's secret") {
  ViewingKey key{"k3", "S3cr3tKeyMaterialS3cr3tKeyMateri"};
  ViewingKey other{"k3", "0therK3yMaterial0therK3yMaterial"};
  std::vector<std::string> tokens = {SignPass(Claims(), key), SignPass(Claims("zz"), key), "x.y",
                                     SignPass(Claims(), other)};
  for (const std::string& t : tokens) {
    for (int64_t now : {kNow, kNow + 10 * kSixHours, kNow - 10 * kSixHours}) {
      for (std::string_view stream : {"live/news", "live/other"}) {
        absl::StatusOr<PassClaims> got = VerifyPass(t, stream, {key}, now);
        if (got.ok()) continue;
        std::string m(got.status().message());
        CHECK(m.find("S3cr3t") == std::string::npos);
        CHECK(m.find("0therK3y") == std::string::npos);
        CHECK(m.find(Base64UrlEncode(key.secret)) == std::string::npos);
      }
    }
  }
}

}  // namespace
}  // namespace meshwork::crypto
