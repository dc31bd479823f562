// MESHWORK_CHECK(condition, "what was expected"): an impossible state of the program crashes
// loudly, in every build type (unlike assert, NDEBUG does not remove it). It logs one error
// line (event=check_failed, the condition, the message, file and line) and aborts.
// Never use it on untrusted input: input that breaks a rule gets an error answer, not a crash.
#pragma once

#include <cstdlib>

#include "common/log/log.h"

namespace meshwork::log {

[[noreturn]] inline void CheckFailed(const char* condition, const char* message, const char* file,
                                     int line) {
  Error("check_failed",
        {{"condition", condition}, {"message", message}, {"file", file}, {"line", line}});
  std::abort();
}

}  // namespace meshwork::log

#define MESHWORK_CHECK(condition, message)                                   \
  do {                                                                       \
    if (!(condition)) [[unlikely]]                                           \
      ::meshwork::log::CheckFailed(#condition, message, __FILE__, __LINE__); \
  } while (false)
