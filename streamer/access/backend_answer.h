// A-6 (spec 09): what the operator's auth backend answered, read strictly. The answer comes
// from the network: bounded (kMaxBackendAnswerBytes, JSON nesting), never trusted beyond its
// documented members, and never a crash.
//
//   200 [{"login": "…", "max_sessions": N, "ttl_s": S, "dvr": true}]   admit (body optional)
//   4xx [{"reason": "…"}]                                              refuse, with that reason
//   anything else, or a 200 whose body is not that object               error (`on_error`)
//
// `login` 1…256 bytes without control characters (as central's revocations); `max_sessions`
// 1…100 000; `ttl_s` 0…86 400 (0: do not keep the answer); `reason` a code of at most 64
// characters [a-z0-9_] (anything else becomes "backend_denied", so a backend cannot write
// arbitrary text into viewers' answers or the metrics' labels). Unknown members are ignored (a
// backend may say more than this version reads).
//
// Thread-safe: a pure function.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace meshwork::streamer {

inline constexpr size_t kMaxBackendAnswerBytes = 16 * 1024;

struct BackendAnswer {
  // kBusy: never parsed; the node did not ask (its calls were at their bound).
  enum class Verdict { kAdmit, kRefuse, kError, kBusy };
  Verdict verdict = Verdict::kError;
  std::string login;
  uint64_t max_sessions = 0;  // 0: the policy's max_sessions_per_login
  std::optional<int64_t> ttl_s;
  bool dvr = false;
  std::string reason;  // kRefuse: the code passed to the viewer; kError: what went wrong (logs)
};

BackendAnswer ParseBackendAnswer(int status, std::string_view body);

}  // namespace meshwork::streamer
