#include "streamer/rtmp/handshake.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace meshwork::rtmp {
namespace {

constexpr uint8_t kRtmpVersion = 3;
constexpr size_t kDigestSize = 32;  // SHA-256
constexpr size_t kS2SignedSize = kHandshakeSize - kDigestSize;

// The 32 bytes that follow the ASCII text in both well-known keys.
constexpr uint8_t kKeyTail[32] = {0xF0, 0xEE, 0xC2, 0x4A, 0x80, 0x68, 0xBE, 0xE8, 0x2E, 0x00, 0xD0,
                                  0xD1, 0x02, 0x9E, 0x7E, 0x57, 0x6E, 0xEC, 0x5D, 0x2D, 0x29, 0x80,
                                  0x6F, 0xAB, 0x93, 0xB8, 0xE6, 0x36, 0xCF, 0xEB, 0x31, 0xAE};
constexpr char kFlashPlayerText[] = "Genuine Adobe Flash Player 001";             // 30 bytes
constexpr char kFlashMediaServerText[] = "Genuine Adobe Flash Media Server 001";  // 36 bytes
constexpr size_t kFlashPlayerTextSize = sizeof(kFlashPlayerText) - 1;
constexpr size_t kFlashMediaServerTextSize = sizeof(kFlashMediaServerText) - 1;
static_assert(kFlashPlayerTextSize == 30 && kFlashMediaServerTextSize == 36);

// The full 68-byte Flash Media Server key (text, then the shared tail).
std::array<uint8_t, kFlashMediaServerTextSize + sizeof(kKeyTail)> FullServerKey() {
  std::array<uint8_t, kFlashMediaServerTextSize + sizeof(kKeyTail)> key{};
  std::memcpy(key.data(), kFlashMediaServerText, kFlashMediaServerTextSize);
  std::memcpy(key.data() + kFlashMediaServerTextSize, kKeyTail, sizeof(kKeyTail));
  return key;
}

using Digest = std::array<uint8_t, kDigestSize>;

// HMAC-SHA256 of `data` under `key`; nullopt only if OpenSSL itself fails.
std::optional<Digest> Hmac(std::span<const uint8_t> key, std::span<const uint8_t> data) {
  Digest digest{};
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), data.data(), data.size(),
           digest.data(), &length) == nullptr ||
      length != kDigestSize) {
    return std::nullopt;
  }
  return digest;
}

bool ValidScheme(int scheme) { return scheme == 0 || scheme == 1; }

// Where the digest sits in a 1536-byte C1 or S1 under `scheme`: scheme 0 puts it in the
// first 764-byte block (offset from bytes 8..11), scheme 1 in the second (from 772..775).
// The bytes that choose the offset never overlap the digest, and it always fits.
size_t DigestOffset(std::span<const uint8_t> block, int scheme) {
  const size_t base = scheme == 0 ? 8 : 772;
  const size_t sum = block[base] + block[base + 1] + block[base + 2] + block[base + 3];
  return sum % 728 + base + 4;
}

// The digest of `block` (its 1504 bytes around the digest, concatenated) under the first
// `key_size` bytes of `key_text`.
std::optional<Digest> BlockDigest(std::span<const uint8_t> block, int scheme, const char* key_text,
                                  size_t key_size) {
  const size_t offset = DigestOffset(block, scheme);
  std::array<uint8_t, kHandshakeSize - kDigestSize> joined{};
  std::memcpy(joined.data(), block.data(), offset);
  std::memcpy(joined.data() + offset, block.data() + offset + kDigestSize,
              kHandshakeSize - offset - kDigestSize);
  return Hmac({reinterpret_cast<const uint8_t*>(key_text), key_size}, joined);
}

bool VerifyBlock(std::span<const uint8_t> block, int scheme, const char* key_text,
                 size_t key_size) {
  if (block.size() != kHandshakeSize || !ValidScheme(scheme)) return false;
  const std::optional<Digest> digest = BlockDigest(block, scheme, key_text, key_size);
  return digest.has_value() &&
         CRYPTO_memcmp(digest->data(), block.data() + DigestOffset(block, scheme), kDigestSize) ==
             0;
}

bool SignBlock(std::span<uint8_t> block, int scheme, const char* key_text, size_t key_size) {
  if (block.size() != kHandshakeSize || !ValidScheme(scheme)) return false;
  const std::optional<Digest> digest = BlockDigest(block, scheme, key_text, key_size);
  if (!digest) return false;
  std::memcpy(block.data() + DigestOffset(block, scheme), digest->data(), kDigestSize);
  return true;
}

// The signature a digest-form client expects at the end of S2: keyed with
// HMAC(full FMS key, the client's C1 digest), over S2's first 1504 bytes.
std::optional<Digest> S2Signature(std::span<const uint8_t> s2_head, std::span<const uint8_t> c1,
                                  int scheme) {
  const auto server_key = FullServerKey();
  const std::optional<Digest> key =
      Hmac(server_key, c1.subspan(DigestOffset(c1, scheme), kDigestSize));
  if (!key) return std::nullopt;
  return Hmac(*key, s2_head);
}

void PutBe32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}

// Fills `out` with bytes derived from `random` (HMAC-SHA256 in counter mode), so that S2's
// filler does not repeat S1's random bytes.
bool Expand(std::span<const uint8_t> random, std::span<uint8_t> out) {
  for (size_t done = 0, counter = 0; done < out.size(); done += kDigestSize, ++counter) {
    uint8_t label[6] = {'S', '2', 0, 0, 0, 0};
    PutBe32(label + 2, static_cast<uint32_t>(counter));
    const std::optional<Digest> block = Hmac(random, label);
    if (!block) return false;
    std::memcpy(out.data() + done, block->data(), std::min(kDigestSize, out.size() - done));
  }
  return true;
}

}  // namespace

absl::StatusOr<HandshakeAnswer> AnswerHandshake(std::span<const uint8_t> c0c1, uint32_t server_time,
                                                std::span<const uint8_t> random) {
  if (c0c1.size() != 1 + kHandshakeSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("RTMP handshake: C0+C1 is ", c0c1.size(), " bytes, not ", 1 + kHandshakeSize));
  }
  if (random.size() != kHandshakeSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("RTMP handshake: ", random.size(), " random bytes, not ", kHandshakeSize));
  }
  if (c0c1[0] != kRtmpVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("RTMP handshake: client asks for version ", int{c0c1[0]}, ", not 3"));
  }
  const std::span<const uint8_t> c1 = c0c1.subspan(1);

  HandshakeAnswer answer;
  const bool zero_version = c1[4] == 0 && c1[5] == 0 && c1[6] == 0 && c1[7] == 0;
  if (!zero_version) {
    if (VerifyClientDigest(c1, 1)) {
      answer.form = HandshakeForm::kDigestScheme1;
    } else if (VerifyClientDigest(c1, 0)) {
      answer.form = HandshakeForm::kDigestScheme0;
    }
  }
  const int scheme = answer.form == HandshakeForm::kDigestScheme0 ? 0 : 1;

  std::string& out = answer.s0s1s2;
  out.resize(1 + 2 * kHandshakeSize);
  auto* bytes = reinterpret_cast<uint8_t*>(out.data());
  bytes[0] = kRtmpVersion;
  uint8_t* s1 = bytes + 1;
  uint8_t* s2 = s1 + kHandshakeSize;

  // S1: our time, a version field (zero in the simple form), random bytes 8..1535.
  PutBe32(s1, server_time);
  std::memcpy(s1 + 8, random.data() + 8, kHandshakeSize - 8);

  if (answer.form == HandshakeForm::kSimple) {
    // S2 echoes C1, except that bytes 4..7 say when we read it.
    std::memcpy(s2, c1.data(), kHandshakeSize);
    PutBe32(s2 + 4, server_time);
    return answer;
  }

  const uint8_t server_version[4] = {0x04, 0x05, 0x00, 0x01};
  std::memcpy(s1 + 4, server_version, sizeof(server_version));
  if (!SignBlock({s1, kHandshakeSize}, scheme, kFlashMediaServerText, kFlashMediaServerTextSize) ||
      !Expand(random, {s2, kS2SignedSize})) {
    return absl::InternalError("RTMP handshake: HMAC-SHA256 failed");
  }
  const std::optional<Digest> signature = S2Signature({s2, kS2SignedSize}, c1, scheme);
  if (!signature) return absl::InternalError("RTMP handshake: HMAC-SHA256 failed");
  std::memcpy(s2 + kS2SignedSize, signature->data(), kDigestSize);
  return answer;
}

bool VerifyClientDigest(std::span<const uint8_t> c1, int scheme) {
  return VerifyBlock(c1, scheme, kFlashPlayerText, kFlashPlayerTextSize);
}

// Leaves `c1` untouched when its size or `scheme` is wrong.
void SignClientC1(std::span<uint8_t> c1, int scheme) {
  SignBlock(c1, scheme, kFlashPlayerText, kFlashPlayerTextSize);
}

bool VerifyServerDigest(std::span<const uint8_t> s1, int scheme) {
  return VerifyBlock(s1, scheme, kFlashMediaServerText, kFlashMediaServerTextSize);
}

bool VerifyS2(std::span<const uint8_t> s2, std::span<const uint8_t> c1, int scheme) {
  if (s2.size() != kHandshakeSize || c1.size() != kHandshakeSize || !ValidScheme(scheme)) {
    return false;
  }
  const std::optional<Digest> signature = S2Signature(s2.first(kS2SignedSize), c1, scheme);
  return signature.has_value() &&
         CRYPTO_memcmp(signature->data(), s2.data() + kS2SignedSize, kDigestSize) == 0;
}

}  // namespace meshwork::rtmp
