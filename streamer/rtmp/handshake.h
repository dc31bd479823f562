// The server side of the RTMP handshake. A client sends C0 (version 3) and C1 (1536 bytes:
// time, zero or a version, random); the server answers S0, S1 and S2 at once, then reads C2.
//
// Two forms are understood:
//  * simple: C1's bytes 4..7 are zero. S1 is our time and random bytes, S2 echoes C1.
//  * digest (what Flash Player 9+ and the encoders modelled on it send, e.g. older OBS/FMLE
//    and librtmp): C1 carries an HMAC-SHA256 digest at an offset given by one of two known
//    schemes, keyed with the first 30 bytes of the Flash Player key. When it verifies, S1
//    carries our own digest (keyed with the first 36 bytes of the Flash Media Server key)
//    and S2 ends with a digest keyed by HMAC(full FMS key, C1's digest), as such clients
//    check. A C1 with a non-zero version whose digest does not verify under either scheme
//    is answered in the simple form (as the common servers do).
// C2 is read and not checked: clients disagree on it and it proves nothing.
//
// Pure functions of their inputs (the random bytes come from the caller): any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "absl/status/statusor.h"

namespace meshwork::rtmp {

inline constexpr size_t kHandshakeSize = 1536;  // C1, C2, S1, S2

enum class HandshakeForm { kSimple, kDigestScheme0, kDigestScheme1 };

struct HandshakeAnswer {
  HandshakeForm form = HandshakeForm::kSimple;
  std::string s0s1s2;  // 1 + 1536 + 1536 bytes to send
};

// `c0c1` is exactly 1 + 1536 bytes. `server_time` is our epoch in milliseconds (any value)
// and `random` 1536 bytes of randomness used to fill S1 and S2. InvalidArgument when C0's
// version is not 3 (or a size is wrong).
absl::StatusOr<HandshakeAnswer> AnswerHandshake(std::span<const uint8_t> c0c1, uint32_t server_time,
                                                std::span<const uint8_t> random);

// For tests and the fuzz target: whether `c1` (1536 bytes) carries a valid client digest
// under `scheme` (0 or 1), as a digest-form client would write it.
bool VerifyClientDigest(std::span<const uint8_t> c1, int scheme);
// Writes a valid client digest into `c1` under `scheme` (a digest-form client's C1).
void SignClientC1(std::span<uint8_t> c1, int scheme);
// Whether `s1` carries a valid server digest under `scheme`, and whether `s2` is the answer
// a digest-form client expects for its `c1`: what such a client checks.
bool VerifyServerDigest(std::span<const uint8_t> s1, int scheme);
bool VerifyS2(std::span<const uint8_t> s2, std::span<const uint8_t> c1, int scheme);

}  // namespace meshwork::rtmp
