// Test helper: a JSON literal written as text, parsed (throws on a typo in the test itself).
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace meshwork::testing {

inline nlohmann::json J(std::string_view text) { return nlohmann::json::parse(text); }

}  // namespace meshwork::testing
