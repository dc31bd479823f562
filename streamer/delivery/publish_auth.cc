#include "streamer/delivery/publish_auth.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/crypto/primitives.h"
#include "common/http/response.h"

namespace meshwork::streamer {

namespace {

// Whether `presented` equals one of the strings in the JSON array `list` (constant time for
// each comparison; every entry is compared).
bool AnyMatches(const nlohmann::json* list, const std::string& presented) {
  if (!list || !list->is_array()) return false;
  bool match = false;
  for (const auto& token : *list) {
    if (token.is_string() &&
        crypto::ConstantTimeEquals(token.get_ref<const std::string&>(), presented)) {
      match = true;
    }
  }
  return match;
}

const nlohmann::json* Member(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

}  // namespace

std::string PresentedToken(const http::RequestContext& ctx) {
  auto auth = ctx.request.find(http::beast_http::field::authorization);
  if (auth != ctx.request.end()) {
    std::string_view value = auth->value();
    constexpr std::string_view kBearer = "Bearer ";
    if (value.size() > kBearer.size() &&
        absl::EqualsIgnoreCase(absl::string_view(value.data(), kBearer.size()), "bearer ")) {
      return std::string(value.substr(kBearer.size()));
    }
  }
  return ctx.QueryParam("token").value_or("");
}

absl::StatusOr<bool> PublishAuth::Check(const http::RequestContext& ctx, const std::string& stream,
                                        std::string_view pipeline) const {
  return CheckToken(PresentedToken(ctx), stream, pipeline);
}

absl::StatusOr<bool> PublishAuth::CheckToken(const std::string& presented,
                                             const std::string& stream,
                                             std::string_view pipeline) const {
  auto config = config_->Get();
  auto it = config->streams.find(stream);
  if (it == config->streams.end()) return false;  // not placed here: the caller answers 404
  const nlohmann::json* stream_tokens = Member(it->second, "publish_tokens");
  const nlohmann::json* pipeline_tokens = nullptr;
  if (const nlohmann::json* by_pipeline = Member(it->second, "pipeline_tokens");
      by_pipeline && !pipeline.empty()) {
    pipeline_tokens = Member(*by_pipeline, std::string(pipeline).c_str());
  }
  bool configured =
      (stream_tokens && !stream_tokens->empty()) || (pipeline_tokens && !pipeline_tokens->empty());
  if (!configured) return false;
  if (presented.empty()) {
    return absl::UnauthenticatedError(absl::StrCat(
        "stream \"", stream, "\" needs a publish token (Authorization: Bearer … or ?token=…)"));
  }
  if (!AnyMatches(stream_tokens, presented) && !AnyMatches(pipeline_tokens, presented)) {
    return absl::UnauthenticatedError(
        absl::StrCat("the publish token is not valid for stream \"", stream, "\"",
                     pipeline.empty() ? "" : absl::StrCat(" pipeline ", std::string(pipeline))));
  }
  return true;
}

http::Response PublishUnauthorized(const absl::Status& status) {
  http::Response res = http::ErrorResponse(status);
  res.set(http::beast_http::field::www_authenticate, "Bearer realm=\"publish\"");
  return res;
}

}  // namespace meshwork::streamer
