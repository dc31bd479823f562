#include "central/model/access_keys.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "central/model/json_fields.h"
#include "common/auth/login.h"
#include "common/crypto/base64url.h"
#include "common/crypto/jwt.h"
#include "common/status/status_macros.h"
#include "common/status/status_map.h"

namespace meshwork::central {

namespace {

constexpr std::string_view kKeyMembers[] = {"kid", "alg", "secret", "public_key_pem"};
constexpr std::string_view kRevocationMembers[] = {"login", "until_unix_s"};
constexpr size_t kMinSecretBytes = 32;  // RFC 7518 §3.2: at least the hash's size
constexpr size_t kMaxSecretBytes = 512;
constexpr size_t kMaxPemBytes = 4096;

}  // namespace

bool IsValidKid(std::string_view kid) {
  if (kid.empty() || kid.size() > 64) return false;
  for (char c : kid) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::span<const std::string_view> AccessKeyMembers() { return kKeyMembers; }

absl::StatusOr<nlohmann::json> ValidateAccessKey(const nlohmann::json& body, std::string_view kid) {
  if (!body.is_object()) return InvalidField("body", "must be a JSON object");
  RETURN_IF_ERROR(RejectUnknownMembers(body, kKeyMembers, ""));
  if (!IsValidKid(kid)) return InvalidField("kid", "must match [A-Za-z0-9._-]{1,64}");
  if (auto k = body.find("kid"); k != body.end() && !k->is_null() && *k != kid) {
    return InvalidField("kid", "must equal the key id in the URL");
  }
  auto alg = body.find("alg");
  if (alg == body.end() || (*alg != "HS256" && *alg != "ES256")) {
    return InvalidField("alg", "must be \"HS256\" or \"ES256\"");
  }
  nlohmann::json out = {{"kid", std::string(kid)}, {"alg", *alg}};
  auto secret = body.find("secret");
  auto pem = body.find("public_key_pem");
  bool has_secret = secret != body.end() && !secret->is_null();
  bool has_pem = pem != body.end() && !pem->is_null();
  if (*alg == "HS256") {
    if (has_pem) return InvalidField("public_key_pem", "is for ES256 keys; HS256 takes \"secret\"");
    std::optional<std::string> bytes;
    if (has_secret && secret->is_string() && secret->get_ref<const std::string&>().size() < 1024) {
      bytes = crypto::Base64UrlDecode(secret->get<std::string>());
    }
    if (!bytes || bytes->size() < kMinSecretBytes || bytes->size() > kMaxSecretBytes) {
      return InvalidField("secret", absl::StrCat("must be base64url of ", kMinSecretBytes, "…",
                                                 kMaxSecretBytes, " bytes"));
    }
    out["secret"] = *secret;
    return out;
  }
  if (has_secret)
    return InvalidField("secret", "is for HS256 keys; ES256 takes \"public_key_pem\"");
  if (!has_pem || !pem->is_string() || pem->get_ref<const std::string&>().size() > kMaxPemBytes) {
    return InvalidField("public_key_pem", absl::StrCat("must be a PEM public key of at most ",
                                                       kMaxPemBytes, " bytes"));
  }
  crypto::JwtKeySet check;
  if (auto status = check.AddEs256(std::string(kid), pem->get<std::string>()); !status.ok()) {
    return InvalidField("public_key_pem", std::string(status.message()));
  }
  out["public_key_pem"] = *pem;
  return out;
}

bool IsValidLogin(std::string_view login) { return auth::IsValidLogin(login); }

std::span<const std::string_view> RevocationMembers() { return kRevocationMembers; }

absl::StatusOr<nlohmann::json> ValidateRevocation(const nlohmann::json& body,
                                                  std::string_view login) {
  if (!body.is_object()) return InvalidField("body", "must be a JSON object");
  RETURN_IF_ERROR(RejectUnknownMembers(body, kRevocationMembers, ""));
  if (!IsValidLogin(login)) {
    return InvalidField("login", "must be 1…256 bytes without control characters");
  }
  if (auto l = body.find("login"); l != body.end() && *l != login) {
    return InvalidField("login", "must equal the revoked login");
  }
  auto until = body.find("until_unix_s");
  if (until == body.end() || until->is_null()) {  // until cleared
    return nlohmann::json{{"login", std::string(login)}, {"until_unix_s", nullptr}};
  }
  if (!until->is_number_integer() || until->get<int64_t>() <= 0) {
    return InvalidField("until_unix_s", "must be a Unix time in seconds, or null (until cleared)");
  }
  return nlohmann::json{{"login", std::string(login)}, {"until_unix_s", *until}};
}

nlohmann::json AccessKeyPublicJson(const nlohmann::json& stored) {
  return {{"kid", stored.value("kid", "")}, {"alg", stored.value("alg", "")}};
}

}  // namespace meshwork::central
