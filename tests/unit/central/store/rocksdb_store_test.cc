#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "central/store/store.h"
#include "tests/unit/temp_dir.h"

namespace meshwork::central {
namespace {

std::unique_ptr<Store> Open(const TempDir& dir) {
  auto store = OpenRocksDbStore(dir.path());
  INFO(store.status().ToString());
  REQUIRE(store.ok());
  return std::move(*store);
}

std::optional<std::string> GetValue(Store& store, Kind kind, std::string_view key) {
  auto value = store.Get(kind, key);
  REQUIRE(value.ok());
  return *value;
}

using Rows = std::vector<std::pair<std::string, std::string>>;

Rows ScanRows(Store& store, Kind kind) {
  auto rows = store.Scan(kind);
  REQUIRE(rows.ok());
  return *rows;
}

TEST_CASE("C-6 a new store starts at revision 0 and empty") {
  TempDir dir;
  auto store = Open(dir);
  CHECK(store->revision() == 0);
  for (Kind kind : kAllKinds) {
    INFO(std::string(KindName(kind)));
    CHECK(ScanRows(*store, kind).empty());
  }
  CHECK(GetValue(*store, Kind::kStreamers, "missing") == std::nullopt);
}

TEST_CASE("C-6 each commit advances the revision by exactly one") {
  TempDir dir;
  auto store = Open(dir);
  for (uint64_t i = 1; i <= 5; ++i) {
    auto rev = store->Commit({{Kind::kZones, "z" + std::to_string(i), "v"}});
    REQUIRE(rev.ok());
    CHECK(*rev == i);
    CHECK(store->revision() == i);
  }
  // A commit that only deletes still counts as one revision.
  auto rev = store->Commit({{Kind::kZones, "z1", std::nullopt}});
  REQUIRE(rev.ok());
  CHECK(*rev == 6);
  // A commit with several mutations is one revision.
  rev = store->Commit({{Kind::kZones, "a", "1"}, {Kind::kZones, "b", "2"}});
  REQUIRE(rev.ok());
  CHECK(*rev == 7);
}

TEST_CASE("C-6 a commit applies mutations of several kinds together") {
  TempDir dir;
  auto store = Open(dir);
  auto rev = store->Commit({{Kind::kConfig, "trusted_proxies", "[\"10.0.0.0/8\"]"},
                            {Kind::kStreamers, "edge-1", "{\"role\":\"edge\"}"},
                            {Kind::kZones, "moscow", "{}"},
                            {Kind::kStreams, "news", "{}"}});
  REQUIRE(rev.ok());
  CHECK(*rev == 1);
  CHECK(GetValue(*store, Kind::kConfig, "trusted_proxies") == "[\"10.0.0.0/8\"]");
  CHECK(GetValue(*store, Kind::kStreamers, "edge-1") == "{\"role\":\"edge\"}");
  CHECK(GetValue(*store, Kind::kZones, "moscow") == "{}");
  CHECK(GetValue(*store, Kind::kStreams, "news") == "{}");
  // Kinds are separate key spaces: the same key in another kind is absent.
  CHECK(GetValue(*store, Kind::kZones, "edge-1") == std::nullopt);
  CHECK(GetValue(*store, Kind::kStreamers, "moscow") == std::nullopt);
}

TEST_CASE("C-6 the same key in different kinds holds different values") {
  TempDir dir;
  auto store = Open(dir);
  REQUIRE(store->Commit({{Kind::kZones, "x", "zone"}, {Kind::kVod, "x", "vod"}}).ok());
  CHECK(GetValue(*store, Kind::kZones, "x") == "zone");
  CHECK(GetValue(*store, Kind::kVod, "x") == "vod");
  CHECK(GetValue(*store, Kind::kMasks, "x") == std::nullopt);
}

TEST_CASE("C-6 scan returns one kind sorted by key") {
  TempDir dir;
  auto store = Open(dir);
  REQUIRE(store
              ->Commit({{Kind::kStreamers, "edge-2", "b"},
                        {Kind::kStreamers, "edge-10", "c"},
                        {Kind::kStreamers, "aaa", "a"},
                        {Kind::kZones, "zone", "z"}})
              .ok());
  CHECK(ScanRows(*store, Kind::kStreamers) ==
        Rows{{"aaa", "a"}, {"edge-10", "c"}, {"edge-2", "b"}});
  CHECK(ScanRows(*store, Kind::kZones) == Rows{{"zone", "z"}});
  CHECK(ScanRows(*store, Kind::kOttGroups).empty());
}

TEST_CASE("C-6 a put replaces and a delete removes a key") {
  TempDir dir;
  auto store = Open(dir);
  REQUIRE(store->Commit({{Kind::kStreams, "s", "v1"}}).ok());
  REQUIRE(store->Commit({{Kind::kStreams, "s", "v2"}}).ok());
  CHECK(GetValue(*store, Kind::kStreams, "s") == "v2");
  CHECK(ScanRows(*store, Kind::kStreams) == Rows{{"s", "v2"}});
  auto rev = store->Commit({{Kind::kStreams, "s", std::nullopt}});
  REQUIRE(rev.ok());
  CHECK(*rev == 3);
  CHECK(GetValue(*store, Kind::kStreams, "s") == std::nullopt);
  CHECK(ScanRows(*store, Kind::kStreams).empty());
  // Deleting a key that does not exist is not an error.
  CHECK(store->Commit({{Kind::kStreams, "never", std::nullopt}}).ok());
}

TEST_CASE("C-6 a commit may put and delete in one batch") {
  TempDir dir;
  auto store = Open(dir);
  REQUIRE(store->Commit({{Kind::kKeys, "old", "1"}}).ok());
  REQUIRE(store->Commit({{Kind::kKeys, "old", std::nullopt}, {Kind::kKeys, "new", "2"}}).ok());
  CHECK(ScanRows(*store, Kind::kKeys) == Rows{{"new", "2"}});
}

TEST_CASE("C-6 data and revision survive closing and reopening the store") {
  TempDir dir;
  {
    auto store = Open(dir);
    REQUIRE(store->Commit({{Kind::kConfig, "trusted_proxies", "tp"}}).ok());
    REQUIRE(store->Commit({{Kind::kStreamers, "a", "1"}, {Kind::kStreamers, "b", "2"}}).ok());
    REQUIRE(store->Commit({{Kind::kStreamers, "a", std::nullopt}}).ok());
    CHECK(store->revision() == 3);
  }
  {
    auto store = Open(dir);
    CHECK(store->revision() == 3);
    CHECK(GetValue(*store, Kind::kConfig, "trusted_proxies") == "tp");
    CHECK(ScanRows(*store, Kind::kStreamers) == Rows{{"b", "2"}});
    // The revision keeps counting from where it was.
    auto rev = store->Commit({{Kind::kZones, "z", "v"}});
    REQUIRE(rev.ok());
    CHECK(*rev == 4);
  }
  auto store = Open(dir);
  CHECK(store->revision() == 4);
  CHECK(GetValue(*store, Kind::kZones, "z") == "v");
}

TEST_CASE("C-6 load reports are kept apart from the configuration") {
  TempDir dir;
  {
    auto store = Open(dir);
    REQUIRE(store->Commit({{Kind::kStreamers, "edge-1", "settings"}}).ok());
    REQUIRE(store->PutReport("edge-2", "report-b").ok());
    REQUIRE(store->PutReport("edge-1", "report-a").ok());
    REQUIRE(store->PutReport("edge-1", "report-a2").ok());
    // Reports do not advance the configuration revision.
    CHECK(store->revision() == 1);
    auto reports = store->ScanReports();
    REQUIRE(reports.ok());
    CHECK(*reports == Rows{{"edge-1", "report-a2"}, {"edge-2", "report-b"}});
    // Reports are not configuration: the streamer's settings are untouched.
    CHECK(GetValue(*store, Kind::kStreamers, "edge-1") == "settings");
    CHECK(ScanRows(*store, Kind::kStreamers) == Rows{{"edge-1", "settings"}});
    for (Kind kind : kAllKinds) {
      if (kind == Kind::kStreamers) continue;
      INFO(std::string(KindName(kind)));
      CHECK(ScanRows(*store, kind).empty());
    }
    REQUIRE(store->DeleteReport("edge-2").ok());
    reports = store->ScanReports();
    REQUIRE(reports.ok());
    CHECK(*reports == Rows{{"edge-1", "report-a2"}});
    CHECK(store->revision() == 1);
  }
  // Reports are read back at start (a clean close flushes them).
  auto store = Open(dir);
  CHECK(store->revision() == 1);
  auto reports = store->ScanReports();
  REQUIRE(reports.ok());
  CHECK(*reports == Rows{{"edge-1", "report-a2"}});
}

TEST_CASE("C-6 kind names are the documented column family names") {
  CHECK(KindName(Kind::kConfig) == "config");
  CHECK(KindName(Kind::kStreamers) == "streamers");
  CHECK(KindName(Kind::kZones) == "zones");
  CHECK(KindName(Kind::kStreams) == "streams");
  CHECK(KindName(Kind::kOttGroups) == "ott_groups");
  CHECK(KindName(Kind::kVod) == "vod");
  CHECK(KindName(Kind::kMasks) == "masks");
  CHECK(KindName(Kind::kKeys) == "keys");
}

}  // namespace
}  // namespace meshwork::central
