#include "central/model/streamer_codec.h"

#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "central/model/streamer_proto.h"
#include "common/status/status_map.h"
#include "google/protobuf/descriptor.h"
#include "nlohmann/json.hpp"
#include "tests/unit/json_literal.h"

namespace meshwork::central {
namespace {

using nlohmann::json;

using testing::J;

json Valid(std::string_view body, std::string_view id = "edge-1") {
  auto result = ValidateStreamer(J(body), id);
  INFO(std::string(body) + " -> " + result.status().ToString());
  REQUIRE(result.ok());
  return *result;
}

// The field an invalid body is rejected for ("" when it is accepted or the error names none).
std::string RejectedField(std::string_view body, std::string_view id = "edge-1") {
  auto result = ValidateStreamer(J(body), id);
  INFO(std::string(body));
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return FieldOf(result.status());
}

std::string PatchRejectedField(const json& current, std::string_view patch) {
  auto result = PatchStreamer(current, J(patch), "edge-1");
  INFO(std::string(patch));
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return FieldOf(result.status());
}

constexpr std::string_view kMinimal = R"({"hostname": "edge1.example.net", "role": "edge"})";

TEST_CASE("M-1 a minimal streamer gets its canonical form with every member present") {
  json c = Valid(kMinimal);
  CHECK(c == J(R"({
    "id": "edge-1",
    "hostname": "edge1.example.net",
    "role": "edge",
    "zone": null,
    "cdn": {"playback_session_limit": null, "playback_bandwidth_kbit": null,
            "network_bandwidth_kbit": null},
    "backup_session_limit": null,
    "alert_thresholds": {"cpu_percent_error": null, "network_percent_error": null},
    "drain": false
  })"));
}

TEST_CASE("M-1 a full streamer body is kept as given") {
  json body = J(R"({
    "id": "edge-1",
    "hostname": "203.0.113.7",
    "role": "origin",
    "zone": "moscow-1",
    "cdn": {"playback_session_limit": 1000, "playback_bandwidth_kbit": 900000,
            "network_bandwidth_kbit": 10000000},
    "backup_session_limit": 50,
    "alert_thresholds": {"cpu_percent_error": 90, "network_percent_error": 85.5},
    "drain": true
  })");
  auto c = ValidateStreamer(body, "edge-1");
  REQUIRE(c.ok());
  CHECK(*c == body);
}

// C-8: the members of `object` and the fields of `message` are the same names, nested
// objects with their messages' fields (Limit fields carry a number in JSON); `central_only`
// names the JSON members the node is never sent.
void CheckSameNames(const json& object, const google::protobuf::Descriptor& message,
                    const std::set<std::string>& central_only, const std::string& path) {
  for (const auto& [key, value] : object.items()) {
    if (central_only.count(path + key)) continue;
    INFO(path + key);
    const auto* field = message.FindFieldByName(key);
    REQUIRE(field != nullptr);
    if (value.is_object()) {
      REQUIRE(field->message_type() != nullptr);
      CheckSameNames(value, *field->message_type(), central_only, path + key + ".");
    }
  }
  for (int i = 0; i < message.field_count(); ++i) {
    INFO(path + message.field(i)->name());
    CHECK(object.contains(message.field(i)->name()));
  }
}

TEST_CASE("C-8 the REST streamer object and the gRPC settings message share field names") {
  json c = Valid(R"({"hostname": "h", "role": "edge", "zone": "spb",
                     "cdn": {"playback_session_limit": 1, "playback_bandwidth_kbit": 2,
                             "network_bandwidth_kbit": 3},
                     "backup_session_limit": 4,
                     "alert_thresholds": {"cpu_percent_error": 5, "network_percent_error": 6}})");
  // `drain` (CS-4) is central's steering input, not a node setting.
  CheckSameNames(c, *v1::StreamerSettings::descriptor(), {"drain"}, "");
  for (const auto& [key, value] : c.items()) {
    INFO(key);
    CHECK(key == absl::AsciiStrToLower(key));  // snake_case
  }
}

TEST_CASE("Z-16 a limit of 0 is kept as 0, distinct from null") {
  json c = Valid(R"({"hostname": "h", "role": "edge",
                     "cdn": {"playback_session_limit": 0, "playback_bandwidth_kbit": null},
                     "backup_session_limit": 0})");
  CHECK(c["cdn"]["playback_session_limit"].is_number());
  CHECK(c["cdn"]["playback_session_limit"] == 0);
  CHECK(c["cdn"]["playback_bandwidth_kbit"].is_null());
  CHECK(c["cdn"]["network_bandwidth_kbit"].is_null());
  CHECK(c["backup_session_limit"] == 0);

  auto settings = StreamerToProto(c);
  CHECK(settings.cdn().has_playback_session_limit());
  CHECK(settings.cdn().playback_session_limit().value() == 0);
  CHECK_FALSE(settings.cdn().has_playback_bandwidth_kbit());
  CHECK_FALSE(settings.cdn().has_network_bandwidth_kbit());
  CHECK(settings.has_backup_session_limit());
  CHECK(settings.backup_session_limit().value() == 0);
}

TEST_CASE("Z-16 an absent or null cdn object means no limits") {
  json a = Valid(R"({"hostname": "h", "role": "edge"})");
  json b = Valid(R"({"hostname": "h", "role": "edge", "cdn": null})");
  json c = Valid(R"({"hostname": "h", "role": "edge", "cdn": {}})");
  CHECK(a == b);
  CHECK(a == c);
  auto settings = StreamerToProto(a);
  CHECK_FALSE(settings.cdn().has_playback_session_limit());
  CHECK_FALSE(settings.cdn().has_playback_bandwidth_kbit());
  CHECK_FALSE(settings.cdn().has_network_bandwidth_kbit());
  CHECK_FALSE(settings.has_backup_session_limit());
}

TEST_CASE("Z-15 the settings message carries each limit independently") {
  json c = Valid(R"({"hostname": "edge1.example.net", "role": "edge", "zone": "spb",
                     "cdn": {"playback_bandwidth_kbit": 500000, "network_bandwidth_kbit": 7},
                     "alert_thresholds": {"cpu_percent_error": 80}})");
  auto s = StreamerToProto(c);
  CHECK(s.id() == "edge-1");
  CHECK(s.hostname() == "edge1.example.net");
  CHECK(s.role() == v1::ROLE_EDGE);
  CHECK(s.zone() == "spb");
  CHECK_FALSE(s.cdn().has_playback_session_limit());
  CHECK(s.cdn().playback_bandwidth_kbit().value() == 500000);
  CHECK(s.cdn().network_bandwidth_kbit().value() == 7);
  CHECK(s.alert_thresholds().cpu_percent_error().value() == 80);
  CHECK_FALSE(s.alert_thresholds().has_network_percent_error());
  CHECK(StreamerToProto(Valid(R"({"hostname": "h", "role": "ingest"})")).role() == v1::ROLE_INGEST);
  CHECK(StreamerToProto(Valid(R"({"hostname": "h", "role": "origin"})")).zone().empty());
}

TEST_CASE("M-1 unknown members are rejected naming them, nested ones with their path") {
  CHECK(RejectedField(R"({"hostname": "h", "role": "edge", "colour": "red"})") == "colour");
  CHECK(RejectedField(R"({"hostname": "h", "role": "edge", "cdn": {"foo": 1}})") == "cdn.foo");
  CHECK(RejectedField(R"({"hostname": "h", "role": "edge", "cdn": {"foo": null}})") == "cdn.foo");
  CHECK(RejectedField(R"({"hostname": "h", "role": "edge",
                          "alert_thresholds": {"disk_percent_error": 5}})") ==
        "alert_thresholds.disk_percent_error");
}

TEST_CASE("M-1 members of the wrong type are rejected naming them") {
  CHECK(RejectedField(R"({"hostname": "h", "role": 5})") == "role");
  CHECK(RejectedField(R"({"hostname": 5, "role": "edge"})") == "hostname");
  CHECK(RejectedField(R"({"hostname": "h", "role": "edge", "zone": 3})") == "zone");
  CHECK(RejectedField(R"({"hostname": "h", "role": "edge", "cdn": 3})") == "cdn");
  CHECK(RejectedField(R"({"hostname": "h", "role": "edge", "cdn": []})") == "cdn");
  CHECK(RejectedField(R"({"hostname": "h", "role": "edge",
                          "cdn": {"playback_session_limit": "100"}})") ==
        "cdn.playback_session_limit");
  CHECK(RejectedField(R"({"hostname": "h", "role": "edge",
                          "cdn": {"playback_session_limit": true}})") ==
        "cdn.playback_session_limit");
  CHECK(RejectedField(R"({"hostname": "h", "role": "edge", "alert_thresholds": "x"})") ==
        "alert_thresholds");
  CHECK(RejectedField(R"({"hostname": "h", "role": "edge",
                          "alert_thresholds": {"cpu_percent_error": "90"}})") ==
        "alert_thresholds.cpu_percent_error");
}

TEST_CASE("M-1 a body that is not an object is rejected") {
  auto result = ValidateStreamer(J("[1, 2]"), "edge-1");
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(FieldOf(result.status()) == "body");
}

TEST_CASE("M-1 the role must be ingest, origin or edge") {
  CHECK(RejectedField(R"({"hostname": "h", "role": "relay"})") == "role");
  CHECK(RejectedField(R"({"hostname": "h", "role": "EDGE"})") == "role");
  CHECK(RejectedField(R"({"hostname": "h", "role": ""})") == "role");
  CHECK(RejectedField(R"({"hostname": "h"})") == "role");
  CHECK(RejectedField(R"({"hostname": "h", "role": null})") == "role");
}

TEST_CASE("Z-16 limits must be non-negative integers of at most 2^53") {
  for (std::string_view key :
       {"playback_session_limit", "playback_bandwidth_kbit", "network_bandwidth_kbit"}) {
    std::string field = "cdn." + std::string(key);
    auto body = [&](std::string_view value) {
      return R"({"hostname": "h", "role": "edge", "cdn": {")" + std::string(key) +
             "\": " + std::string(value) + "}}";
    };
    INFO(field);
    CHECK(RejectedField(body("-1")) == field);
    CHECK(RejectedField(body("1.5")) == field);
    CHECK(RejectedField(body("-0.5")) == field);
    CHECK(RejectedField(body("9007199254740993")) == field);      // 2^53 + 1
    CHECK(RejectedField(body("18446744073709551615")) == field);  // 2^64 - 1
    CHECK(RejectedField(body("1e300")) == field);
    CHECK(Valid(body("9007199254740992"))["cdn"][std::string(key)] ==
          9007199254740992ULL);  // 2^53 itself is fine
  }
  CHECK(RejectedField(R"({"hostname": "h", "role": "edge", "backup_session_limit": -3})") ==
        "backup_session_limit");
  CHECK(RejectedField(R"({"hostname": "h", "role": "edge", "backup_session_limit": 2.0})") ==
        "backup_session_limit");
}

TEST_CASE("M-1 alert thresholds must be between 0 and 100") {
  CHECK(RejectedField(R"({"hostname": "h", "role": "edge",
                          "alert_thresholds": {"cpu_percent_error": 101}})") ==
        "alert_thresholds.cpu_percent_error");
  CHECK(RejectedField(R"({"hostname": "h", "role": "edge",
                          "alert_thresholds": {"network_percent_error": -1}})") ==
        "alert_thresholds.network_percent_error");
  json c = Valid(R"({"hostname": "h", "role": "edge",
                     "alert_thresholds": {"cpu_percent_error": 0, "network_percent_error": 100}})");
  CHECK(c["alert_thresholds"]["cpu_percent_error"] == 0);
  CHECK(c["alert_thresholds"]["network_percent_error"] == 100);
}

TEST_CASE("Z-4 M-1 a node's zone is a member of the node, a valid zone name or null (unzoned)") {
  CHECK(RejectedField(R"({"hostname": "h", "role": "edge", "zone": "Moscow"})") == "zone");
  CHECK(RejectedField(R"({"hostname": "h", "role": "edge", "zone": ""})") == "zone");
  CHECK(RejectedField(R"({"hostname": "h", "role": "edge", "zone": "-east"})") == "zone");
  CHECK(RejectedField(R"({"hostname": "h", "role": "edge", "zone": "a b"})") == "zone");
  CHECK(RejectedField(R"({"hostname": "h", "role": "edge", "zone": ")" + std::string(65, 'a') +
                      "\"}") == "zone");
  CHECK(Valid(R"({"hostname": "h", "role": "edge", "zone": ")" + std::string(64, 'a') +
              "\"}")["zone"] == std::string(64, 'a'));
  CHECK(Valid(R"({"hostname": "h", "role": "edge", "zone": "eu-west_1.a"})")["zone"] ==
        "eu-west_1.a");
  CHECK(Valid(R"({"hostname": "h", "role": "edge", "zone": null})")["zone"].is_null());
}

TEST_CASE("M-1 the hostname is required and must be a host name or an IP address") {
  CHECK(RejectedField(R"({"role": "edge"})") == "hostname");
  CHECK(RejectedField(R"({"hostname": null, "role": "edge"})") == "hostname");
  CHECK(RejectedField(R"({"hostname": "", "role": "edge"})") == "hostname");
  CHECK(RejectedField(R"({"hostname": "bad host", "role": "edge"})") == "hostname");
  CHECK(RejectedField(R"({"hostname": "-edge.example.net", "role": "edge"})") == "hostname");
  CHECK(RejectedField(R"({"hostname": "edge-.example.net", "role": "edge"})") == "hostname");
  CHECK(RejectedField(R"({"hostname": "edge..example.net", "role": "edge"})") == "hostname");
  CHECK(RejectedField(R"({"hostname": "edge.example.net.", "role": "edge"})") == "hostname");
  CHECK(RejectedField(R"({"hostname": "[203.0.113.7]", "role": "edge"})") == "hostname");
  CHECK(RejectedField(R"({"hostname": "edge_1.example.net", "role": "edge"})") == "hostname");
  CHECK(Valid(R"({"hostname": "Edge-1.Example.NET", "role": "edge"})")["hostname"] ==
        "Edge-1.Example.NET");
  CHECK(Valid(R"({"hostname": "203.0.113.7", "role": "edge"})")["hostname"] == "203.0.113.7");
  CHECK(Valid(R"({"hostname": "2001:db8::1", "role": "edge"})")["hostname"] == "2001:db8::1");
  CHECK(Valid(R"({"hostname": "[2001:db8::1]", "role": "edge"})")["hostname"] == "[2001:db8::1]");
}

TEST_CASE("M-1 an id in the body must equal the id in the path") {
  CHECK(RejectedField(R"({"id": "edge-2", "hostname": "h", "role": "edge"})") == "id");
  CHECK(RejectedField(R"({"id": 1, "hostname": "h", "role": "edge"})") == "id");
  CHECK(Valid(R"({"id": "edge-1", "hostname": "h", "role": "edge"})")["id"] == "edge-1");
  // The path id itself must be a valid name.
  CHECK(RejectedField(R"({"hostname": "h", "role": "edge"})", "Edge 1") == "id");
}

TEST_CASE("M-1 the read-only status member is ignored") {
  json c = Valid(R"({"hostname": "h", "role": "edge",
                     "status": {"online": true, "anything": [1, 2]}})");
  CHECK_FALSE(c.contains("status"));
  CHECK(c == Valid(R"({"hostname": "h", "role": "edge"})"));
}

TEST_CASE("T-7 a merge patch leaves absent members unchanged") {
  json current = Valid(R"({"hostname": "h", "role": "edge", "zone": "spb",
                           "cdn": {"playback_session_limit": 100, "playback_bandwidth_kbit": 200},
                           "backup_session_limit": 3})");
  auto patched = PatchStreamer(current, J(R"({"cdn": {"network_bandwidth_kbit": 300}})"), "edge-1");
  REQUIRE(patched.ok());
  json expected = current;
  expected["cdn"]["network_bandwidth_kbit"] = 300;
  CHECK(*patched == expected);

  auto same = PatchStreamer(current, J("{}"), "edge-1");
  REQUIRE(same.ok());
  CHECK(*same == current);

  auto role = PatchStreamer(current, J(R"({"role": "origin"})"), "edge-1");
  REQUIRE(role.ok());
  CHECK((*role)["role"] == "origin");
  CHECK((*role)["zone"] == "spb");
  CHECK((*role)["cdn"] == current["cdn"]);
}

TEST_CASE("T-7 null in a merge patch clears a member") {
  json current = Valid(R"({"hostname": "h", "role": "edge", "zone": "spb",
                           "cdn": {"playback_session_limit": 100, "playback_bandwidth_kbit": 200},
                           "backup_session_limit": 3})");
  auto patched = PatchStreamer(
      current, J(R"({"cdn": {"playback_session_limit": null}, "zone": null})"), "edge-1");
  REQUIRE(patched.ok());
  CHECK((*patched)["cdn"]["playback_session_limit"].is_null());
  CHECK((*patched)["cdn"]["playback_bandwidth_kbit"] == 200);
  CHECK((*patched)["zone"].is_null());
  CHECK((*patched)["backup_session_limit"] == 3);

  auto cleared = PatchStreamer(current, J(R"({"cdn": null})"), "edge-1");
  REQUIRE(cleared.ok());
  CHECK((*cleared)["cdn"] == J(R"({"playback_session_limit": null,
                                   "playback_bandwidth_kbit": null,
                                   "network_bandwidth_kbit": null})"));
  // The result is canonical again: the cleared limit is present as null.
  CHECK(StreamerToProto(*cleared).cdn().ByteSizeLong() == 0);
}

TEST_CASE("T-7 a merge patch may set a limit to 0") {
  json current = Valid(R"({"hostname": "h", "role": "edge",
                           "cdn": {"playback_session_limit": 100}})");
  auto patched = PatchStreamer(current, J(R"({"cdn": {"playback_session_limit": 0}})"), "edge-1");
  REQUIRE(patched.ok());
  CHECK((*patched)["cdn"]["playback_session_limit"] == 0);
  CHECK_FALSE((*patched)["cdn"]["playback_session_limit"].is_null());
}

TEST_CASE("T-7 unknown members in a merge patch are rejected even when null") {
  json current = Valid(kMinimal);
  CHECK(PatchRejectedField(current, R"({"colour": null})") == "colour");
  CHECK(PatchRejectedField(current, R"({"colour": "red"})") == "colour");
  CHECK(PatchRejectedField(current, R"({"cdn": {"foo": null}})") == "cdn.foo");
  CHECK(PatchRejectedField(current, R"({"alert_thresholds": {"foo": null}})") ==
        "alert_thresholds.foo");
}

TEST_CASE("T-7 a merge patch producing an invalid streamer is rejected") {
  json current = Valid(kMinimal);
  CHECK(PatchRejectedField(current, R"({"hostname": null})") == "hostname");
  CHECK(PatchRejectedField(current, R"({"role": "nope"})") == "role");
  CHECK(PatchRejectedField(current, R"({"cdn": {"playback_session_limit": -1}})") ==
        "cdn.playback_session_limit");
  CHECK(PatchRejectedField(current, R"({"id": "other"})") == "id");
  CHECK(PatchRejectedField(current, "[]") == "body");
}

TEST_CASE("T-7 a status member in a merge patch is ignored") {
  json current = Valid(kMinimal);
  auto patched =
      PatchStreamer(current, J(R"({"status": {"online": false}, "zone": "z"})"), "edge-1");
  REQUIRE(patched.ok());
  CHECK_FALSE(patched->contains("status"));
  CHECK((*patched)["zone"] == "z");
}

}  // namespace
}  // namespace meshwork::central

namespace meshwork::central {
namespace {

// A non-negative value held as a signed integer (what nlohmann::json stores for C++ `int`
// literals) is a valid limit; the parser stores positive integers as unsigned, code may not.
TEST_CASE("Z-16 a non-negative limit held as a signed integer is accepted") {
  nlohmann::json body = {{"hostname", "h"},
                         {"role", "edge"},
                         {"cdn", {{"playback_session_limit", 100}}},
                         {"backup_session_limit", 0}};
  auto result = ValidateStreamer(body, "edge-1");
  INFO(result.status().ToString());
  REQUIRE(result.ok());
  CHECK((*result)["cdn"]["playback_session_limit"] == 100);
}

TEST_CASE("CS-4 drain is a boolean, false unless set, and a patch can set and clear it") {
  CHECK(Valid(kMinimal)["drain"] == false);
  CHECK(RejectedField(R"({"hostname": "h", "role": "edge", "drain": "yes"})") == "drain");
  auto drained = PatchStreamer(Valid(kMinimal), J(R"({"drain": true})"), "edge-1");
  REQUIRE(drained.ok());
  CHECK((*drained)["drain"] == true);
  CHECK((*drained)["hostname"] == "edge1.example.net");
  auto back = PatchStreamer(*drained, J(R"({"drain": false})"), "edge-1");
  REQUIRE(back.ok());
  CHECK((*back)["drain"] == false);
}

}  // namespace
}  // namespace meshwork::central
