#include "common/json/bounded_json.h"

#include "absl/strings/str_cat.h"
#include "common/status/status_map.h"

namespace meshwork {

int JsonNestingDepth(std::string_view text, int max_depth) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > deepest) {
          deepest = depth;
          if (deepest > max_depth) return max_depth + 1;
        }
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default:
        break;
    }
  }
  return deepest;
}

absl::StatusOr<nlohmann::json> ParseBoundedJson(std::string_view text, std::string_view field,
                                                int max_depth) {
  if (JsonNestingDepth(text, max_depth) > max_depth) {
    return InvalidField(field, absl::StrCat("JSON nested deeper than ", max_depth, " levels"));
  }
  nlohmann::json parsed = nlohmann::json::parse(text.begin(), text.end(), nullptr,
                                                /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return InvalidField(field, "not valid JSON");
  return parsed;
}

}  // namespace meshwork
