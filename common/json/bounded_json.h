// JSON from the network, parsed only when its nesting is bounded.
//
// nlohmann::json parses deep input iteratively, but copying, comparing, merge-patching and
// dumping a value recurse once per level: a body nested tens of thousands deep parses fine
// and then overflows the stack of whichever thread touches it next. Every parser of JSON
// that came over a socket goes through ParseBoundedJson, which measures the nesting on the
// raw bytes first (no allocation, one pass) and refuses before anything is built.
//
// Thread-safe: pure functions.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace meshwork {

// Nesting of the deepest array or object in `text`, counting brackets outside strings; stops
// counting (and returns max_depth + 1) as soon as the depth passes `max_depth`. Malformed
// text is measured all the same: the parser rejects it afterwards.
int JsonNestingDepth(std::string_view text, int max_depth);

inline constexpr int kMaxJsonDepth = 64;

// Parses `text` as JSON. InvalidArgument naming `field` when it is nested deeper than
// `max_depth` or is not valid JSON.
absl::StatusOr<nlohmann::json> ParseBoundedJson(std::string_view text, std::string_view field,
                                                int max_depth = kMaxJsonDepth);

}  // namespace meshwork
