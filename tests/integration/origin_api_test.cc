// The live-origin stream API end to end on a real central: template and pipelines in the
// stream object (L-4, L-5, L-11), masks (L-13) and cache invalidation (L-14).
#include <catch2/catch.hpp>
#include <string>

#include "tests/integration/harness.h"

namespace meshwork::testing {
namespace {

const std::string kStreams = "/central/api-v4/streams";

HttpResult Call(const Central& c, const std::string& method, const std::string& path,
                const std::string& body = "") {
  auto r = Http(method, c.http, kStreams + path, body);
  UNSCOPED_INFO(method << " " << path << " " << body << " → " << r.status << " " << r.body);
  return r;
}

nlohmann::json Stream(const Central& c, const std::string& name) {
  auto r = Call(c, "GET", "/" + name);
  REQUIRE(r.status == 200);
  return r.Json();
}

TEST_CASE("L-13 L-14 masks and invalidation through the REST API of a running central") {
  std::string dir = MakeTempDir("origin-api");
  Central central = StartCentral(dir);

  auto created = Call(central, "PUT", "/news/ch1",
                      R"({"segment_ms": 4000, "pipelines": ["eu-a", "us-b"],
                          "template": {"availability_start": 1700000000000}})");
  REQUIRE(created.status == 201);
  auto stream = created.Json();
  CHECK(stream["template"] == nlohmann::json::parse(R"({"availability_start": 1700000000000,
      "segment_ms": 4000, "part_ms": 500, "retry_deadline_ms": 4000, "grace_ms": 200})"));
  CHECK(stream["pipelines"] == nlohmann::json::parse(R"(["eu-a", "us-b"])"));
  CHECK(stream["masks"] == nlohmann::json::array());
  CHECK(stream["version"] == 1);
  CHECK(stream["range_versions"] == nlohmann::json::array());

  // L-13: POST a mask, see it in the stream, DELETE it.
  auto mask = Call(central, "POST", "/news/ch1/masks",
                   R"({"pipeline": "eu-a", "region": "eu", "from_msn": 100, "to_msn": 140})");
  REQUIRE(mask.status == 201);
  CHECK(mask.Json() == nlohmann::json::parse(R"({"id": "m1", "pipeline": "eu-a", "region": "eu",
                                                 "from_msn": 100, "to_msn": 140})"));
  REQUIRE(Call(central, "POST", "/news/ch1/masks", R"({"region": "us"})").status == 201);
  auto stored = Stream(central, "news/ch1");
  REQUIRE(stored["masks"].size() == 2);
  CHECK(stored["masks"][0] == mask.Json());
  auto listed = Call(central, "GET", "/news/ch1/masks");
  REQUIRE(listed.status == 200);
  CHECK(listed.Json()["masks"] == stored["masks"]);

  CHECK(Call(central, "DELETE", "/news/ch1/masks/m1").status == 204);
  auto missing = Call(central, "DELETE", "/news/ch1/masks/m1");
  CHECK(missing.status == 404);
  CHECK(missing.body.find("m1") != std::string::npos);
  CHECK(Call(central, "DELETE", "/news/ch1/masks", R"({"region": "us"})").status == 204);
  CHECK(Call(central, "DELETE", "/news/ch1/masks", R"({"region": "us"})").status == 404);
  CHECK(Stream(central, "news/ch1")["masks"] == nlohmann::json::array());
  CHECK(Call(central, "POST", "/news/ch1/masks", R"({"region": "us"})").Json()["id"] == "m3");

  // A 400 names the field.
  auto bad = Call(central, "POST", "/news/ch1/masks",
                  R"({"pipeline": "eu-a", "from_msn": 9, "to_msn": 3})");
  CHECK(bad.status == 400);
  CHECK(bad.Json()["error"]["field"] == "to_msn");
  auto no_target = Call(central, "POST", "/news/ch1/masks", R"({"from_msn": 1})");
  CHECK(no_target.status == 400);
  CHECK(no_target.Json()["error"]["field"] == "pipeline");
  CHECK(Call(central, "POST", "/nope/masks", R"({"region": "us"})").status == 404);
  CHECK(Call(central, "GET", "/nope/masks").status == 404);

  // L-14: the whole stream, then a range.
  auto whole = Call(central, "POST", "/news/ch1/invalidate");
  REQUIRE(whole.status == 200);
  CHECK(whole.Json() == nlohmann::json::parse(R"({"version": 2, "range_versions": []})"));
  auto range = Call(central, "POST", "/news/ch1/invalidate",
                    R"({"from_msn": 10, "to_msn": 20, "pipeline": "us-b"})");
  REQUIRE(range.status == 200);
  CHECK(range.Json() == nlohmann::json::parse(R"({"version": 2, "range_versions": [
      {"from_msn": 10, "to_msn": 20, "pipeline": "us-b", "region": null, "version": 3}]})"));
  auto again = Call(central, "POST", "/news/ch1/invalidate", "{}");
  REQUIRE(again.status == 200);
  CHECK(again.Json()["version"] == 4);
  CHECK(again.Json()["range_versions"] == nlohmann::json::array());
  auto bad_range = Call(central, "POST", "/news/ch1/invalidate", R"({"region": "a b"})");
  CHECK(bad_range.status == 400);
  CHECK(bad_range.Json()["error"]["field"] == "region");

  // GET → PUT round trip keeps the managed members; changing them is refused.
  stored = Stream(central, "news/ch1");
  CHECK(stored["version"] == 4);
  CHECK(Call(central, "PUT", "/news/ch1", stored.dump()).status == 200);
  stored["version"] = 9;
  auto managed = Call(central, "PUT", "/news/ch1", stored.dump());
  CHECK(managed.status == 400);
  CHECK(managed.Json()["error"]["field"] == "version");
  CHECK(managed.Json()["error"]["message"].get<std::string>().find("/invalidate") !=
        std::string::npos);
  auto conflict = Call(central, "PATCH", "/news/ch1",
                       R"({"segment_ms": 2000, "template": {"segment_ms": 6000}})");
  CHECK(conflict.status == 400);
  CHECK(conflict.Json()["error"]["field"] == "template.segment_ms");
  auto pipelines = Call(central, "PATCH", "/news/ch1", R"({"pipelines": ["ok", "Not-ok"]})");
  CHECK(pipelines.status == 400);
  CHECK(pipelines.Json()["error"]["field"] == "pipelines[1]");
  CHECK(Stream(central, "news/ch1")["version"] == 4);

  // The stream itself still answers its other verbs; POST on it is not a thing.
  CHECK(Call(central, "POST", "/news/ch1", "{}").status == 405);
  CHECK(Call(central, "PUT", "/news/masks", "{}").status == 400);
  CHECK(Call(central, "DELETE", "/news/ch1").status == 204);
  CHECK(Call(central, "POST", "/news/ch1/invalidate").status == 404);
}

}  // namespace
}  // namespace meshwork::testing
