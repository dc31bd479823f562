#include "common/json/bounded_json.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
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
  // RFC 8259 §4 leaves a repeated member name's meaning to the parser; two readers of the
  // same bytes could then act on different values (RFC 7515 §5.2: reject). The names of each
  // open object are kept while it is parsed.
  std::vector<absl::flat_hash_set<std::string>> open_objects;
  std::optional<std::string> repeated;
  nlohmann::json::parser_callback_t check = [&](int, nlohmann::json::parse_event_t event,
                                                nlohmann::json& value) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) {
      open_objects.emplace_back();
    } else if (event == Event::object_end) {
      if (!open_objects.empty()) open_objects.pop_back();
    } else if (event == Event::key && !open_objects.empty() && !repeated &&
               !open_objects.back().insert(value.get<std::string>()).second) {
      repeated = value.get<std::string>();
    }
    return true;
  };
  nlohmann::json parsed = nlohmann::json::parse(text.begin(), text.end(), check,
                                                /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return InvalidField(field, "not valid JSON");
  if (repeated) {
    return InvalidField(field,
                        absl::StrCat("member \"", *repeated, "\" appears twice in one object"));
  }
  return parsed;
}

}  // namespace meshwork
