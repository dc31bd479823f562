#include "central/model/publish_targets.h"

#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "central/model/json_fields.h"
#include "central/model/object_codecs.h"
#include "common/status/status_macros.h"
#include "common/status/status_map.h"

namespace meshwork::central {

namespace {

constexpr std::string_view kTargetMembers[] = {"to", "pipeline", "from"};

}  // namespace

absl::Status ResolvePublishTargets(const nlohmann::json& body, nlohmann::json& out) {
  auto it = body.find("publish");
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_array() || it->size() > kMaxPublishTargets) {
    return InvalidField("publish", absl::StrCat("must be an array of at most ", kMaxPublishTargets,
                                                " {to, pipeline} objects"));
  }
  nlohmann::json targets = nlohmann::json::array();
  std::set<std::string> seen;
  for (size_t i = 0; i < it->size(); ++i) {
    std::string prefix = absl::StrCat("publish[", i, "]");
    const nlohmann::json& t = (*it)[i];
    if (!t.is_object()) return InvalidField(prefix, "must be an object {to, pipeline}");
    RETURN_IF_ERROR(RejectUnknownMembers(t, kTargetMembers, prefix));
    auto to = t.find("to");
    if (to == t.end() || !to->is_string() || !IsValidName(to->get<std::string>())) {
      return InvalidField(prefix + ".to", "must be a streamer id");
    }
    auto pipeline = t.find("pipeline");
    if (pipeline == t.end() || !pipeline->is_string() ||
        !IsValidPipelineId(pipeline->get<std::string>())) {
      return InvalidField(prefix + ".pipeline", "must be a pipeline id ([a-z0-9-]{1,32})");
    }
    nlohmann::json target = {{"to", *to}, {"pipeline", *pipeline}, {"from", nullptr}};
    if (auto from = t.find("from"); from != t.end() && !from->is_null()) {
      if (!from->is_string() || !IsValidName(from->get<std::string>())) {
        return InvalidField(prefix + ".from", "must be a streamer id (or null)");
      }
      target["from"] = *from;
    }
    if (!seen.insert(target.dump()).second) {
      return InvalidField(prefix, "is listed before");
    }
    targets.push_back(std::move(target));
  }
  if (!targets.empty()) out["publish"] = std::move(targets);
  return absl::OkStatus();
}

}  // namespace meshwork::central
