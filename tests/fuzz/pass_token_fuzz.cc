// pass tokens (O-7) and base64url never crash on any input, and:
//  * a token VerifyPass accepts is for the stream asked, signed by a held key, within the
//    time rule, and is exactly what SignPass makes of its claims (one spelling per pass);
//  * base64url text that decodes re-encodes to itself (minus padding), and any bytes
//    encode and decode back;
//  * claims built from the input (any bytes, any times) sign and verify back to themselves,
//    are refused for another stream, and the outcome follows the time rule at the ±240 s
//    edges.
// The seed corpus holds tokens signed with the keys below, valid at kNow.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "common/crypto/pass.h"

namespace {

using meshwork::crypto::PassClaims;
using meshwork::crypto::ViewingKey;

constexpr int64_t kNow = 1767225600;  // 2026-01-01T00:00:00Z
constexpr int64_t kSkew = 240;
constexpr std::string_view kStream = "live/news";

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

const std::vector<ViewingKey>& Keys() {
  static const std::vector<ViewingKey> keys = {{"k1", std::string(32, '\x11')},
                                               {"k2", std::string(32, '\x22')}};
  return keys;
}

// The time rule written out again, without the saturating helpers (in 128 bits).
bool InTime(const PassClaims& c, int64_t now) {
  return static_cast<__int128>(c.issued_unix_s) <= static_cast<__int128>(now) + kSkew &&
         static_cast<__int128>(now) <= static_cast<__int128>(c.expires_unix_s) + kSkew;
}

int64_t ReadI64(std::string_view& in) {
  uint64_t v = 0;
  size_t n = in.size() < 8 ? in.size() : 8;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<unsigned char>(in[i]);
  in.remove_prefix(n);
  return static_cast<int64_t>(v);
}

std::string_view NextLine(std::string_view& in) {
  size_t nl = in.find('\n');
  std::string_view line = in.substr(0, nl);
  in = nl == std::string_view::npos ? std::string_view() : in.substr(nl + 1);
  return line;
}

void CheckVerifiedToken(std::string_view input) {
  absl::StatusOr<PassClaims> claims = meshwork::crypto::VerifyPass(input, kStream, Keys(), kNow);
  if (!claims.ok()) {
    Check(claims.status().code() == absl::StatusCode::kPermissionDenied);
    Check(!claims.status().message().empty());
    return;
  }
  Check(claims->stream == kStream);
  Check(InTime(*claims, kNow));
  Check(input.size() <= meshwork::crypto::kMaxPassTokenBytes);
  const ViewingKey* key = nullptr;
  for (const ViewingKey& k : Keys()) {
    if (k.id == claims->key_id) key = &k;
  }
  Check(key != nullptr);
  Check(meshwork::crypto::SignPass(*claims, *key) == input);
}

void CheckBase64(std::string_view input) {
  std::optional<std::string> bytes = meshwork::crypto::Base64UrlDecode(input);
  if (bytes) {
    std::string_view unpadded = input;
    while (!unpadded.empty() && unpadded.back() == '=') unpadded.remove_suffix(1);
    Check(meshwork::crypto::Base64UrlEncode(*bytes) == unpadded);
  }
  std::string text = meshwork::crypto::Base64UrlEncode(input);
  std::optional<std::string> back = meshwork::crypto::Base64UrlDecode(text);
  Check(back.has_value() && *back == input);
}

void CheckSignedClaims(std::string_view in) {
  PassClaims c;
  c.key_id = (in.empty() || (in[0] & 1)) ? "k1" : "k2";
  if (!in.empty()) in.remove_prefix(1);
  // Times near kNow most of the time so the ±240 s edges are reached; raw 64-bit otherwise.
  int64_t a = ReadI64(in), b = ReadI64(in);
  bool near = (a & 1) == 0;
  c.issued_unix_s = near ? kNow + (a >> 1) % 1024 : a;
  c.expires_unix_s = near ? kNow + (b >> 1) % 1024 : b;
  c.stream = std::string(NextLine(in));
  c.group = std::string(NextLine(in));
  c.issuer = std::string(in);
  const ViewingKey& key = c.key_id == "k1" ? Keys()[0] : Keys()[1];

  std::string token = meshwork::crypto::SignPass(c, key);
  bool fits = token.size() <= meshwork::crypto::kMaxPassTokenBytes;
  absl::StatusOr<PassClaims> got = meshwork::crypto::VerifyPass(token, c.stream, Keys(), kNow);
  Check(got.ok() == (fits && InTime(c, kNow)));
  if (got.ok()) Check(*got == c);
  if (fits && !got.ok()) {
    std::string_view m(got.status().message().data(), got.status().message().size());
    Check(m == "pass expired" || m == "pass not yet valid");
  }

  std::string other = c.stream + "x";
  absl::StatusOr<PassClaims> wrong = meshwork::crypto::VerifyPass(token, other, Keys(), kNow);
  Check(!wrong.ok());
  if (fits) {
    std::string_view m(wrong.status().message().data(), wrong.status().message().size());
    Check(m == "pass is for another stream");
  }

  // Only the other key held (under this key's id): the signature must not verify.
  std::vector<ViewingKey> impostor = {
      {c.key_id, key.secret == Keys()[0].secret ? Keys()[1].secret : Keys()[0].secret}};
  Check(!meshwork::crypto::VerifyPass(token, c.stream, impostor, kNow).ok());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  CheckVerifiedToken(input);
  CheckBase64(input);
  CheckSignedClaims(input);
  return 0;
}
