#include "common/crypto/pass.h"

#include <limits>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/status/absl_view.h"

namespace meshwork::crypto {
namespace {

constexpr std::string_view kMagic = "MWP1";
constexpr size_t kMacBytes = 32;
constexpr size_t kMaxKeyIdInMessage = 32;

void PutU32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((v >> shift) & 0xff));
}

void PutI64(std::string& out, int64_t v) {
  uint64_t u = static_cast<uint64_t>(v);
  for (int shift = 56; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((u >> shift) & 0xff));
}

void PutField(std::string& out, std::string_view field) {
  PutU32(out, static_cast<uint32_t>(field.size()));
  out.append(field);
}

std::string EncodePayload(const PassClaims& c) {
  std::string out(kMagic);
  PutField(out, c.key_id);
  PutField(out, c.stream);
  PutField(out, c.group);
  PutField(out, c.issuer);
  PutI64(out, c.issued_unix_s);
  PutI64(out, c.expires_unix_s);
  return out;
}

// Reads the payload front to back; any shortfall marks it malformed.
class Reader {
 public:
  explicit Reader(std::string_view data) : rest_(data) {}

  bool Take(size_t n, std::string_view& out) {
    if (rest_.size() < n) return false;
    out = rest_.substr(0, n);
    rest_.remove_prefix(n);
    return true;
  }
  bool U64(uint64_t& v) {
    std::string_view bytes;
    if (!Take(8, bytes)) return false;
    v = 0;
    for (char c : bytes) v = (v << 8) | static_cast<unsigned char>(c);
    return true;
  }
  bool I64(int64_t& v) {
    uint64_t u;
    if (!U64(u)) return false;
    v = static_cast<int64_t>(u);
    return true;
  }
  bool Field(std::string& out) {
    std::string_view bytes;
    if (!Take(4, bytes)) return false;
    uint32_t n = 0;
    for (char c : bytes) n = (n << 8) | static_cast<unsigned char>(c);
    if (!Take(n, bytes)) return false;
    out.assign(bytes);
    return true;
  }
  bool AtEnd() const { return rest_.empty(); }

 private:
  std::string_view rest_;
};

std::optional<PassClaims> DecodePayload(std::string_view payload) {
  Reader r(payload);
  std::string_view magic;
  PassClaims c;
  if (!r.Take(kMagic.size(), magic) || magic != kMagic) return std::nullopt;
  if (!r.Field(c.key_id) || !r.Field(c.stream) || !r.Field(c.group) || !r.Field(c.issuer) ||
      !r.I64(c.issued_unix_s) || !r.I64(c.expires_unix_s) || !r.AtEnd()) {
    return std::nullopt;
  }
  return c;
}

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

absl::Status Denied(std::string_view reason) {
  return absl::PermissionDeniedError(AbslView(reason));
}

// Tokens are unpadded base64url; '=' is refused here even though Base64UrlDecode takes it,
// so each pass has exactly one spelling.
std::optional<std::string> DecodePart(std::string_view part) {
  if (part.empty() || part.find('=') != std::string_view::npos) return std::nullopt;
  return Base64UrlDecode(part);
}

}  // namespace

std::string SignPass(const PassClaims& claims, const ViewingKey& key) {
  std::string payload = EncodePayload(claims);
  return absl::StrCat(Base64UrlEncode(payload), ".",
                      Base64UrlEncode(HmacSha256(key.secret, payload)));
}

absl::StatusOr<PassClaims> VerifyPass(std::string_view token, std::string_view stream,
                                      const std::vector<ViewingKey>& keys, int64_t now_unix_s,
                                      int64_t skew_s) {
  if (token.size() > kMaxPassTokenBytes) return Denied("malformed pass");
  size_t dot = token.find('.');
  if (dot == std::string_view::npos) return Denied("malformed pass");
  std::optional<std::string> payload = DecodePart(token.substr(0, dot));
  std::optional<std::string> mac = DecodePart(token.substr(dot + 1));  // a second '.' fails here
  if (!payload || !mac || mac->size() != kMacBytes) return Denied("malformed pass");
  std::optional<PassClaims> claims = DecodePayload(*payload);
  if (!claims) return Denied("malformed pass");

  bool known = false;
  bool verified = false;
  for (const ViewingKey& key : keys) {
    if (key.id != claims->key_id) continue;
    known = true;
    if (key.secret.empty()) continue;
    if (ConstantTimeEquals(HmacSha256(key.secret, *payload), *mac)) {
      verified = true;
      break;
    }
  }
  if (!known) {
    std::string id = absl::CHexEscape(claims->key_id);
    if (id.size() > kMaxKeyIdInMessage) id.resize(kMaxKeyIdInMessage);
    return Denied(absl::StrCat("unknown key id ", id));
  }
  if (!verified) return Denied("bad signature");

  if (claims->stream != stream) return Denied("pass is for another stream");
  if (skew_s < 0) skew_s = 0;
  if (now_unix_s > SaturatingAdd(claims->expires_unix_s, skew_s)) return Denied("pass expired");
  if (claims->issued_unix_s > SaturatingAdd(now_unix_s, skew_s)) {
    return Denied("pass not yet valid");
  }
  return *std::move(claims);
}

}  // namespace meshwork::crypto
