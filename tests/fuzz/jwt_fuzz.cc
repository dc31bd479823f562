// the viewer-token parser never crashes on any input, and:
//  * a token it accepts is within kMaxJwtBytes, not expired at kNow (with the skew), and its
//    signature is the HMAC of its first two parts under the one key held;
//  * the input taken as a payload and signed with the held key either verifies or is refused
//    with one of the documented reason codes, never anything else;
//  * the same token under a kid nobody holds is refused as unknown_kid (an empty payload part
//    is malformed first).
// The seed corpus holds tokens signed with the key below.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "common/crypto/base64url.h"
#include "common/crypto/jwt.h"
#include "common/crypto/primitives.h"

namespace {

using meshwork::crypto::JwtKeySet;
using meshwork::crypto::VerifyJwt;

constexpr int64_t kNow = 1796000000;
const std::string kSecret(32, '\x33');

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

const JwtKeySet& Keys() {
  static const JwtKeySet* keys = [] {
    auto* k = new JwtKeySet;
    Check(k->AddHs256("k1", kSecret).ok());
    return k;
  }();
  return *keys;
}

bool KnownReason(const absl::Status& s) {
  static const std::set<std::string_view> reasons = {"malformed",     "algorithm", "unknown_kid",
                                                     "signature",     "no_exp",    "expired",
                                                     "not_yet_valid", "claims"};
  std::string_view m(s.message().data(), s.message().size());
  return s.code() == absl::StatusCode::kPermissionDenied && reasons.contains(m);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto claims = VerifyJwt(input, Keys(), kNow);
  if (claims.ok()) {
    Check(input.size() <= meshwork::crypto::kMaxJwtBytes);
    Check(claims->kid == "k1");
    Check(claims->exp > kNow - meshwork::crypto::kJwtSkewSeconds);
    size_t dot = input.rfind('.');
    auto signature = meshwork::crypto::Base64UrlDecode(input.substr(dot + 1));
    Check(signature && *signature == meshwork::crypto::HmacSha256(kSecret, input.substr(0, dot)));
  } else {
    Check(KnownReason(claims.status()));
  }
  std::string token = meshwork::crypto::SignJwtHs256(input, "k1", kSecret);
  auto signed_claims = VerifyJwt(token, Keys(), kNow);
  if (!signed_claims.ok()) Check(KnownReason(signed_claims.status()));
  std::string stranger = meshwork::crypto::SignJwtHs256(input, "nobody", kSecret);
  auto refused = VerifyJwt(stranger, Keys(), kNow);
  Check(!refused.ok());
  if (!input.empty() && token.size() <= meshwork::crypto::kMaxJwtBytes) {
    std::string_view m(refused.status().message().data(), refused.status().message().size());
    Check(m == "unknown_kid");
  }
  return 0;
}
