#include "streamer/delivery/publish_auth.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/crypto/primitives.h"
#include "common/http/response.h"

namespace meshwork::streamer {

namespace {

// Whether `presented` equals one of `tokens` (constant time for each comparison; every entry
// is compared).
bool AnyMatches(const std::vector<std::string>* tokens, const std::string& presented) {
  if (!tokens) return false;
  bool match = false;
  for (const auto& token : *tokens) {
    if (crypto::ConstantTimeEquals(token, presented)) match = true;
  }
  return match;
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
  // A token may hold '+' ([A-Za-z0-9._~+/=-]), which query decoding reads as a space; no
  // token holds a space, so every one stands for the '+' the encoder wrote.
  std::string token = ctx.QueryParam("token").value_or("");
  std::replace(token.begin(), token.end(), ' ', '+');
  return token;
}

absl::StatusOr<bool> PublishAuth::Check(const http::RequestContext& ctx, const std::string& stream,
                                        std::string_view pipeline) const {
  return CheckToken(PresentedToken(ctx), stream, pipeline);
}

absl::StatusOr<bool> PublishAuth::CheckToken(const std::string& presented,
                                             const std::string& stream,
                                             std::string_view pipeline) const {
  auto node = config_->Get();
  auto it = node->streams.find(stream);
  if (it == node->streams.end()) return false;  // not placed here: the caller answers 404
  const StreamConfig& config = *it->second;
  const std::string pipeline_name(pipeline);
  if (!config.PublishNeedsToken(pipeline_name)) return false;
  const std::vector<std::string>* pipeline_tokens = nullptr;
  if (auto p = config.pipeline_tokens.find(pipeline_name);
      !pipeline_name.empty() && p != config.pipeline_tokens.end()) {
    pipeline_tokens = &p->second;
  }
  if (presented.empty()) {
    return absl::UnauthenticatedError(absl::StrCat(
        "stream \"", stream, "\" needs a publish token (Authorization: Bearer … or ?token=…)"));
  }
  if (!AnyMatches(&config.publish_tokens, presented) && !AnyMatches(pipeline_tokens, presented)) {
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
