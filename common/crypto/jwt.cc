#include "common/crypto/jwt.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "common/auth/login.h"
#include "common/crypto/base64url.h"
#include "common/crypto/primitives.h"
#include "common/json/bounded_json.h"

namespace meshwork::crypto {

struct JwtKeySet::Key {
  JwtAlg alg = JwtAlg::kHs256;
  std::string secret;        // HS256
  EVP_PKEY* pkey = nullptr;  // ES256
  ~Key() { EVP_PKEY_free(pkey); }
};

JwtKeySet::JwtKeySet() = default;
JwtKeySet::~JwtKeySet() = default;
JwtKeySet::JwtKeySet(JwtKeySet&&) noexcept = default;
JwtKeySet& JwtKeySet::operator=(JwtKeySet&&) noexcept = default;

absl::Status JwtKeySet::AddHs256(const std::string& kid, std::string secret) {
  if (kid.empty()) return absl::InvalidArgumentError("a key needs a kid");
  if (secret.empty()) return absl::InvalidArgumentError("an HS256 secret must not be empty");
  auto key = std::make_unique<Key>();
  key->alg = JwtAlg::kHs256;
  key->secret = std::move(secret);
  keys_[kid] = std::move(key);
  return absl::OkStatus();
}

absl::Status JwtKeySet::AddEs256(const std::string& kid, std::string_view pem) {
  if (kid.empty()) return absl::InvalidArgumentError("a key needs a kid");
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (!bio) return absl::ResourceExhaustedError("out of memory reading a PEM");
  EVP_PKEY* pkey = PEM_read_bio_PUBKEY(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (!pkey) return absl::InvalidArgumentError("not a PEM public key");
  auto key = std::make_unique<Key>();
  key->alg = JwtAlg::kEs256;
  key->pkey = pkey;  // freed with `key`
  char group[64] = {0};
  size_t len = 0;
  if (!EVP_PKEY_is_a(pkey, "EC") ||
      EVP_PKEY_get_utf8_string_param(pkey, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group, &len) !=
          1 ||
      std::string_view(group, len) != "prime256v1") {
    return absl::InvalidArgumentError("an ES256 key must be an EC public key on P-256");
  }
  keys_[kid] = std::move(key);
  return absl::OkStatus();
}

// Friend of JwtKeySet: finds keys.
struct JwtVerifier {
  static const JwtKeySet::Key* Find(const JwtKeySet& set, const std::string& kid) {
    auto it = set.keys_.find(kid);
    return it == set.keys_.end() ? nullptr : it->second.get();
  }
};

namespace {

absl::Status Refuse(std::string_view reason) {
  return absl::PermissionDeniedError(std::string(reason));
}

std::optional<std::string> Part(std::string_view text) {
  if (text.empty() || text.find('=') != std::string_view::npos) return std::nullopt;
  return Base64UrlDecode(text);
}

// ES256: the JOSE signature is r || s, 32 bytes each; OpenSSL verifies DER.
bool VerifyEs256(EVP_PKEY* pkey, std::string_view input, std::string_view sig) {
  if (sig.size() != 64) return false;
  ECDSA_SIG* ecdsa = ECDSA_SIG_new();
  if (!ecdsa) return false;
  const auto* raw = reinterpret_cast<const unsigned char*>(sig.data());
  BIGNUM* r = BN_bin2bn(raw, 32, nullptr);
  BIGNUM* s = BN_bin2bn(raw + 32, 32, nullptr);
  if (!r || !s || ECDSA_SIG_set0(ecdsa, r, s) != 1) {
    BN_free(r);
    BN_free(s);
    ECDSA_SIG_free(ecdsa);
    return false;
  }
  unsigned char* der = nullptr;
  int der_len = i2d_ECDSA_SIG(ecdsa, &der);
  ECDSA_SIG_free(ecdsa);
  if (der_len <= 0) return false;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok =
      ctx && EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, pkey) == 1 &&
      EVP_DigestVerify(ctx, der, static_cast<size_t>(der_len),
                       reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1;
  EVP_MD_CTX_free(ctx);
  OPENSSL_free(der);
  return ok;
}

// A NumericDate (RFC 7519 §2): a JSON number of seconds, fractions dropped.
std::optional<int64_t> NumericDate(const nlohmann::json& v) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (!std::isfinite(d) || std::fabs(d) > 9.0e15) return std::nullopt;
    return static_cast<int64_t>(std::floor(d));
  }
  return std::nullopt;
}

absl::Status ReadClaims(const nlohmann::json& payload, JwtClaims& c) {
  if (!payload.is_object()) return Refuse("malformed");
  auto exp = payload.find("exp");
  if (exp == payload.end()) return Refuse("no_exp");
  auto exp_value = NumericDate(*exp);
  if (!exp_value) return Refuse("claims");
  // "Never" written as a huge date is kept as the end of year 9999: every reader adds the
  // skew to it without overflow.
  c.exp = std::min<int64_t>(*exp_value, kLatestExp);
  if (auto nbf = payload.find("nbf"); nbf != payload.end()) {
    if (!(c.nbf = NumericDate(*nbf))) return Refuse("claims");
  }
  if (auto sub = payload.find("sub"); sub != payload.end()) {
    // The login: the rule every part of the cluster holds logins to, so that a
    // token's login can be revoked and reported like any other.
    if (!sub->is_string() || !auth::IsValidLogin(sub->get_ref<const std::string&>())) {
      return Refuse("claims");
    }
    c.sub = sub->get<std::string>();
  }
  if (auto streams = payload.find("streams"); streams != payload.end()) {
    if (!streams->is_array()) return Refuse("claims");
    c.streams_claimed = true;
    for (const auto& s : *streams) {
      if (!s.is_string()) return Refuse("claims");
      c.streams.push_back(s.get<std::string>());
    }
  }
  if (auto ip = payload.find("ip"); ip != payload.end()) {
    if (!ip->is_string()) return Refuse("claims");
    c.ip = ip->get<std::string>();
  }
  if (auto max = payload.find("max_sessions"); max != payload.end()) {
    if (!max->is_number_integer() || max->get<int64_t>() < 0) return Refuse("claims");
    c.max_sessions = max->get<int64_t>();
  }
  if (auto dvr = payload.find("dvr"); dvr != payload.end()) {
    if (!dvr->is_boolean()) return Refuse("claims");
    c.dvr = dvr->get<bool>();
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<JwtClaims> VerifyJwt(std::string_view token, const JwtKeySet& keys,
                                    int64_t now_unix_s, int64_t skew_s) {
  if (token.size() > kMaxJwtBytes) return Refuse("malformed");
  size_t dot1 = token.find('.');
  if (dot1 == std::string_view::npos) return Refuse("malformed");
  size_t dot2 = token.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos || token.find('.', dot2 + 1) != std::string_view::npos) {
    return Refuse("malformed");
  }
  auto header_text = Part(token.substr(0, dot1));
  auto payload_text = Part(token.substr(dot1 + 1, dot2 - dot1 - 1));
  auto signature = Part(token.substr(dot2 + 1));
  if (!header_text || !payload_text || !signature) return Refuse("malformed");
  auto header = ParseBoundedJson(*header_text, "token header", 8);
  if (!header.ok() || !header->is_object()) return Refuse("malformed");
  auto alg = header->find("alg");
  if (alg == header->end() || !alg->is_string()) return Refuse("algorithm");
  std::optional<JwtAlg> named;
  if (*alg == "HS256") named = JwtAlg::kHs256;
  if (*alg == "ES256") named = JwtAlg::kEs256;
  if (!named) return Refuse("algorithm");  // "none" and everything else
  if (auto typ = header->find("typ");
      typ != header->end() && (!typ->is_string() || *typ != "JWT")) {
    return Refuse("malformed");
  }
  if (header->contains("crit")) return Refuse("malformed");
  auto kid = header->find("kid");
  if (kid == header->end() || !kid->is_string()) return Refuse("unknown_kid");
  const JwtKeySet::Key* key = JwtVerifier::Find(keys, kid->get<std::string>());
  if (!key) return Refuse("unknown_kid");
  if (key->alg != *named) return Refuse("algorithm");  // no algorithm confusion

  const std::string_view signing_input = token.substr(0, dot2);
  bool signed_ok = key->alg == JwtAlg::kHs256
                       ? ConstantTimeEquals(HmacSha256(key->secret, signing_input), *signature)
                       : VerifyEs256(key->pkey, signing_input, *signature);
  if (!signed_ok) return Refuse("signature");

  auto payload = ParseBoundedJson(*payload_text, "token payload", 8);
  if (!payload.ok()) return Refuse("malformed");
  JwtClaims claims;
  claims.kid = kid->get<std::string>();
  if (absl::Status s = ReadClaims(*payload, claims); !s.ok()) return s;
  // Saturating: a claim near the int64 edges must not wrap.
  auto plus = [](int64_t a, int64_t b) {
    if (b > 0 && a > std::numeric_limits<int64_t>::max() - b)
      return std::numeric_limits<int64_t>::max();
    if (b < 0 && a < std::numeric_limits<int64_t>::min() - b)
      return std::numeric_limits<int64_t>::min();
    return a + b;
  };
  if (plus(claims.exp, skew_s) <= now_unix_s) return Refuse("expired");
  if (claims.nbf && *claims.nbf > plus(now_unix_s, skew_s)) return Refuse("not_yet_valid");
  return claims;
}

bool JwtAllowsStream(const JwtClaims& claims, std::string_view stream) {
  if (!claims.streams_claimed) return true;
  for (const auto& s : claims.streams) {
    if (s == stream) return true;
    if (s.size() >= 2 && s.compare(s.size() - 2, 2, "/*") == 0) {
      std::string_view prefix(s.data(), s.size() - 1);  // keeps the '/'
      if (stream.size() > prefix.size() && stream.substr(0, prefix.size()) == prefix) return true;
    }
  }
  return false;
}

std::string SignJwtHs256(std::string_view payload_json, std::string_view kid,
                         std::string_view secret) {
  nlohmann::json header = {{"alg", "HS256"}, {"typ", "JWT"}, {"kid", std::string(kid)}};
  std::string input =
      absl::StrCat(Base64UrlEncode(header.dump()), ".", Base64UrlEncode(payload_json));
  return absl::StrCat(input, ".", Base64UrlEncode(HmacSha256(secret, input)));
}

}  // namespace meshwork::crypto
