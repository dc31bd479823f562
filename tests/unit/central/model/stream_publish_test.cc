// The `publish` member of a stream (S-23): validation and its canonical form.
#include <catch2/catch.hpp>
#include <string>
#include <string_view>

#include "central/model/object_codecs.h"
#include "common/status/status_map.h"
#include "nlohmann/json.hpp"

namespace meshwork::central {
namespace {

using nlohmann::json;

std::string PublishError(std::string_view publish) {
  auto result = ValidateStream(
      json::parse(std::string(R"({"publish": )") + std::string(publish) + "}"), "ch1");
  if (result.ok()) return "ok";
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return FieldOf(result.status());
}

TEST_CASE("S-23 publish targets are kept with from resolved, absent means none") {
  auto none = ValidateStream(json::object(), "ch1");
  REQUIRE(none.ok());
  CHECK(!none->contains("publish"));
  auto stream = ValidateStream(json::parse(R"({"publish": [
      {"to": "origin-1", "pipeline": "eu-a", "from": "ingest-eu"},
      {"to": "origin-1", "pipeline": "us-b"}]})"),
                               "ch1");
  REQUIRE(stream.ok());
  CHECK((*stream)["publish"] == json::parse(R"([
      {"to": "origin-1", "pipeline": "eu-a", "from": "ingest-eu"},
      {"to": "origin-1", "pipeline": "us-b", "from": null}])"));
}

TEST_CASE("S-23 a bad publish target names its field") {
  CHECK(PublishError(R"({"to": "origin-1"})") == "publish");
  CHECK(PublishError(R"([{"to": "Origin 1", "pipeline": "a"}])") == "publish[0].to");
  CHECK(PublishError(R"([{"to": "origin-1", "pipeline": "A B"}])") == "publish[0].pipeline");
  CHECK(PublishError(R"([{"to": "origin-1", "pipeline": "a", "from": 5}])") == "publish[0].from");
  CHECK(PublishError(R"([{"to": "origin-1", "pipeline": "a", "by": "x"}])") == "publish[0].by");
  CHECK(PublishError(R"([{"to": "o", "pipeline": "a"}, {"to": "o", "pipeline": "a"}])") ==
        "publish[1]");
  std::string nine = "[";
  for (int i = 0; i < 9; ++i) {
    nine +=
        std::string(i ? "," : "") + R"({"to": "o)" + std::to_string(i) + R"(", "pipeline": "a"})";
  }
  CHECK(PublishError(nine + "]") == "publish");
  CHECK(PublishError("[]") == "ok");
}

}  // namespace
}  // namespace meshwork::central
