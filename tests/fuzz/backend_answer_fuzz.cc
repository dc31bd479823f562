// the auth backend answer parser never crashes on any status and body, and:
//  * a status other than 200 and 4xx is an error, whatever the body;
//  * a refusal's reason is a code of 1…64 characters [a-z0-9_];
//  * an admission's login is empty or 1…256 bytes without control characters, its
//    max_sessions 0 or 1…100 000, its ttl_s absent or 0…86 400;
//  * a body over kMaxBackendAnswerBytes is an error.
// The first input byte chooses the status (below 0x40: 200; else 100 + 3 × (byte − 0x40)),
// the rest is the body.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "streamer/access/backend_answer.h"

namespace {

using meshwork::streamer::BackendAnswer;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  int status = data[0] < 0x40 ? 200 : 100 + 3 * (data[0] - 0x40);
  std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  BackendAnswer answer = meshwork::streamer::ParseBackendAnswer(status, body);
  if (body.size() > meshwork::streamer::kMaxBackendAnswerBytes) {
    Check(answer.verdict == BackendAnswer::Verdict::kError);
  }
  if (status != 200 && (status < 400 || status >= 500)) {
    Check(answer.verdict == BackendAnswer::Verdict::kError);
  }
  Check(answer.verdict != BackendAnswer::Verdict::kBusy);
  if (answer.verdict == BackendAnswer::Verdict::kRefuse) {
    Check(!answer.reason.empty() && answer.reason.size() <= 64);
    for (char c : answer.reason) {
      Check((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
    }
  }
  if (answer.verdict == BackendAnswer::Verdict::kAdmit) {
    Check(answer.login.size() <= 256);
    for (unsigned char c : answer.login) Check(c >= 0x20 && c != 0x7f);
    Check(answer.max_sessions <= 100'000);
    Check(!answer.ttl_s || (*answer.ttl_s >= 0 && *answer.ttl_s <= 86'400));
  }
  return 0;
}
