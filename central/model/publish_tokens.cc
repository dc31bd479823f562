#include "central/model/publish_tokens.h"

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "central/model/object_codecs.h"
#include "common/status/status_map.h"

namespace meshwork::central {

namespace {

constexpr size_t kMaxTokensPerList = 8;

bool IsValidToken(std::string_view token) {
  if (token.size() < 16 || token.size() > 256) return false;
  for (char c : token) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '~' || c == '+' || c == '/' || c == '=' || c == '-';
    if (!ok) return false;
  }
  return true;
}

absl::StatusOr<nlohmann::json> TokenList(const nlohmann::json& value, const std::string& field) {
  if (!value.is_array()) return InvalidField(field, "must be an array of tokens");
  if (value.size() > kMaxTokensPerList) {
    return InvalidField(field, absl::StrCat("at most ", kMaxTokensPerList, " tokens"));
  }
  for (size_t i = 0; i < value.size(); ++i) {
    const auto& token = value[i];
    if (!token.is_string() || !IsValidToken(token.get_ref<const std::string&>())) {
      return InvalidField(absl::StrCat(field, "[", i, "]"),
                          "must be 16 to 256 characters of [A-Za-z0-9._~+/=-]");
    }
  }
  return value;
}

}  // namespace

absl::Status ResolvePublishTokens(const nlohmann::json& body, nlohmann::json& out) {
  out.erase("publish_tokens");
  out.erase("pipeline_tokens");
  if (auto it = body.find("publish_tokens"); it != body.end() && !it->is_null()) {
    auto list = TokenList(*it, "publish_tokens");
    if (!list.ok()) return list.status();
    if (!list->empty()) out["publish_tokens"] = *std::move(list);
  }
  auto it = body.find("pipeline_tokens");
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_object()) {
    return InvalidField("pipeline_tokens", "must be an object of pipeline id → tokens");
  }
  nlohmann::json resolved = nlohmann::json::object();
  for (auto entry = it->begin(); entry != it->end(); ++entry) {
    std::string field = absl::StrCat("pipeline_tokens.", entry.key());
    if (!IsValidPipelineId(entry.key())) {
      return InvalidField(field, "must be keyed by a pipeline id ([a-z0-9-]{1,32})");
    }
    if (entry->is_null()) continue;  // merge-patch style removal
    auto list = TokenList(*entry, field);
    if (!list.ok()) return list.status();
    if (!list->empty()) resolved[entry.key()] = *std::move(list);
  }
  if (!resolved.empty()) out["pipeline_tokens"] = std::move(resolved);
  return absl::OkStatus();
}

}  // namespace meshwork::central
