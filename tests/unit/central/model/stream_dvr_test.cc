// The `dvr` member of a stream (D-1, D-8): validation and its canonical form.
#include <catch2/catch.hpp>
#include <string>
#include <string_view>

#include "central/model/object_codecs.h"
#include "common/status/status_map.h"
#include "nlohmann/json.hpp"

namespace meshwork::central {
namespace {

using nlohmann::json;

std::string DvrError(std::string_view dvr) {
  auto result =
      ValidateStream(json::parse(std::string(R"({"dvr": )") + std::string(dvr) + "}"), "ch1");
  if (result.ok()) return "ok";
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return FieldOf(result.status());
}

TEST_CASE("D-1 a stream's dvr member is kept with its defaults, absent means no archive") {
  auto none = ValidateStream(json::object(), "ch1");
  REQUIRE(none.ok());
  CHECK(!none->contains("dvr"));
  auto stream = ValidateStream(json::parse(R"({"dvr": {"root": "/var/lib/meshwork/dvr"}})"), "ch1");
  REQUIRE(stream.ok());
  CHECK((*stream)["dvr"] == json::parse(R"({"root": "/var/lib/meshwork/dvr", "depth_s": 3600,
                                            "protocols": ["ts", "fmp4"], "fsync": false,
                                            "edges": false})"));
  auto full = ValidateStream(json::parse(R"({"dvr": {"root": "/d", "depth_s": 86400,
      "protocols": ["fmp4"], "max_bytes": 1073741824, "fsync": true}})"),
                             "ch1");
  REQUIRE(full.ok());
  CHECK((*full)["dvr"]["protocols"] == json::parse(R"(["fmp4"])"));
  CHECK((*full)["dvr"]["max_bytes"] == 1073741824);
}

TEST_CASE("D-8 a bad dvr member names its field") {
  CHECK(DvrError(R"("yes")") == "dvr");
  CHECK(DvrError(R"({"depth_s": 600})") == "dvr.root");
  CHECK(DvrError(R"({"root": "relative/dir"})") == "dvr.root");
  CHECK(DvrError(R"({"root": "/var/../etc"})") == "dvr.root");
  CHECK(DvrError(R"({"root": "/var/./x"})") == "dvr.root");
  CHECK(DvrError(R"({"root": "/d", "depth_s": 10})") == "dvr.depth_s");
  CHECK(DvrError(R"({"root": "/d", "depth_s": 99999999})") == "dvr.depth_s");
  CHECK(DvrError(R"({"root": "/d", "protocols": []})") == "dvr.protocols");
  CHECK(DvrError(R"({"root": "/d", "protocols": ["ts", "ts"]})") == "dvr.protocols");
  CHECK(DvrError(R"({"root": "/d", "protocols": ["hls"]})") == "dvr.protocols");
  CHECK(DvrError(R"({"root": "/d", "max_bytes": 10})") == "dvr.max_bytes");
  CHECK(DvrError(R"({"root": "/d", "fsync": "no"})") == "dvr.fsync");
  CHECK(DvrError(R"({"root": "/d", "edges": 1})") == "dvr.edges");
  CHECK(DvrError(R"({"root": "/d", "extra": 1})") == "dvr.extra");
}

}  // namespace
}  // namespace meshwork::central
