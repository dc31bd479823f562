#include "central/model/config_service.h"

#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "central/model/steering_config.h"
#include "central/store/store.h"
#include "common/net/ip_address.h"
#include "common/status/status_map.h"
#include "nlohmann/json.hpp"
#include "tests/unit/json_literal.h"
#include "tests/unit/temp_dir.h"

namespace meshwork::central {
namespace {

using nlohmann::json;

using testing::J;

// A store and a service loaded from it; Reopen() closes both and loads them again.
struct ConfigFixture {
  TempDir dir;
  std::unique_ptr<Store> store;
  std::unique_ptr<ConfigService> service;

  ConfigFixture() { Reopen(); }
  void Reopen() {
    service.reset();
    store.reset();
    auto opened = OpenRocksDbStore(dir.path());
    INFO(opened.status().ToString());
    REQUIRE(opened.ok());
    store = std::move(*opened);
    auto loaded = ConfigService::Load(store.get());
    INFO(loaded.status().ToString());
    REQUIRE(loaded.ok());
    service = std::move(*loaded);
  }
  ~ConfigFixture() {
    service.reset();
    store.reset();
  }
};

net::IpAddress Ip(std::string_view text) {
  auto ip = net::IpAddress::Parse(text);
  REQUIRE(ip.ok());
  return *ip;
}

constexpr std::string_view kEdge = R"({"hostname": "edge1.example.net", "role": "edge"})";

TEST_CASE("Z-1 a zone a stream is placed in is not deleted, and the 409 names the stream") {
  ConfigFixture f;
  REQUIRE(
      f.service
          ->PutObject(ObjectKind::kZone, "z", nlohmann::json{{"routes", nlohmann::json::array()}})
          .ok());
  REQUIRE(f.service
              ->PutObject(ObjectKind::kStream, "s",
                          nlohmann::json{{"placement", {{"count", 1}, {"zone", "z"}}}})
              .ok());
  absl::Status refused = f.service->DeleteObject(ObjectKind::kZone, "z");
  CHECK(absl::IsAlreadyExists(refused));  // 409
  CHECK_THAT(std::string(refused.message()), Catch::Contains("stream(s) s"));
  CHECK(f.service->Current()->Objects(ObjectKind::kZone).contains("z"));
  // A later write to the stream still validates.
  CHECK(
      f.service
          ->MutateObject(ObjectKind::kStream, "s", [](nlohmann::json&) { return absl::OkStatus(); })
          .ok());
  // Placed elsewhere, the zone can go.
  REQUIRE(
      f.service->PutObject(ObjectKind::kStream, "s", nlohmann::json{{"placement", {{"count", 1}}}})
          .ok());
  CHECK(f.service->DeleteObject(ObjectKind::kZone, "z").ok());
}

TEST_CASE(
    "C-10 a section another central changed, a deletion included, is dated past what "
    "nodes were sent") {
  ClusterConfig before;
  before.revision = 40;
  before.access_keys_revision = 40;  // k1 (revision 12) and k2 (40), as nodes were sent
  before.access_keys["k1"] = ObjectRecord{nlohmann::json::object(), 12};
  before.access_keys["k2"] = ObjectRecord{nlohmann::json::object(), 40};
  before.streams_revision = 30;
  before.streams["s"] = ObjectRecord{nlohmann::json::object(), 30};
  // Read back after another central deleted k2 (revision 41): the surviving key is older.
  ClusterConfig after;
  after.revision = 41;
  after.access_keys["k1"] = ObjectRecord{nlohmann::json::object(), 12};
  after.access_keys_revision = 12;
  after.streams["s"] = ObjectRecord{nlohmann::json::object(), 30};
  after.streams_revision = 30;
  config_internal::KeepSectionRevisions(before, after);
  CHECK(after.access_keys_revision == 41);  // changed: past the 40 nodes have
  CHECK(after.streams_revision == 30);      // unchanged
}

TEST_CASE(
    "C-10 a central reading the store afresh dates a section by its last change, a deletion "
    "included") {
  ConfigFixture f;
  const nlohmann::json zone{{"routes", nlohmann::json::array()}};
  REQUIRE(f.service->PutObject(ObjectKind::kZone, "a", zone).ok());  // revision 1
  REQUIRE(f.service->PutObject(ObjectKind::kZone, "b", zone).ok());  // 2
  REQUIRE(
      f.service->PutObject(ObjectKind::kStream, "s", nlohmann::json{{"placement", {{"count", 1}}}})
          .ok());                                                 // 3
  REQUIRE(f.service->DeleteObject(ObjectKind::kZone, "b").ok());  // 4
  CHECK(f.service->Current()->zones_revision == 4);
  // Another central's view: it never saw the deletion, only what the store holds now. The
  // surviving zone is from revision 1; a node that holds zones at 2 must still be sent them.
  f.Reopen();
  auto config = f.service->Current();
  CHECK(config->revision == 4);
  CHECK(config->zones_revision == 4);
  CHECK(config->streams_revision == 3);
  CHECK(config->Objects(ObjectKind::kZone).size() == 1);
}

TEST_CASE("T-3 the default trusted-proxy list is empty") {
  ConfigFixture f;
  auto config = f.service->Current();
  CHECK(config->revision == 0);
  CHECK(config->trusted_proxies.empty());
  CHECK(config->trusted_set->empty());
  CHECK(config->streamers.empty());
  CHECK(ConfigService::ConfigJson(*config) ==
        J(R"({"trusted_proxies": [], "steering": null, "revision": 0})"));
}

TEST_CASE("T-1 a PATCH of trusted_proxies is stored, canonical and applied at once") {
  ConfigFixture f;
  auto next = f.service->PatchConfig(
      J(R"({"trusted_proxies": ["10.0.0.0/8", "2A02:6B8::/32", "192.0.2.1/32"]})"));
  INFO(next.status().ToString());
  REQUIRE(next.ok());
  CHECK((*next)->revision == 1);
  CHECK((*next)->trusted_proxies_revision == 1);
  CHECK((*next)->trusted_proxies ==
        std::vector<std::string>{"10.0.0.0/8", "2a02:6b8::/32", "192.0.2.1/32"});
  CHECK(f.service->Current() == *next);
  CHECK(f.store->revision() == 1);
  const auto& set = *f.service->Current()->trusted_set;
  CHECK(set.size() == 3);
  CHECK(set.Contains(Ip("10.1.2.3")));
  CHECK(set.Contains(Ip("2a02:6b8::1")));
  CHECK(set.Contains(Ip("192.0.2.1")));
  CHECK_FALSE(set.Contains(Ip("192.0.2.2")));
  CHECK(ConfigService::ConfigJson(**next) ==
        J(R"({"trusted_proxies": ["10.0.0.0/8", "2a02:6b8::/32", "192.0.2.1/32"],
              "steering": null, "revision": 1})"));
}

TEST_CASE("CS-1 a cluster-wide steering default in /config: stored, read back, cleared") {
  ConfigFixture f;
  auto next = f.service->PatchConfig(J(R"({"steering": {"enabled": true, "ttl_s": 6}})"));
  INFO(next.status().ToString());
  REQUIRE(next.ok());
  CHECK((*next)->steering == J(R"({"enabled": true, "ttl_s": 6, "rebalance_percent": 25})"));
  CHECK(ConfigService::ConfigJson(**next)["steering"]["ttl_s"] == 6);
  // A stream without its own member takes it; one with its own keeps its own.
  CHECK(SteeringOf(J("{}"), (*next)->steering).enabled);
  CHECK(SteeringOf(J("{}"), (*next)->steering).ttl_s == 6);
  CHECK_FALSE(SteeringOf(J(R"({"steering": {"enabled": false, "ttl_s": 10,
                                            "rebalance_percent": 25}})"),
                         (*next)->steering)
                  .enabled);
  // Read back from the store after a restart.
  const nlohmann::json stored = (*next)->steering;
  f.Reopen();
  CHECK(f.service->Current()->steering == stored);
  next = f.service->Current();
  // Refused with the field named, nothing written; null clears it.
  auto bad = f.service->PatchConfig(J(R"({"steering": {"ttl_s": 0}})"));
  REQUIRE_FALSE(bad.ok());
  CHECK(FieldOf(bad.status()) == "steering.ttl_s");
  CHECK(f.service->Current() == *next);
  auto cleared = f.service->PatchConfig(J(R"({"steering": null})"));
  REQUIRE(cleared.ok());
  CHECK((*cleared)->steering.is_null());
  CHECK_FALSE(SteeringOf(J("{}"), (*cleared)->steering).enabled);
}

TEST_CASE("T-5 an invalid CIDR in a PATCH is rejected naming the element and nothing changes") {
  ConfigFixture f;
  REQUIRE(f.service->PatchConfig(J(R"({"trusted_proxies": ["10.0.0.0/8"]})")).ok());
  auto before = f.service->Current();
  REQUIRE(f.store->revision() == 1);

  for (std::string_view bad : {R"({"trusted_proxies": ["192.168.0.0/16", "10.10.1.1/16"]})",
                               R"({"trusted_proxies": ["192.168.0.0/16", "foo/8"]})",
                               R"({"trusted_proxies": ["192.168.0.0/16", "10.0.0.0"]})",
                               R"({"trusted_proxies": ["192.168.0.0/16", "10.0.0.0/33"]})",
                               R"({"trusted_proxies": ["192.168.0.0/16", 7]})"}) {
    INFO(std::string(bad));
    auto result = f.service->PatchConfig(J(bad));
    REQUIRE_FALSE(result.ok());
    CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(FieldOf(result.status()) == "trusted_proxies[1]");
    CHECK(ErrorBody(result.status())["error"]["field"] == "trusted_proxies[1]");
    CHECK(f.service->Current() == before);
    CHECK(f.store->revision() == 1);
  }
  auto not_list = f.service->PatchConfig(J(R"({"trusted_proxies": "10.0.0.0/8"})"));
  REQUIRE_FALSE(not_list.ok());
  CHECK(FieldOf(not_list.status()) == "trusted_proxies");
  auto unknown = f.service->PatchConfig(J(R"({"trusted_proxie": []})"));
  REQUIRE_FALSE(unknown.ok());
  CHECK(FieldOf(unknown.status()) == "trusted_proxie");
  auto not_object = f.service->PatchConfig(J("[]"));
  REQUIRE_FALSE(not_object.ok());
  CHECK(FieldOf(not_object.status()) == "body");

  CHECK(f.service->Current() == before);
  CHECK(f.store->revision() == 1);
  // Nothing of the rejected writes reached the disk either.
  f.Reopen();
  CHECK(f.service->Current()->trusted_proxies == std::vector<std::string>{"10.0.0.0/8"});
  CHECK(f.service->Current()->revision == 1);
}

TEST_CASE("T-3 null and [] both give an empty trusted-proxy list") {
  ConfigFixture f;
  for (std::string_view empty : {R"({"trusted_proxies": null})", R"({"trusted_proxies": []})"}) {
    INFO(std::string(empty));
    REQUIRE(f.service->PatchConfig(J(R"({"trusted_proxies": ["10.0.0.0/8"]})")).ok());
    REQUIRE_FALSE(f.service->Current()->trusted_proxies.empty());
    uint64_t before = f.store->revision();
    auto result = f.service->PatchConfig(J(empty));
    REQUIRE(result.ok());
    CHECK((*result)->trusted_proxies.empty());
    CHECK((*result)->trusted_set->empty());
    CHECK_FALSE((*result)->trusted_set->Contains(Ip("10.0.0.1")));
    CHECK((*result)->revision == before + 1);
    CHECK((*result)->trusted_proxies_revision == before + 1);
    CHECK(ConfigService::ConfigJson(**result)["trusted_proxies"] == json::array());
  }
}

TEST_CASE("T-7 a PATCH without trusted_proxies leaves them unchanged and creates no revision") {
  ConfigFixture f;
  REQUIRE(f.service->PatchConfig(J(R"({"trusted_proxies": ["10.0.0.0/8"]})")).ok());
  auto before = f.service->Current();
  int notified = 0;
  f.service->Subscribe([&](std::shared_ptr<const ClusterConfig>) { ++notified; });

  auto result = f.service->PatchConfig(J("{}"));
  REQUIRE(result.ok());
  CHECK(*result == before);
  // The read-only revision member is accepted and ignored.
  result = f.service->PatchConfig(J(R"({"revision": 99})"));
  REQUIRE(result.ok());
  CHECK(*result == before);

  CHECK(f.service->Current() == before);
  CHECK(f.service->Current()->trusted_proxies == std::vector<std::string>{"10.0.0.0/8"});
  CHECK(f.store->revision() == 1);
  CHECK(notified == 0);
}

TEST_CASE("C-6 every acknowledged write is visible after closing and reloading") {
  ConfigFixture f;
  REQUIRE(f.service->PatchConfig(J(R"({"trusted_proxies": ["2A02:6B8::/32"]})")).ok());
  REQUIRE(f.service->PutStreamer("edge-1", J(kEdge)).ok());
  REQUIRE(f.service
              ->PutStreamer("origin-1", J(R"({"hostname": "o.example.net", "role": "origin",
                                              "cdn": {"playback_session_limit": 0}})"))
              .ok());
  REQUIRE(f.service->PatchStreamer("edge-1", J(R"({"zone": "spb"})")).ok());
  REQUIRE(f.service->PutStreamer("gone", J(kEdge)).ok());
  REQUIRE(f.service->DeleteStreamer("gone").ok());
  auto before = f.service->Current();
  CHECK(before->revision == 6);

  f.Reopen();
  auto after = f.service->Current();
  CHECK(after->revision == 6);
  CHECK(after->trusted_proxies == std::vector<std::string>{"2a02:6b8::/32"});
  CHECK(after->trusted_proxies_revision == 1);
  CHECK(after->trusted_set->Contains(Ip("2a02:6b8::5")));
  REQUIRE(after->streamers.size() == 2);
  CHECK_FALSE(after->streamers.contains("gone"));
  const auto& edge = after->streamers.at("edge-1");
  CHECK(edge.object == before->streamers.at("edge-1").object);
  CHECK(edge.object["zone"] == "spb");
  CHECK(edge.revision == 4);
  CHECK(edge.settings.zone() == "spb");
  const auto& origin = after->streamers.at("origin-1");
  CHECK(origin.object == before->streamers.at("origin-1").object);
  CHECK(origin.revision == 3);
  CHECK(origin.settings.cdn().has_playback_session_limit());
  CHECK(origin.settings.cdn().playback_session_limit().value() == 0);

  // Writes continue from the stored revision.
  auto next = f.service->PatchConfig(J(R"({"trusted_proxies": []})"));
  REQUIRE(next.ok());
  CHECK((*next)->revision == 7);
}

TEST_CASE("C-10 R-3 a stored row that fails its checks is left out, never the end of central") {
  ConfigFixture f;
  REQUIRE(
      f.service->PutObject(ObjectKind::kZone, "good", J(R"({"routes": ["10.1.0.0/16"]})")).ok());
  // Rows as another version of central, or a hand with etcdctl, might leave them.
  REQUIRE(f.store
              ->Commit(
                  {{Kind::kZones, "bad", R"({"revision": 9, "value": {"routes": ["not a cidr"]}})"},
                   {Kind::kStreams, "odd",
                    R"({"revision": 9, "value": {"placement": {"streamers": [7]}}})"},
                   // A member a newer central knows (mid-upgrade): kept as stored.
                   {Kind::kStreams, "newer",
                    R"({"revision": 9, "value": {"placement": {"streamers": ["e1"]},
                        "from_the_future": 1}})"}})
              .ok());
  f.Reopen();
  auto config = f.service->Current();
  CHECK(config->zones.contains("good"));
  CHECK_FALSE(config->zones.contains("bad"));
  CHECK_FALSE(config->streams.contains("odd"));
  CHECK(config->streams.contains("newer"));
  // The API can still replace it.
  CHECK(f.service->PutObject(ObjectKind::kZone, "bad", J(R"({"routes": ["10.2.0.0/16"]})")).ok());
  CHECK(f.service->Current()->zones.contains("bad"));

  // An envelope whose revision is not a number: an error naming the row, not an exception.
  REQUIRE(f.store->Commit({{Kind::kZones, "worse", R"({"revision": "x", "value": {}})"}}).ok());
  f.service.reset();
  auto loaded = ConfigService::Load(f.store.get());
  CHECK(loaded.status().code() == absl::StatusCode::kDataLoss);
  CHECK(loaded.status().message().find("zone worse") != std::string_view::npos);
}

TEST_CASE("C-7 C-10 a subscriber from now gets the current snapshot, then every change") {
  ConfigFixture f;
  REQUIRE(f.service->PutStreamer("edge-1", J(kEdge)).ok());
  std::vector<uint64_t> seen;
  f.service->Subscribe([&](std::shared_ptr<const ClusterConfig> c) { seen.push_back(c->revision); },
                       ConfigService::From::kNow);
  CHECK(seen == std::vector<uint64_t>{1});
  REQUIRE(f.service->PutStreamer("edge-2", J(kEdge)).ok());
  CHECK(seen == std::vector<uint64_t>{1, 2});
}

TEST_CASE("C-7 subscribers receive each new snapshot") {
  ConfigFixture f;
  std::vector<std::shared_ptr<const ClusterConfig>> seen;
  f.service->Subscribe([&](std::shared_ptr<const ClusterConfig> c) { seen.push_back(c); });
  int second = 0;
  f.service->Subscribe([&](std::shared_ptr<const ClusterConfig>) { ++second; });

  REQUIRE(f.service->PatchConfig(J(R"({"trusted_proxies": ["10.0.0.0/8"]})")).ok());
  REQUIRE(seen.size() == 1);
  CHECK(seen[0]->revision == 1);
  CHECK(seen[0] == f.service->Current());

  REQUIRE(f.service->PutStreamer("edge-1", J(kEdge)).ok());
  REQUIRE(seen.size() == 2);
  CHECK(seen[1]->revision == 2);
  CHECK(seen[1]->streamers.contains("edge-1"));
  // The earlier snapshot is immutable: it does not see the later change.
  CHECK_FALSE(seen[0]->streamers.contains("edge-1"));

  REQUIRE(f.service->PatchStreamer("edge-1", J(R"({"role": "origin"})")).ok());
  REQUIRE(f.service->DeleteStreamer("edge-1").ok());
  REQUIRE(seen.size() == 4);
  CHECK(seen[2]->streamers.at("edge-1").object["role"] == "origin");
  CHECK(seen[3]->revision == 4);
  CHECK(seen[3]->streamers.empty());
  CHECK(second == 4);

  // Rejected writes publish nothing.
  CHECK_FALSE(f.service->PatchConfig(J(R"({"trusted_proxies": ["x"]})")).ok());
  CHECK_FALSE(f.service->PutStreamer("edge-2", J(R"({"role": "edge"})")).ok());
  CHECK(seen.size() == 4);
}

TEST_CASE("M-1 PUT of a streamer reports whether it was created") {
  ConfigFixture f;
  auto first = f.service->PutStreamer("edge-1", J(kEdge));
  REQUIRE(first.ok());
  CHECK(first->created);
  CHECK(first->object["hostname"] == "edge1.example.net");
  CHECK(first->object["cdn"]["playback_session_limit"].is_null());

  auto second =
      f.service->PutStreamer("edge-1", J(R"({"hostname": "edge1.example.net", "role": "origin"})"));
  REQUIRE(second.ok());
  CHECK_FALSE(second->created);
  CHECK(second->object["role"] == "origin");
  const auto& record = f.service->Current()->streamers.at("edge-1");
  CHECK(record.object == second->object);
  CHECK(record.settings.role() == v1::ROLE_ORIGIN);
  CHECK(record.revision == 2);
  CHECK(f.service->Current()->revision == 2);
}

TEST_CASE("M-1 an invalid streamer PUT changes nothing") {
  ConfigFixture f;
  REQUIRE(f.service->PutStreamer("edge-1", J(kEdge)).ok());
  auto before = f.service->Current();
  auto result = f.service->PutStreamer(
      "edge-1", J(R"({"hostname": "h", "role": "edge", "cdn": {"foo": 1}})"));
  REQUIRE_FALSE(result.ok());
  CHECK(FieldOf(result.status()) == "cdn.foo");
  CHECK(f.service->Current() == before);
  CHECK(f.store->revision() == 1);
}

TEST_CASE("T-7 a streamer PATCH merges, and an unchanged result creates no revision") {
  ConfigFixture f;
  REQUIRE(f.service
              ->PutStreamer("edge-1", J(R"({"hostname": "h", "role": "edge",
                                            "cdn": {"playback_session_limit": 10}})"))
              .ok());
  auto patched =
      f.service->PatchStreamer("edge-1", J(R"({"cdn": {"playback_session_limit": null}})"));
  REQUIRE(patched.ok());
  CHECK((*patched)["cdn"]["playback_session_limit"].is_null());
  CHECK((*patched)["hostname"] == "h");
  CHECK(f.store->revision() == 2);
  CHECK_FALSE(
      f.service->Current()->streamers.at("edge-1").settings.cdn().has_playback_session_limit());

  auto same = f.service->PatchStreamer("edge-1", J(R"({"role": "edge"})"));
  REQUIRE(same.ok());
  CHECK(f.store->revision() == 2);
  CHECK(f.service->Current()->revision == 2);

  auto bad = f.service->PatchStreamer("edge-1", J(R"({"bogus": null})"));
  REQUIRE_FALSE(bad.ok());
  CHECK(FieldOf(bad.status()) == "bogus");
  CHECK(f.store->revision() == 2);
}

TEST_CASE("M-1 PATCH and DELETE of a missing streamer are NotFound") {
  ConfigFixture f;
  auto patched = f.service->PatchStreamer("nope", J(R"({"zone": "a"})"));
  REQUIRE_FALSE(patched.ok());
  CHECK(patched.status().code() == absl::StatusCode::kNotFound);
  auto deleted = f.service->DeleteStreamer("nope");
  CHECK(deleted.code() == absl::StatusCode::kNotFound);
  CHECK(f.store->revision() == 0);

  REQUIRE(f.service->PutStreamer("edge-1", J(kEdge)).ok());
  REQUIRE(f.service->DeleteStreamer("edge-1").ok());
  CHECK(f.service->DeleteStreamer("edge-1").code() == absl::StatusCode::kNotFound);
  CHECK(f.store->revision() == 2);
}

TEST_CASE("C-1 EnsureStreamer creates a registering node once and never overwrites settings") {
  ConfigFixture f;
  auto created = f.service->EnsureStreamer("edge-7", "edge7.example.net", v1::ROLE_EDGE);
  REQUIRE(created.ok());
  CHECK(*created);
  const auto& record = f.service->Current()->streamers.at("edge-7");
  CHECK(record.object["hostname"] == "edge7.example.net");
  CHECK(record.object["role"] == "edge");
  CHECK(record.object["zone"].is_null());
  CHECK(f.store->revision() == 1);

  // The operator configures it.
  REQUIRE(f.service
              ->PatchStreamer("edge-7", J(R"({"zone": "spb", "hostname": "cdn7.example.net",
                                              "cdn": {"playback_session_limit": 5}})"))
              .ok());
  CHECK(f.store->revision() == 2);

  // A later registration with other details changes nothing.
  auto again = f.service->EnsureStreamer("edge-7", "other.example.net", v1::ROLE_ORIGIN);
  REQUIRE(again.ok());
  CHECK_FALSE(*again);
  CHECK(f.store->revision() == 2);
  const auto& kept = f.service->Current()->streamers.at("edge-7");
  CHECK(kept.object["hostname"] == "cdn7.example.net");
  CHECK(kept.object["role"] == "edge");
  CHECK(kept.object["zone"] == "spb");
  CHECK(kept.object["cdn"]["playback_session_limit"] == 5);

  // Also after a restart.
  f.Reopen();
  auto after_restart = f.service->EnsureStreamer("edge-7", "other.example.net", v1::ROLE_ORIGIN);
  REQUIRE(after_restart.ok());
  CHECK_FALSE(*after_restart);
  CHECK(f.service->Current()->streamers.at("edge-7").object["hostname"] == "cdn7.example.net");
  CHECK(f.store->revision() == 2);
}

TEST_CASE("C-1 EnsureStreamer rejects an invalid registration and creates nothing") {
  ConfigFixture f;
  auto bad_host = f.service->EnsureStreamer("edge-1", "bad host", v1::ROLE_EDGE);
  CHECK_FALSE(bad_host.ok());
  auto bad_role = f.service->EnsureStreamer("edge-1", "h", v1::ROLE_UNSPECIFIED);
  CHECK_FALSE(bad_role.ok());
  CHECK(f.service->Current()->streamers.empty());
  CHECK(f.store->revision() == 0);
}

}  // namespace
}  // namespace meshwork::central
