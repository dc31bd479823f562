// A-4 (spec 09): the keys viewer tokens are signed with, by key id, as the REST API accepts
// them at PUT /central/api-v4/access-keys/{kid}:
//
//   {"alg": "HS256", "secret": "<base64url, 32…512 bytes once decoded>"}
//   {"alg": "ES256", "public_key_pem": "-----BEGIN PUBLIC KEY-----…"}  (an EC P-256 key)
//
// The canonical form stored is {"kid", "alg", "secret" | "public_key_pem"}. It leaves
// central only towards the nodes (the access_keys section of ConfigUpdate); API answers show
// AccessKeyPublicJson ({"kid", "alg"}), logs name the kid alone.
#pragma once

#include <span>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace meshwork::central {

// A kid: [A-Za-z0-9._-]{1,64}.
bool IsValidKid(std::string_view kid);

// Validates a key body for `kid` (the secret decoded, the PEM parsed as a P-256 public key);
// InvalidArgument naming the field, never quoting the secret.
absl::StatusOr<nlohmann::json> ValidateAccessKey(const nlohmann::json& body, std::string_view kid);
std::span<const std::string_view> AccessKeyMembers();

// What the API shows of a stored key: {"kid", "alg"}.
nlohmann::json AccessKeyPublicJson(const nlohmann::json& stored);

// a revoked login, {"login", "until_unix_s"}: every node refuses the login's requests
// (403 `revoked`) until then, or until the revocation is deleted. A login is 1…256 bytes of
// UTF-8 without control characters.
bool IsValidLogin(std::string_view login);
absl::StatusOr<nlohmann::json> ValidateRevocation(const nlohmann::json& body,
                                                  std::string_view login);
std::span<const std::string_view> RevocationMembers();

}  // namespace meshwork::central
