// The live-origin members of a stream (L-4, L-5, L-11) and the server-managed masks and
// cache versions (L-13, L-14): validation, canonical form, and their atomic writes through
// ConfigService.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <string_view>

#include "central/model/config_service.h"
#include "central/model/object_codecs.h"
#include "central/store/store.h"
#include "common/status/status_map.h"
#include "nlohmann/json.hpp"
#include "tests/unit/json_literal.h"
#include "tests/unit/temp_dir.h"

namespace meshwork::central {
namespace {

using nlohmann::json;

using testing::J;

struct OriginFixture {
  TempDir dir;
  std::unique_ptr<Store> store;
  std::unique_ptr<ConfigService> service;

  OriginFixture() { Reopen(); }
  void Reopen() {
    service.reset();
    store.reset();
    auto opened = OpenRocksDbStore(dir.path());
    REQUIRE(opened.ok());
    store = std::move(*opened);
    auto loaded = ConfigService::Load(store.get());
    INFO(loaded.status().ToString());
    REQUIRE(loaded.ok());
    service = std::move(*loaded);
  }
  ~OriginFixture() {
    service.reset();
    store.reset();
  }
  const json& Stream(const std::string& name) {
    return service->Current()->streams.at(name).object;
  }
  absl::StatusOr<json> AddMask(const std::string& stream, std::string_view body) {
    json mask;
    auto stored = service->MutateObject(ObjectKind::kStream, stream, [&](json& object) {
      auto added = AddStreamMask(object, J(body));
      if (!added.ok()) return added.status();
      mask = *added;
      return absl::OkStatus();
    });
    if (!stored.ok()) return stored.status();
    return mask;
  }
  absl::StatusOr<json> Invalidate(const std::string& stream, std::string_view body) {
    return service->MutateObject(ObjectKind::kStream, stream, [&](json& object) {
      return InvalidateStream(object, J(body)).status();
    });
  }
};

// The field a rejected stream body names.
std::string StreamError(std::string_view body) {
  auto result = ValidateStream(J(body), "news/ch1");
  if (result.ok()) return "(accepted)";
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return FieldOf(result.status());
}

TEST_CASE("L-4 L-5 L-11 a stream gets a fully resolved template and the managed defaults") {
  auto plain = ValidateStream(J("{}"), "news/ch1");
  REQUIRE(plain.ok());
  CHECK((*plain)["template"] == J(R"({"availability_start": null, "segment_ms": 2000,
                                      "part_ms": 500, "retry_deadline_ms": 2000,
                                      "grace_ms": 200})"));
  CHECK((*plain)["pipelines"] == json::array());
  CHECK((*plain)["masks"] == json::array());
  CHECK((*plain)["version"] == 1);
  CHECK((*plain)["range_versions"] == json::array());
  CHECK((*plain)["next_mask_id"] == 1);

  // The template's lengths come from the stream's, and the retry deadline from segment_ms.
  auto top = ValidateStream(J(R"({"segment_ms": 4000, "part_ms": 1000})"), "ch1");
  REQUIRE(top.ok());
  CHECK((*top)["template"]["segment_ms"] == 4000);
  CHECK((*top)["template"]["part_ms"] == 1000);
  CHECK((*top)["template"]["retry_deadline_ms"] == 4000);

  // Given only in the template, the stream's own lengths follow it.
  auto inner = ValidateStream(J(R"({"template": {"segment_ms": 3000, "availability_start":
                                    1700000000000, "retry_deadline_ms": 600000,
                                    "grace_ms": 0}})"),
                              "ch1");
  REQUIRE(inner.ok());
  CHECK((*inner)["segment_ms"] == 3000);
  CHECK((*inner)["template"] == J(R"({"availability_start": 1700000000000, "segment_ms": 3000,
                                      "part_ms": 500, "retry_deadline_ms": 600000,
                                      "grace_ms": 0})"));
  // The same value in both places is fine.
  CHECK(StreamError(R"({"segment_ms": 3000, "template": {"segment_ms": 3000}})") == "(accepted)");
  CHECK(StreamError(R"({"template": null, "pipelines": null})") == "(accepted)");
}

TEST_CASE("L-4 L-5 template conflicts and bad members are rejected naming the template field") {
  CHECK(StreamError(R"({"segment_ms": 2000, "template": {"segment_ms": 4000}})") ==
        "template.segment_ms");
  CHECK(StreamError(R"({"part_ms": 200, "template": {"part_ms": 400}})") == "template.part_ms");
  CHECK(StreamError(R"({"template": {"foo": 1}})") == "template.foo");
  CHECK(StreamError(R"({"template": 5})") == "template");
  CHECK(StreamError(R"({"template": {"availability_start": -1}})") ==
        "template.availability_start");
  CHECK(StreamError(R"({"template": {"availability_start": 1.5}})") ==
        "template.availability_start");
  CHECK(StreamError(R"({"template": {"retry_deadline_ms": 99}})") == "template.retry_deadline_ms");
  CHECK(StreamError(R"({"template": {"retry_deadline_ms": 600001}})") ==
        "template.retry_deadline_ms");
  CHECK(StreamError(R"({"template": {"grace_ms": 10001}})") == "template.grace_ms");
  CHECK(StreamError(R"({"template": {"grace_ms": -1}})") == "template.grace_ms");
  CHECK(StreamError(R"({"template": {"segment_ms": 100}})") == "template.segment_ms");
  CHECK(StreamError(R"({"template": {"segment_ms": 1000, "part_ms": 1500}})") ==
        "template.part_ms");
  CHECK(StreamError(R"({"segment_ms": 1000, "part_ms": 1500})") == "part_ms");
}

TEST_CASE("L-11 pipelines are validated naming the element") {
  auto ok = ValidateStream(J(R"({"pipelines": ["eu-a", "us-b", "0"]})"), "ch1");
  REQUIRE(ok.ok());
  CHECK((*ok)["pipelines"] == J(R"(["eu-a", "us-b", "0"])"));
  CHECK(StreamError(R"({"pipelines": "eu-a"})") == "pipelines");
  CHECK(StreamError(R"({"pipelines": ["eu-a", "EU-b"]})") == "pipelines[1]");
  CHECK(StreamError(R"({"pipelines": ["eu_a"]})") == "pipelines[0]");
  CHECK(StreamError(R"({"pipelines": [""]})") == "pipelines[0]");
  CHECK(StreamError(R"({"pipelines": [7]})") == "pipelines[0]");
  CHECK(StreamError(R"({"pipelines": ["a", "b", "a"]})") == "pipelines[2]");
  json long_id = {{"pipelines", {std::string(33, 'a')}}};
  CHECK(StreamError(long_id.dump()) == "pipelines[0]");
  json max_id = {{"pipelines", {std::string(32, 'a')}}};
  CHECK(StreamError(max_id.dump()) == "(accepted)");
  json many = {{"pipelines", json::array()}};
  for (int i = 0; i < 17; ++i) many["pipelines"].push_back("p" + std::to_string(i));
  CHECK(StreamError(many.dump()) == "pipelines[16]");
  many["pipelines"].erase(16);
  CHECK(StreamError(many.dump()) == "(accepted)");
}

TEST_CASE("L-13 L-14 a stored stream validates to itself") {
  json stored = J(R"({"name": "news/ch1", "pipelines": ["eu-a"],
    "masks": [{"id": "m2", "pipeline": "eu-a", "region": null, "from_msn": 5, "to_msn": null}],
    "next_mask_id": 4, "version": 3,
    "range_versions": [{"from_msn": 1, "to_msn": 9, "pipeline": null, "region": "eu",
                        "version": 4}]})");
  auto first = ValidateStream(stored, "news/ch1");
  INFO(first.status().ToString());
  REQUIRE(first.ok());
  CHECK((*first)["masks"] == stored["masks"]);
  CHECK((*first)["range_versions"] == stored["range_versions"]);
  CHECK((*first)["next_mask_id"] == 4);
  auto second = ValidateStream(*first, "news/ch1");
  REQUIRE(second.ok());
  CHECK(*second == *first);

  // Malformed managed members are named.
  CHECK(StreamError(R"({"masks": [{"id": "x1", "pipeline": "a"}]})") == "masks[0].id");
  CHECK(StreamError(R"({"masks": [{"id": "m1"}]})") == "masks[0].pipeline");
  CHECK(StreamError(R"({"masks": [{"id": "m3", "pipeline": "a"}], "next_mask_id": 3})") ==
        "next_mask_id");
  CHECK(StreamError(R"({"version": 0})") == "version");
  CHECK(StreamError(R"({"range_versions": [{"from_msn": 1}]})") == "range_versions[0].version");
}

TEST_CASE("L-13 stream names that would shadow the masks and invalidate paths are refused") {
  for (std::string_view name : {"news/masks", "news/invalidate", "news/masks/m1"}) {
    INFO(std::string(name));
    auto result = ValidateStream(J("{}"), name);
    REQUIRE_FALSE(result.ok());
    CHECK(FieldOf(result.status()) == "name");
  }
  for (std::string_view name :
       {"masks", "invalidate", "masks/ch1", "news/masks-1", "a/masks/b/c"}) {
    INFO(std::string(name));
    CHECK(ValidateStream(J("{}"), name).ok());
  }
}

TEST_CASE(
    "Z-20 stream names under central's own paths (vod, steering, console, central) are "
    "refused") {
  for (std::string_view name : {"vod", "vod/live", "steering/x", "console/a/b", "central/api-v4"}) {
    INFO(std::string(name));
    auto result = ValidateStream(J("{}"), name);
    REQUIRE_FALSE(result.ok());
    CHECK(FieldOf(result.status()) == "name");
  }
  for (std::string_view name : {"vods", "live/vod", "news/steering", "consoles/x"}) {
    INFO(std::string(name));
    CHECK(ValidateStream(J("{}"), name).ok());
  }
}

TEST_CASE("L-13 L-14 managed members round-trip through PUT and PATCH but cannot be changed") {
  OriginFixture f;
  REQUIRE(f.service->PutObject(ObjectKind::kStream, "ch1", J(R"({"pipelines": ["eu-a"]})")).ok());
  REQUIRE(f.AddMask("ch1", R"({"pipeline": "eu-a"})").ok());
  REQUIRE(f.Invalidate("ch1", "{}").ok());
  const json stored = f.Stream("ch1");
  REQUIRE(stored["masks"].size() == 1);
  REQUIRE(stored["version"] == 2);
  uint64_t revision = f.store->revision();

  // GET → PUT unchanged: accepted, nothing new written.
  auto same = f.service->PutObject(ObjectKind::kStream, "ch1", stored);
  INFO(same.status().ToString());
  REQUIRE(same.ok());
  CHECK_FALSE(same->created);
  CHECK(same->object == stored);
  // GET → edit → PUT keeps the managed members.
  json edited = stored;
  edited["live_window"] = 8;
  auto replaced = f.service->PutObject(ObjectKind::kStream, "ch1", edited);
  REQUIRE(replaced.ok());
  CHECK(replaced->object == edited);
  // A PUT without them keeps them too.
  auto bare = f.service->PutObject(ObjectKind::kStream, "ch1", J(R"({"live_window": 9})"));
  REQUIRE(bare.ok());
  CHECK(bare->object["masks"] == stored["masks"]);
  CHECK(bare->object["version"] == 2);
  CHECK(bare->object["next_mask_id"] == 2);
  CHECK(bare->object["pipelines"] == json::array());
  revision = f.store->revision();

  struct Bad {
    std::string_view body, field, through;
  };
  for (const Bad& bad : {Bad{R"({"masks": []})", "masks", "/masks"},
                         Bad{R"({"next_mask_id": 7})", "next_mask_id", "/masks"},
                         Bad{R"({"version": 5})", "version", "/invalidate"},
                         Bad{R"({"range_versions": null})", "range_versions", "/invalidate"}}) {
    INFO(std::string(bad.body));
    auto put = f.service->PutObject(ObjectKind::kStream, "ch1", J(bad.body));
    REQUIRE_FALSE(put.ok());
    CHECK(FieldOf(put.status()) == bad.field);
    CHECK(std::string(put.status().message()).find(bad.through) != std::string::npos);
    auto patch = f.service->PatchObject(ObjectKind::kStream, "ch1", J(bad.body));
    REQUIRE_FALSE(patch.ok());
    CHECK(FieldOf(patch.status()) == bad.field);
  }
  // A PATCH repeating the stored values is fine.
  json repeat = {{"masks", stored["masks"]}, {"version", 2}, {"live_window", 9}};
  CHECK(f.service->PatchObject(ObjectKind::kStream, "ch1", repeat).ok());
  CHECK(f.store->revision() == revision);
  // A new stream may only carry the defaults.
  auto fresh = f.service->PutObject(ObjectKind::kStream, "ch2", J(R"({"version": 2})"));
  REQUIRE_FALSE(fresh.ok());
  CHECK(FieldOf(fresh.status()) == "version");
  CHECK(f.service->PutObject(ObjectKind::kStream, "ch2", J(R"({"version": 1, "masks": []})")).ok());
}

TEST_CASE("L-4 L-5 a PATCH of the segment length carries the template along") {
  OriginFixture f;
  REQUIRE(f.service->PutObject(ObjectKind::kStream, "ch1", J("{}")).ok());
  auto longer = f.service->PatchObject(ObjectKind::kStream, "ch1", J(R"({"segment_ms": 4000})"));
  INFO(longer.status().ToString());
  REQUIRE(longer.ok());
  CHECK((*longer)["segment_ms"] == 4000);
  CHECK((*longer)["template"]["segment_ms"] == 4000);
  CHECK((*longer)["template"]["retry_deadline_ms"] == 4000);  // it was the default

  auto inner =
      f.service->PatchObject(ObjectKind::kStream, "ch1", J(R"({"template": {"segment_ms": 6000,
                                                           "retry_deadline_ms": 9000}})"));
  REQUIRE(inner.ok());
  CHECK((*inner)["segment_ms"] == 6000);
  CHECK((*inner)["template"]["retry_deadline_ms"] == 9000);
  auto again = f.service->PatchObject(ObjectKind::kStream, "ch1", J(R"({"segment_ms": 2000})"));
  REQUIRE(again.ok());
  CHECK((*again)["template"]["segment_ms"] == 2000);
  CHECK((*again)["template"]["retry_deadline_ms"] == 9000);  // set explicitly: kept

  auto conflict = f.service->PatchObject(
      ObjectKind::kStream, "ch1", J(R"({"segment_ms": 3000, "template": {"segment_ms": 5000}})"));
  REQUIRE_FALSE(conflict.ok());
  CHECK(FieldOf(conflict.status()) == "template.segment_ms");
  auto unknown =
      f.service->PatchObject(ObjectKind::kStream, "ch1", J(R"({"template": {"foo": 1}})"));
  REQUIRE_FALSE(unknown.ok());
  CHECK(FieldOf(unknown.status()) == "template.foo");
}

TEST_CASE("L-13 mask bodies are validated naming the field") {
  auto full = ValidateMaskBody(J(R"({"pipeline": "eu-a", "region": "EU.west_1",
                                     "from_msn": 100, "to_msn": 140})"));
  REQUIRE(full.ok());
  CHECK(*full == J(R"({"pipeline": "eu-a", "region": "EU.west_1", "from_msn": 100,
                       "to_msn": 140})"));
  auto region = ValidateMaskBody(J(R"({"region": "eu", "to_msn": null})"));
  REQUIRE(region.ok());
  CHECK(*region == J(R"({"pipeline": null, "region": "eu", "from_msn": null, "to_msn": null})"));
  CHECK(ValidateMaskBody(J(R"({"pipeline": "a", "from_msn": 7, "to_msn": 7})")).ok());

  struct Bad {
    std::string_view body, field;
  };
  for (const Bad& bad :
       {Bad{"{}", "pipeline"}, Bad{R"({"from_msn": 1, "to_msn": 2})", "pipeline"},
        Bad{R"({"pipeline": "EU-A"})", "pipeline"}, Bad{R"({"pipeline": 5})", "pipeline"},
        Bad{R"({"region": "eu west"})", "region"}, Bad{R"({"region": ""})", "region"},
        Bad{R"({"pipeline": "a", "from_msn": 5, "to_msn": 3})", "to_msn"},
        Bad{R"({"pipeline": "a", "from_msn": -1})", "from_msn"},
        Bad{R"({"pipeline": "a", "to_msn": 1.5})", "to_msn"},
        Bad{R"({"pipeline": "a", "id": "m1"})", "id"},
        Bad{R"({"pipeline": "a", "foo": 1})", "foo"}}) {
    INFO(std::string(bad.body));
    auto result = ValidateMaskBody(J(bad.body));
    REQUIRE_FALSE(result.ok());
    CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(FieldOf(result.status()) == bad.field);
  }
  json long_region = {{"region", std::string(65, 'r')}};
  CHECK(FieldOf(ValidateMaskBody(long_region).status()) == "region");
}

TEST_CASE("L-13 a mask is stored with an id and a DELETE lifts it") {
  OriginFixture f;
  REQUIRE(f.service->PutObject(ObjectKind::kStream, "news/ch1", J("{}")).ok());
  std::vector<std::shared_ptr<const ClusterConfig>> seen;
  f.service->Subscribe([&](std::shared_ptr<const ClusterConfig> c) { seen.push_back(c); });

  auto m1 = f.AddMask("news/ch1", R"({"pipeline": "eu-a", "region": "eu", "from_msn": 100,
                                      "to_msn": 140})");
  REQUIRE(m1.ok());
  CHECK(*m1 == J(R"({"id": "m1", "pipeline": "eu-a", "region": "eu", "from_msn": 100,
                     "to_msn": 140})"));
  auto m2 = f.AddMask("news/ch1", R"({"region": "us"})");
  REQUIRE(m2.ok());
  CHECK((*m2)["id"] == "m2");
  // Each mask is its own revision, pushed as a change of the stream.
  REQUIRE(seen.size() == 2);
  CHECK(seen[1]->streams_revision == seen[1]->revision);
  CHECK(seen[1]->streams.at("news/ch1").object["masks"].size() == 2);
  CHECK(f.Stream("news/ch1")["masks"] == json::array({*m1, *m2}));

  // Lift m2 (the highest): its id is not handed out again, not even after a restart.
  auto lifted = f.service->MutateObject(ObjectKind::kStream, "news/ch1",
                                        [](json& s) { return RemoveStreamMask(s, "m2"); });
  REQUIRE(lifted.ok());
  CHECK((*lifted)["masks"] == json::array({*m1}));
  f.Reopen();
  CHECK(f.Stream("news/ch1")["masks"] == json::array({*m1}));
  auto m3 = f.AddMask("news/ch1", R"({"region": "us"})");
  REQUIRE(m3.ok());
  CHECK((*m3)["id"] == "m3");

  // A missing id: NotFound naming it, nothing written.
  uint64_t revision = f.store->revision();
  auto missing = f.service->MutateObject(ObjectKind::kStream, "news/ch1",
                                         [](json& s) { return RemoveStreamMask(s, "m2"); });
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == absl::StatusCode::kNotFound);
  CHECK(std::string(missing.status().message()).find("\"m2\"") != std::string::npos);
  CHECK(f.store->revision() == revision);

  // DELETE by body removes every equal mask, and only those.
  REQUIRE(f.AddMask("news/ch1", R"({"region": "us", "from_msn": null})").ok());
  auto by_body = f.service->MutateObject(ObjectKind::kStream, "news/ch1", [](json& s) {
    return RemoveStreamMasksLike(s, J(R"({"region": "us"})"));
  });
  REQUIRE(by_body.ok());
  CHECK((*by_body)["masks"] == json::array({*m1}));
  auto none = f.service->MutateObject(ObjectKind::kStream, "news/ch1", [](json& s) {
    return RemoveStreamMasksLike(s, J(R"({"region": "us"})"));
  });
  CHECK(none.status().code() == absl::StatusCode::kNotFound);

  auto unknown = f.AddMask("news/ch2", R"({"region": "us"})");
  CHECK(unknown.status().code() == absl::StatusCode::kNotFound);
}

TEST_CASE("L-13 a stream holds at most 100 masks") {
  OriginFixture f;
  REQUIRE(f.service->PutObject(ObjectKind::kStream, "ch1", J("{}")).ok());
  for (int i = 0; i < 100; ++i) {
    json body = {{"pipeline", "p"}, {"from_msn", i}};
    REQUIRE(f.AddMask("ch1", body.dump()).ok());
  }
  uint64_t revision = f.store->revision();
  auto over = f.AddMask("ch1", R"({"pipeline": "p"})");
  REQUIRE_FALSE(over.ok());
  CHECK(HttpStatusFor(over.status().code()) == 409);
  CHECK(f.store->revision() == revision);
  CHECK(f.Stream("ch1")["masks"].size() == 100);
  auto bad = f.AddMask("ch1", R"({"pipeline": "p", "from_msn": 3, "to_msn": 1})");
  CHECK(FieldOf(bad.status()) == "to_msn");
}

TEST_CASE("L-14 invalidation bumps the whole stream or appends a range version") {
  OriginFixture f;
  REQUIRE(f.service->PutObject(ObjectKind::kStream, "ch1", J("{}")).ok());
  auto whole = f.Invalidate("ch1", "{}");
  REQUIRE(whole.ok());
  CHECK((*whole)["version"] == 2);
  CHECK((*whole)["range_versions"] == json::array());

  auto range = f.Invalidate("ch1", R"({"from_msn": 10, "to_msn": 20, "pipeline": "eu-a"})");
  REQUIRE(range.ok());
  CHECK((*range)["version"] == 2);
  CHECK((*range)["range_versions"] == J(R"([{"from_msn": 10, "to_msn": 20, "pipeline": "eu-a",
                                             "region": null, "version": 3}])"));
  auto region = f.Invalidate("ch1", R"({"region": "eu"})");
  REQUIRE(region.ok());
  CHECK((*region)["range_versions"][1]["version"] == 4);
  // An all-null selector is the whole stream; the version passes every range version.
  auto all_null = f.Invalidate("ch1", R"({"from_msn": null})");
  REQUIRE(all_null.ok());
  CHECK((*all_null)["version"] == 5);
  CHECK((*all_null)["range_versions"] == json::array());

  // The 101st range becomes a whole-stream bump.
  for (int i = 0; i < 100; ++i) {
    json body = {{"from_msn", i}};
    REQUIRE(f.Invalidate("ch1", body.dump()).ok());
  }
  CHECK(f.Stream("ch1")["range_versions"].size() == 100);
  CHECK(f.Stream("ch1")["range_versions"][99]["version"] == 105);
  auto overflow = f.Invalidate("ch1", R"({"from_msn": 500})");
  REQUIRE(overflow.ok());
  CHECK((*overflow)["version"] == 106);
  CHECK((*overflow)["range_versions"] == json::array());

  // Invalid bodies name the field and change nothing.
  uint64_t revision = f.store->revision();
  struct Bad {
    std::string_view body, field;
  };
  for (const Bad& bad :
       {Bad{R"({"from_msn": 5, "to_msn": 4})", "to_msn"}, Bad{R"({"pipeline": "Bad"})", "pipeline"},
        Bad{R"({"region": "a b"})", "region"}, Bad{R"({"version": 9})", "version"}}) {
    INFO(std::string(bad.body));
    auto result = f.Invalidate("ch1", bad.body);
    REQUIRE_FALSE(result.ok());
    CHECK(FieldOf(result.status()) == bad.field);
  }
  CHECK(f.store->revision() == revision);
  CHECK(f.Invalidate("nope", "{}").status().code() == absl::StatusCode::kNotFound);
}

TEST_CASE("L-13 L-14 MutateObject is one atomic write and an error writes nothing") {
  OriginFixture f;
  REQUIRE(f.service->PutObject(ObjectKind::kStream, "ch1", J("{}")).ok());
  auto before = f.service->Current();
  int notified = 0;
  f.service->Subscribe([&](std::shared_ptr<const ClusterConfig>) { ++notified; });

  // An edit that fails halfway leaves nothing behind.
  auto failed = f.service->MutateObject(ObjectKind::kStream, "ch1", [](json& s) {
    s["masks"].push_back({{"id", "m1"}, {"pipeline", "a"}});
    return absl::InvalidArgumentError("stop");
  });
  CHECK_FALSE(failed.ok());
  // An edit whose result does not validate is rejected as well.
  auto invalid = f.service->MutateObject(ObjectKind::kStream, "ch1", [](json& s) {
    s["version"] = 0;
    return absl::OkStatus();
  });
  REQUIRE_FALSE(invalid.ok());
  CHECK(FieldOf(invalid.status()) == "version");
  // No change: no revision.
  auto unchanged =
      f.service->MutateObject(ObjectKind::kStream, "ch1", [](json&) { return absl::OkStatus(); });
  REQUIRE(unchanged.ok());
  CHECK(f.service->Current() == before);
  CHECK(notified == 0);

  REQUIRE(f.Invalidate("ch1", "{}").ok());
  CHECK(notified == 1);
  CHECK(f.service->Current()->revision == before->revision + 1);
  CHECK(f.service->Current()->streams_revision == before->revision + 1);
  f.Reopen();
  CHECK(f.Stream("ch1")["version"] == 2);
}

TEST_CASE("L-4 L-13 a stream stored before these members existed loads with their defaults") {
  OriginFixture f;
  json legacy = {{"name", "old"},
                 {"placement", {{"streamers", json::array()}}},
                 {"inputs", json::array()},
                 {"segment_ms", 3000},
                 {"part_ms", 500},
                 {"live_window", 6},
                 {"input_timeout_ms", 3000},
                 {"cors", "*"}};
  REQUIRE(
      f.store->Commit({{Kind::kStreams, "old", json{{"revision", 1}, {"value", legacy}}.dump()}})
          .ok());
  f.Reopen();
  const json& loaded = f.Stream("old");
  CHECK(loaded["template"]["segment_ms"] == 3000);
  CHECK(loaded["template"]["retry_deadline_ms"] == 3000);
  CHECK(loaded["masks"] == json::array());
  CHECK(loaded["version"] == 1);
  auto mask = f.AddMask("old", R"({"pipeline": "a"})");
  REQUIRE(mask.ok());
  CHECK((*mask)["id"] == "m1");
}

}  // namespace
}  // namespace meshwork::central
