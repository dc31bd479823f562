// M-3: which publishes a stream's tokens admit.
#include "streamer/delivery/publish_auth.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "nlohmann/json.hpp"

namespace meshwork::streamer {
namespace publish_auth_test {
namespace {

constexpr char kPipelineToken[] = "eu-a-token-0123456789";
constexpr char kStreamToken[] = "stream-token-0123456789";

Snapshot<NodeConfig> NodeWith(const nlohmann::json& stream) {
  auto node = std::make_shared<NodeConfig>();
  node->streams["s"] = ParseStreamConfig("s", stream);
  return Snapshot<NodeConfig>(node);
}

TEST_CASE("M-3 a stream with only a pipeline's token takes no other publish without a token") {
  auto config = NodeWith({{"pipeline_tokens", {{"eu-a", {kPipelineToken}}}}});
  PublishAuth auth(&config);
  // The pipeline's own objects with its token.
  CHECK(auth.CheckToken(kPipelineToken, "s", "eu-a").value_or(false));
  CHECK(absl::IsUnauthenticated(auth.CheckToken("", "s", "eu-a").status()));
  // Another pipeline, a push or notifications (""): no token, or the pipeline's, is refused.
  CHECK(absl::IsUnauthenticated(auth.CheckToken("", "s", "zz").status()));
  CHECK(absl::IsUnauthenticated(auth.CheckToken("", "s", "").status()));
  CHECK(absl::IsUnauthenticated(auth.CheckToken(kPipelineToken, "s", "zz").status()));
  CHECK(absl::IsUnauthenticated(auth.CheckToken(kPipelineToken, "s", "").status()));
}

TEST_CASE("M-3 a stream token admits every publish, no token a stream without any") {
  auto tokens = NodeWith({{"publish_tokens", {kStreamToken}}});
  PublishAuth with_tokens(&tokens);
  CHECK(with_tokens.CheckToken(kStreamToken, "s", "").value_or(false));
  CHECK(with_tokens.CheckToken(kStreamToken, "s", "any").value_or(false));
  CHECK(absl::IsUnauthenticated(with_tokens.CheckToken("", "s", "any").status()));
  auto open = NodeWith(nlohmann::json::object());
  PublishAuth without(&open);
  auto admitted = without.CheckToken("", "s", "any");
  REQUIRE(admitted.ok());
  CHECK_FALSE(*admitted);  // open: no token needed, none checked
}

TEST_CASE("M-3 a token with '+' is taken as written from ?token=") {
  auto config = NodeWith({{"publish_tokens", {"abc+def/ghi=0123456789"}}});
  PublishAuth auth(&config);
  http::RequestContext ctx;
  ctx.query = "token=abc+def/ghi=0123456789";
  CHECK(PresentedToken(ctx) == "abc+def/ghi=0123456789");
  CHECK(auth.Check(ctx, "s", "").value_or(false));
}

}  // namespace
}  // namespace publish_auth_test
}  // namespace meshwork::streamer
