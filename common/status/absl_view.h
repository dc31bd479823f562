// This Abseil build's absl::string_view is its own type, not std::string_view; these convert
// without copying.
#pragma once

#include <string_view>

#include "absl/strings/string_view.h"

namespace meshwork {

inline absl::string_view AbslView(std::string_view s) { return {s.data(), s.size()}; }
inline std::string_view StdView(absl::string_view s) { return {s.data(), s.size()}; }

}  // namespace meshwork
