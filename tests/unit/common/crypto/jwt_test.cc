// A-4: viewer tokens are JWTs signed HS256 or ES256 by a key central named; `none`, algorithm
// confusion, a wrong kid, signature, stream or time are refused with their reason.
#include "common/crypto/jwt.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/crypto/base64url.h"
#include "common/crypto/primitives.h"

// A namespace of its own: the unit tests compile in batches, where another file's kNow or
// helpers would otherwise be in scope.
namespace meshwork::crypto::jwt_test {

constexpr int64_t kNow = 1'796'000'000;
const std::string kSecret(32, '\x5a');

std::string Reason(const absl::StatusOr<JwtClaims>& r) {
  if (r.ok()) return "ok";
  CHECK(r.status().code() == absl::StatusCode::kPermissionDenied);
  return std::string(r.status().message());
}

std::string Encode(const std::string& json) { return Base64UrlEncode(json); }

// An EC P-256 key pair made by OpenSSL: its public PEM, and a JOSE (r || s) ES256 signer.
struct EcKey {
  EVP_PKEY* pkey = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  ~EcKey() { EVP_PKEY_free(pkey); }
  std::string PublicPem() const {
    BIO* bio = BIO_new(BIO_s_mem());
    REQUIRE(PEM_write_bio_PUBKEY(bio, pkey) == 1);
    char* data = nullptr;
    long n = BIO_get_mem_data(bio, &data);
    std::string pem(data, static_cast<size_t>(n));
    BIO_free(bio);
    return pem;
  }
  std::string Sign(const std::string& header_json, const std::string& payload_json) const {
    std::string input = Encode(header_json) + "." + Encode(payload_json);
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    size_t len = 0;
    REQUIRE(EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, pkey) == 1);
    REQUIRE(EVP_DigestSign(ctx, nullptr, &len, reinterpret_cast<const unsigned char*>(input.data()),
                           input.size()) == 1);
    std::string der(len, '\0');
    REQUIRE(EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(der.data()), &len,
                           reinterpret_cast<const unsigned char*>(input.data()),
                           input.size()) == 1);
    EVP_MD_CTX_free(ctx);
    const unsigned char* p = reinterpret_cast<const unsigned char*>(der.data());
    ECDSA_SIG* sig = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(len));
    REQUIRE(sig != nullptr);
    std::string raw(64, '\0');
    BN_bn2binpad(ECDSA_SIG_get0_r(sig), reinterpret_cast<unsigned char*>(raw.data()), 32);
    BN_bn2binpad(ECDSA_SIG_get0_s(sig), reinterpret_cast<unsigned char*>(raw.data()) + 32, 32);
    ECDSA_SIG_free(sig);
    return input + "." + Base64UrlEncode(raw);
  }
};

JwtKeySet Keys(const EcKey* ec = nullptr) {
  JwtKeySet keys;
  REQUIRE(keys.AddHs256("h1", kSecret).ok());
  if (ec) REQUIRE(keys.AddEs256("e1", ec->PublicPem()).ok());
  return keys;
}

TEST_CASE("A-4 an HS256 token is verified and its claims read") {
  auto keys = Keys();
  std::string token = SignJwtHs256(
      absl::StrCat(R"({"exp":)", kNow + 60, R"(,"nbf":)", kNow - 10,
                   R"(,"sub":"alice","streams":["news/*","allhands"],"ip":"10.0.0.0/8",)"
                   R"("max_sessions":2,"dvr":true,"other":{"ignored":1}})"),
      "h1", kSecret);
  auto claims = VerifyJwt(token, keys, kNow);
  REQUIRE(claims.ok());
  CHECK(claims->kid == "h1");
  CHECK(claims->sub == "alice");
  CHECK(claims->exp == kNow + 60);
  CHECK(claims->ip == "10.0.0.0/8");
  CHECK(claims->max_sessions == 2);
  CHECK(claims->dvr);
  CHECK(JwtAllowsStream(*claims, "allhands"));
  CHECK(JwtAllowsStream(*claims, "news/hd"));
  CHECK_FALSE(JwtAllowsStream(*claims, "news"));
  CHECK_FALSE(JwtAllowsStream(*claims, "newsroom/hd"));
  CHECK_FALSE(JwtAllowsStream(*claims, "allhands2"));
}

TEST_CASE("A-4 an ES256 token signed with the P-256 key is verified, a changed one is not") {
  EcKey ec;
  REQUIRE(ec.pkey != nullptr);
  auto keys = Keys(&ec);
  const std::string header = R"({"alg":"ES256","typ":"JWT","kid":"e1"})";
  const std::string payload = absl::StrCat(R"({"exp":)", kNow + 60, R"(,"sub":"bob"})");
  std::string token = ec.Sign(header, payload);
  auto claims = VerifyJwt(token, keys, kNow);
  REQUIRE(claims.ok());
  CHECK(claims->sub == "bob");
  // Another payload under the same signature.
  std::string forged = Encode(header) + "." +
                       Encode(absl::StrCat(R"({"exp":)", kNow + 60, R"(,"sub":"eve"})")) +
                       token.substr(token.rfind('.'));
  CHECK(Reason(VerifyJwt(forged, keys, kNow)) == "signature");
  // A key on another curve, or not a key, is refused when added.
  JwtKeySet other;
  EVP_PKEY* p384 = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-384");
  BIO* bio = BIO_new(BIO_s_mem());
  REQUIRE(PEM_write_bio_PUBKEY(bio, p384) == 1);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  const std::string pem(data, static_cast<size_t>(n));
  BIO_free(bio);
  EVP_PKEY_free(p384);
  CHECK(other.AddEs256("e2", pem).code() == absl::StatusCode::kInvalidArgument);
  CHECK(other.AddEs256("e3", "not a pem").code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("A-4 none, algorithm confusion and unknown kids are refused") {
  EcKey ec;
  auto keys = Keys(&ec);
  const std::string payload = absl::StrCat(R"({"exp":)", kNow + 60, "}");
  // alg none, with and without a signature.
  std::string none = Encode(R"({"alg":"none","kid":"h1"})") + "." + Encode(payload) + ".";
  CHECK(Reason(VerifyJwt(none, keys, kNow)) == "malformed");  // an empty signature part
  CHECK(Reason(VerifyJwt(none + "AAAA", keys, kNow)) == "algorithm");
  // HS256 under the ES256 key's kid, "signed" with its public PEM as the HMAC secret.
  std::string input = Encode(R"({"alg":"HS256","kid":"e1"})") + "." + Encode(payload);
  std::string confused = input + "." + Base64UrlEncode(HmacSha256(ec.PublicPem(), input));
  CHECK(Reason(VerifyJwt(confused, keys, kNow)) == "algorithm");
  // ES256 claimed under the HMAC key.
  CHECK(Reason(VerifyJwt(ec.Sign(R"({"alg":"ES256","kid":"h1"})", payload), keys, kNow)) ==
        "algorithm");
  CHECK(Reason(VerifyJwt(SignJwtHs256(payload, "h9", kSecret), keys, kNow)) == "unknown_kid");
  CHECK(Reason(VerifyJwt(SignJwtHs256(payload, "h1", "another secret"), keys, kNow)) ==
        "signature");
  CHECK(Reason(VerifyJwt(Encode(R"({"alg":"HS256"})") + "." + Encode(payload) + ".AAAA", keys,
                         kNow)) == "unknown_kid");
}

TEST_CASE("A-4 times are checked with 30 s of skew, exp is required, claims are typed") {
  auto keys = Keys();
  auto token = [](const std::string& payload) { return SignJwtHs256(payload, "h1", kSecret); };
  CHECK(Reason(VerifyJwt(token(absl::StrCat(R"({"exp":)", kNow - 29, "}")), keys, kNow)) == "ok");
  CHECK(Reason(VerifyJwt(token(absl::StrCat(R"({"exp":)", kNow - 30, "}")), keys, kNow)) ==
        "expired");
  CHECK(
      Reason(VerifyJwt(token(absl::StrCat(R"({"exp":)", kNow + 600, R"(,"nbf":)", kNow + 30, "}")),
                       keys, kNow)) == "ok");
  CHECK(
      Reason(VerifyJwt(token(absl::StrCat(R"({"exp":)", kNow + 600, R"(,"nbf":)", kNow + 31, "}")),
                       keys, kNow)) == "not_yet_valid");
  CHECK(Reason(VerifyJwt(token(R"({"sub":"x"})"), keys, kNow)) == "no_exp");
  CHECK(Reason(VerifyJwt(token(R"({"exp":"soon"})"), keys, kNow)) == "claims");
  CHECK(Reason(VerifyJwt(token(R"({"exp":9223372036854775807})"), keys, kNow)) == "ok");
  // "Never": kept as the end of year 9999, so exp + skew cannot overflow anywhere.
  CHECK(VerifyJwt(token(R"({"exp":9223372036854775807})"), keys, kNow)->exp == kLatestExp);
  const std::string long_login(300, 'a');
  for (const std::string& bad :
       {std::string(R"("streams":"news")"), std::string(R"("streams":[1])"),
        std::string(R"("sub":7)"), std::string(R"("sub":"")"), std::string(R"("sub":"a\u0001b")"),
        R"("sub":")" + long_login + "\""}) {
    CAPTURE(bad);
    CHECK(Reason(VerifyJwt(token(absl::StrCat(R"({"exp":)", kNow + 60, ",", bad, "}")), keys,
                           kNow)) == "claims");
  }
  for (const char* bad : {R"("streams":"news")", R"("streams":[1])", R"("sub":7)",
                          R"("max_sessions":-1)", R"("dvr":"yes")", R"("ip":[])"}) {
    CAPTURE(bad);
    CHECK(Reason(VerifyJwt(token(absl::StrCat(R"({"exp":)", kNow + 60, ",", bad, "}")), keys,
                           kNow)) == "claims");
  }
}

TEST_CASE("A-4 malformed tokens are refused as malformed, never crash") {
  auto keys = Keys();
  std::string good = SignJwtHs256(absl::StrCat(R"({"exp":)", kNow + 60, "}"), "h1", kSecret);
  for (std::string bad :
       {std::string(""), std::string("abc"), std::string("a.b"), std::string("a.b.c.d"), good + "=",
        good.substr(0, good.size() - 1) + "*", std::string(kMaxJwtBytes + 1, 'a'),
        Encode("[1]") + "." + Encode("{}") + ".AAAA",
        Encode(R"({"alg":"HS256","kid":"h1","crit":["x"]})") + ".e30.AAAA",
        Encode(R"({"alg":"HS256","kid":"h1","typ":"JWS"})") + ".e30.AAAA"}) {
    CAPTURE(bad.substr(0, 80));
    CHECK(Reason(VerifyJwt(bad, keys, kNow)) == "malformed");
  }
}

}  // namespace meshwork::crypto::jwt_test
