// Viewer token material the integration tests share: an HS256 key registered as "k1"
// and the clock the tokens' exp is counted on.
#pragma once

#include <chrono>
#include <cstdint>

namespace meshwork::testing {

// base64url of kTestTokenSecret: the `secret` of the key PUT to central.
inline constexpr char kTestTokenSecretB64[] = "bWVzaHdvcmstYWNjZXNzLXRlc3Qtc2VjcmV0LTMyYnl0ZXM";
inline constexpr char kTestTokenSecret[] = "meshwork-access-test-secret-32bytes";

// Unix time in seconds, now.
inline int64_t UnixNowS() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace meshwork::testing
