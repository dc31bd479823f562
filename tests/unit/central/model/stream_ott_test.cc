// The `ott` member of a stream (O-1, O-3a, O-15): validation and its resolved form.
#include <catch2/catch.hpp>
#include <string>
#include <string_view>

#include "central/model/object_codecs.h"
#include "common/status/status_map.h"
#include "nlohmann/json.hpp"

namespace meshwork::central {
namespace {

using nlohmann::json;

std::string OttError(std::string_view ott) {
  auto result =
      ValidateStream(json::parse(std::string(R"({"ott": )") + std::string(ott) + "}"), "ch1");
  if (result.ok()) return "ok";
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return FieldOf(result.status());
}

TEST_CASE("O-1 a stream without ott is stored with ott resolved and disabled") {
  auto stream = ValidateStream(json::object(), "ch1");
  REQUIRE(stream.ok());
  CHECK((*stream)["ott"] == json::parse(R"({"enabled": false, "group": null,
                                           "backup": "can_replace", "stale_after_ms": null,
                                           "min_protocol_version": null})"));
  auto null_ott = ValidateStream(json::parse(R"({"ott": null})"), "ch1");
  REQUIRE(null_ott.ok());
  CHECK((*null_ott)["ott"] == (*stream)["ott"]);
}

TEST_CASE("O-1 an enabled ott member is stored with every member present") {
  auto stream =
      ValidateStream(json::parse(R"({"ott": {"enabled": true, "group": "news.hd"}})"), "ch1");
  REQUIRE(stream.ok());
  CHECK((*stream)["ott"] == json::parse(R"({"enabled": true, "group": "news.hd",
                                           "backup": "can_replace", "stale_after_ms": null,
                                           "min_protocol_version": null})"));
  auto full = ValidateStream(json::parse(R"({"ott": {"enabled": true, "group": "g1",
      "backup": "not_offered", "stale_after_ms": 4000}})"),
                             "ch1");
  REQUIRE(full.ok());
  CHECK((*full)["ott"]["backup"] == "not_offered");
  CHECK((*full)["ott"]["stale_after_ms"] == 4000);
  // The stored form validates to itself.
  auto again = ValidateStream(*full, "ch1");
  REQUIRE(again.ok());
  CHECK(*again == *full);
}

TEST_CASE("O-1 invalid ott members are rejected naming the field") {
  CHECK(OttError(R"({"enabled": true})") == "ott.group");
  CHECK(OttError(R"({"enabled": true, "group": null})") == "ott.group");
  CHECK(OttError(R"({"enabled": true, "group": "Bad Name"})") == "ott.group");
  CHECK(OttError(R"({"enabled": true, "group": ""})") == "ott.group");
  CHECK(OttError(R"({"enabled": "yes", "group": "g"})") == "ott.enabled");
  CHECK(OttError(R"({"enabled": true, "group": "g", "backup": "maybe"})") == "ott.backup");
  CHECK(OttError(R"({"enabled": true, "group": "g", "stale_after_ms": 499})") ==
        "ott.stale_after_ms");
  CHECK(OttError(R"({"enabled": true, "group": "g", "stale_after_ms": 60001})") ==
        "ott.stale_after_ms");
  CHECK(OttError(R"({"enabled": true, "group": "g", "colour": 1})") == "ott.colour");
  CHECK(OttError(R"("on")") == "ott");
  // A disabled member may name its group already.
  CHECK(OttError(R"({"enabled": false, "group": "g"})") == "ok");
  CHECK(OttError(R"({"enabled": true, "group": "g", "stale_after_ms": 500})") == "ok");
  CHECK(OttError(R"({"enabled": true, "group": "g", "stale_after_ms": null})") == "ok");
}

TEST_CASE("O-4 a stream's minimum protocol version outside 1…1000000 is rejected naming it") {
  for (const char* bad : {"0", "-1", "1000001", "1.5", "\"2\"", "true", "[]"}) {
    CAPTURE(bad);
    CHECK(OttError(std::string(R"({"enabled": true, "group": "g", "min_protocol_version": )") +
                   bad + "}") == "ott.min_protocol_version");
  }
  CHECK(OttError(R"({"enabled": true, "group": "g", "min_protocol_version": 1})") == "ok");
  CHECK(OttError(R"({"enabled": true, "group": "g", "min_protocol_version": 1000000})") == "ok");
  CHECK(OttError(R"({"enabled": true, "group": "g", "min_protocol_version": null})") == "ok");
}

TEST_CASE("O-1 a merge patch turns ott on for a stored stream") {
  auto stored = ValidateStream(json::object(), "ch1");
  REQUIRE(stored.ok());
  json merged = MergeStreamPatch(*stored, json::parse(R"({"ott": {"enabled": true,
                                                          "group": "ch1"}})"));
  auto patched = ValidateStream(merged, "ch1");
  REQUIRE(patched.ok());
  CHECK((*patched)["ott"]["enabled"] == true);
  CHECK((*patched)["ott"]["group"] == "ch1");
  CHECK((*patched)["ott"]["backup"] == "can_replace");
}

}  // namespace
}  // namespace meshwork::central
