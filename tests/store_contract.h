// The Store contract (C-6, C-10): one suite every implementation must pass. A test file
// instantiates it with MESHWORK_STORE_CONTRACT(prefix, Backend), where Backend has
// `std::unique_ptr<Store> Open()` returning the same durable store each time it is called
// (a reopen), and is default-constructible.
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "central/store/store.h"

namespace meshwork::central::contract {

inline std::optional<std::string> GetValue(Store& store, Kind kind, std::string_view key) {
  auto value = store.Get(kind, key);
  REQUIRE(value.ok());
  return *value;
}

using Rows = std::vector<std::pair<std::string, std::string>>;

inline Rows ScanRows(Store& store, Kind kind) {
  auto rows = store.Scan(kind);
  REQUIRE(rows.ok());
  return *rows;
}

// a new store starts at revision 0 and empty
template <typename Backend>
void NewStoreEmpty(Backend& backend) {
  auto store = backend.Open();
  CHECK(store->revision() == 0);
  for (Kind kind : kAllKinds) {
    INFO(std::string(KindName(kind)));
    CHECK(ScanRows(*store, kind).empty());
  }
  CHECK(GetValue(*store, Kind::kStreamers, "missing") == std::nullopt);
}

// each commit advances the revision by exactly one
template <typename Backend>
void RevisionStepsByOne(Backend& backend) {
  auto store = backend.Open();
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

// a commit applies mutations of several kinds together
template <typename Backend>
void MultiKindCommit(Backend& backend) {
  auto store = backend.Open();
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

// the same key in different kinds holds different values
template <typename Backend>
void KindsAreSeparate(Backend& backend) {
  auto store = backend.Open();
  REQUIRE(store->Commit({{Kind::kZones, "x", "zone"}, {Kind::kVod, "x", "vod"}}).ok());
  CHECK(GetValue(*store, Kind::kZones, "x") == "zone");
  CHECK(GetValue(*store, Kind::kVod, "x") == "vod");
  CHECK(GetValue(*store, Kind::kMasks, "x") == std::nullopt);
}

// scan returns one kind sorted by key
template <typename Backend>
void ScanSorted(Backend& backend) {
  auto store = backend.Open();
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

// a put replaces and a delete removes a key
template <typename Backend>
void PutReplacesDeleteRemoves(Backend& backend) {
  auto store = backend.Open();
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

// a commit may put and delete in one batch
template <typename Backend>
void PutAndDeleteInOneBatch(Backend& backend) {
  auto store = backend.Open();
  REQUIRE(store->Commit({{Kind::kKeys, "old", "1"}}).ok());
  REQUIRE(store->Commit({{Kind::kKeys, "old", std::nullopt}, {Kind::kKeys, "new", "2"}}).ok());
  CHECK(ScanRows(*store, Kind::kKeys) == Rows{{"new", "2"}});
}

// data and revision survive closing and reopening the store
template <typename Backend>
void SurvivesReopen(Backend& backend) {
  {
    auto store = backend.Open();
    REQUIRE(store->Commit({{Kind::kConfig, "trusted_proxies", "tp"}}).ok());
    REQUIRE(store->Commit({{Kind::kStreamers, "a", "1"}, {Kind::kStreamers, "b", "2"}}).ok());
    REQUIRE(store->Commit({{Kind::kStreamers, "a", std::nullopt}}).ok());
    CHECK(store->revision() == 3);
  }
  {
    auto store = backend.Open();
    CHECK(store->revision() == 3);
    CHECK(GetValue(*store, Kind::kConfig, "trusted_proxies") == "tp");
    CHECK(ScanRows(*store, Kind::kStreamers) == Rows{{"b", "2"}});
    // The revision keeps counting from where it was.
    auto rev = store->Commit({{Kind::kZones, "z", "v"}});
    REQUIRE(rev.ok());
    CHECK(*rev == 4);
  }
  auto store = backend.Open();
  CHECK(store->revision() == 4);
  CHECK(GetValue(*store, Kind::kZones, "z") == "v");
}

// load reports are kept apart from the configuration
template <typename Backend>
void ReportsApart(Backend& backend) {
  {
    auto store = backend.Open();
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
  auto store = backend.Open();
  CHECK(store->revision() == 1);
  auto reports = store->ScanReports();
  REQUIRE(reports.ok());
  CHECK(*reports == Rows{{"edge-1", "report-a2"}});
}

// A commit based on a revision the store has left is refused whole.
template <typename Backend>
void ContractCommitIf(Backend& backend) {
  auto store = backend.Open();
  REQUIRE(store->Commit({{Kind::kZones, "a", "1"}}).ok());
  auto stale = store->CommitIf({{Kind::kZones, "b", "2"}}, 0);
  CHECK(absl::IsAborted(stale.status()));
  CHECK(store->revision() == 1);
  CHECK(GetValue(*store, Kind::kZones, "b") == std::nullopt);
  auto fresh = store->CommitIf({{Kind::kZones, "b", "2"}}, 1);
  REQUIRE(fresh.ok());
  CHECK(*fresh == 2);
}

}  // namespace meshwork::central::contract

#define MESHWORK_STORE_CONTRACT_CASE(prefix, Backend, fn, name) \
  TEST_CASE(prefix name) {                                      \
    Backend backend;                                            \
    ::meshwork::central::contract::fn(backend);                 \
  }

#define MESHWORK_STORE_CONTRACT(prefix, Backend)                                                   \
  MESHWORK_STORE_CONTRACT_CASE(prefix, Backend, NewStoreEmpty,                                     \
                               "a new store starts at revision 0 and empty")                       \
  MESHWORK_STORE_CONTRACT_CASE(prefix, Backend, RevisionStepsByOne,                                \
                               "each commit advances the revision by exactly one")                 \
  MESHWORK_STORE_CONTRACT_CASE(prefix, Backend, MultiKindCommit,                                   \
                               "a commit applies mutations of several kinds together")             \
  MESHWORK_STORE_CONTRACT_CASE(prefix, Backend, KindsAreSeparate,                                  \
                               "the same key in different kinds holds different values")           \
  MESHWORK_STORE_CONTRACT_CASE(prefix, Backend, ScanSorted, "scan returns one kind sorted by key") \
  MESHWORK_STORE_CONTRACT_CASE(prefix, Backend, PutReplacesDeleteRemoves,                          \
                               "a put replaces and a delete removes a key")                        \
  MESHWORK_STORE_CONTRACT_CASE(prefix, Backend, PutAndDeleteInOneBatch,                            \
                               "a commit may put and delete in one batch")                         \
  MESHWORK_STORE_CONTRACT_CASE(prefix, Backend, SurvivesReopen,                                    \
                               "data and revision survive closing and reopening the store")        \
  MESHWORK_STORE_CONTRACT_CASE(prefix, Backend, ReportsApart,                                      \
                               "load reports are kept apart from the configuration")               \
  MESHWORK_STORE_CONTRACT_CASE(prefix, Backend, ContractCommitIf,                                  \
                               "a commit based on an old revision is refused whole")
