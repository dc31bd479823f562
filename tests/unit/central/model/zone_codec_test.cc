#include <catch2/catch.hpp>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "central/model/object_codecs.h"
#include "common/status/status_map.h"
#include "nlohmann/json.hpp"
#include "tests/unit/json_literal.h"

namespace meshwork::central::zone_codec_test {
namespace {

using nlohmann::json;
using testing::J;

// The field an invalid zone is rejected for.
std::string Rejected(std::string_view body, std::string_view name = "office-1") {
  auto result = ValidateZone(J(body), name);
  INFO(std::string(name) + " " + std::string(body));
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return FieldOf(result.status());
}

TEST_CASE("Z-1 a zone is a name, routes of IPv4 and IPv6 CIDRs in one list and a fallback") {
  auto zone = ValidateZone(
      J(R"({"routes": ["10.10.0.0/16", "2a02:6b8::/32"], "fallback_zone": "company"})"),
      "office-1");
  REQUIRE(zone.ok());
  CHECK((*zone)["name"] == "office-1");
  CHECK((*zone)["routes"] == J(R"(["10.10.0.0/16", "2a02:6b8::/32"])"));
  CHECK((*zone)["fallback_zone"] == "company");

  // Every member present in the stored form: no routes, no fallback (null: none).
  auto bare = ValidateZone(J("{}"), "company");
  REQUIRE(bare.ok());
  CHECK((*bare)["routes"].empty());
  CHECK((*bare)["fallback_zone"].is_null());
  auto cleared = ValidateZone(J(R"({"routes": null, "fallback_zone": null})"), "z");
  REQUIRE(cleared.ok());
  CHECK((*cleared)["fallback_zone"].is_null());

  // The name: [a-z0-9][a-z0-9._-]{0,63}.
  for (std::string_view ok : {"a", "0", "eu-west_1.a"}) CHECK(ValidateZone(J("{}"), ok).ok());
  CHECK(ValidateZone(J("{}"), std::string(64, 'a')).ok());
  for (std::string_view bad : {"", "Office", "-a", ".a", "a b", "a/b"}) {
    CHECK(Rejected("{}", bad) == "name");
  }
  CHECK(Rejected("{}", std::string(65, 'a')) == "name");

  // The fallback is a zone name or null; members are only these three.
  CHECK(Rejected(R"({"fallback_zone": "Office"})") == "fallback_zone");
  CHECK(Rejected(R"({"fallback_zone": 7})") == "fallback_zone");
  CHECK(Rejected(R"({"routes": "10.0.0.0/8"})") == "routes");
  CHECK(Rejected(R"({"routes": [7]})") == "routes[0]");
  CHECK(Rejected(R"({"nodes": ["edge-1"]})") == "nodes");  // Z-4: nodes name their zone
}

}  // namespace
}  // namespace meshwork::central::zone_codec_test
