#include "common/json/bounded_json.h"

#include <catch2/catch.hpp>
#include <string>

namespace meshwork::bounded_json_test {
namespace {

std::string Message(const absl::StatusOr<nlohmann::json>& r) {
  return r.ok() ? std::string() : std::string(r.status().message());
}

TEST_CASE("R-3 JSON with a member named twice in one object is refused, naming the member") {
  auto top = ParseBoundedJson(R"({"routes": "x", "routes": ["10.9.0.0/16"]})", "body");
  REQUIRE_FALSE(top.ok());
  CHECK(top.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(Message(top).find("\"routes\"") != std::string::npos);
  // Inside a nested object, and inside an object in an array.
  CHECK_FALSE(ParseBoundedJson(R"({"a": {"b": 1, "c": 2, "b": 3}})", "body").ok());
  CHECK_FALSE(ParseBoundedJson(R"([{"k": 1}, {"k": 1, "k": 2}])", "body").ok());
  // The same name in sibling and nested objects is no repetition.
  auto fine = ParseBoundedJson(R"({"k": {"k": {"k": 1}}, "l": [{"k": 1}, {"k": 2}]})", "body");
  REQUIRE(fine.ok());
  CHECK((*fine)["l"][1]["k"] == 2);
  // Names compare as decoded strings: an escape spelling the same name repeats it.
  CHECK_FALSE(ParseBoundedJson(R"({"ab": 1, "a\u0062": 2})", "body").ok());
}

TEST_CASE("R-3 JSON nested deeper than the bound is refused before it is parsed") {
  std::string deep(100, '[');
  deep += std::string(100, ']');
  auto r = ParseBoundedJson(deep, "body");
  REQUIRE_FALSE(r.ok());
  CHECK(Message(r).find("nested deeper than 64") != std::string::npos);
  CHECK(ParseBoundedJson(std::string(64, '[') + std::string(64, ']'), "body").ok());
  CHECK_FALSE(ParseBoundedJson("{\"a\": ", "body").ok());
}

}  // namespace
}  // namespace meshwork::bounded_json_test
