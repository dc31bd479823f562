#include "central/cluster/config_push.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "central/model/config_service.h"

namespace meshwork::central {
namespace {

std::vector<std::string> Cidrs(const v1::ConfigUpdate& update) {
  return {update.trusted_proxies().cidrs().begin(), update.trusted_proxies().cidrs().end()};
}

StreamerRecord Record(const std::string& id, uint64_t revision, const std::string& zone) {
  StreamerRecord record;
  record.object = {{"id", id}};
  record.settings.set_id(id);
  record.settings.set_hostname(id + ".example.net");
  record.settings.set_role(v1::ROLE_EDGE);
  record.settings.set_zone(zone);
  record.revision = revision;
  return record;
}

// Trusted proxies changed at revision 5, edge-1's settings at 3, edge-2's at 6; now at 6.
ClusterConfig Sample() {
  ClusterConfig config;
  config.revision = 6;
  config.trusted_proxies = {"10.0.0.0/8", "2a02:6b8::/32"};
  config.trusted_proxies_revision = 5;
  config.streamers["edge-1"] = Record("edge-1", 3, "spb");
  config.streamers["edge-2"] = Record("edge-2", 6, "msk");
  return config;
}

TEST_CASE("C-3 since_revision 0 gives a full update with everything") {
  ClusterConfig config = Sample();
  auto update = BuildConfigUpdate(config, "edge-1", 0);
  CHECK(update.full());
  CHECK(update.revision() == 6);
  REQUIRE(update.has_trusted_proxies());
  CHECK(Cidrs(update) == std::vector<std::string>{"10.0.0.0/8", "2a02:6b8::/32"});
  REQUIRE(update.has_node());
  CHECK(update.node().id() == "edge-1");
  CHECK(update.node().zone() == "spb");
  CHECK_FALSE(IsEmptyUpdate(update, 0));
}

TEST_CASE("C-3 a full update carries an empty trusted-proxy list explicitly") {
  ClusterConfig config;
  config.revision = 2;
  config.streamers["edge-1"] = Record("edge-1", 2, "");
  auto update = BuildConfigUpdate(config, "edge-1", 0);
  CHECK(update.full());
  CHECK(update.has_trusted_proxies());
  CHECK(update.trusted_proxies().cidrs_size() == 0);
}

TEST_CASE("C-3 a since_revision ahead of the configuration gives a full update") {
  ClusterConfig config = Sample();
  auto update = BuildConfigUpdate(config, "edge-1", 7);
  CHECK(update.full());
  CHECK(update.revision() == 6);
  CHECK(update.has_trusted_proxies());
  CHECK(Cidrs(update).size() == 2);
  REQUIRE(update.has_node());
  CHECK(update.node().id() == "edge-1");
  CHECK_FALSE(IsEmptyUpdate(update, 7));
}

TEST_CASE("C-3 a delta carries only the sections changed after since_revision") {
  ClusterConfig config = Sample();

  SECTION("since 2: trusted proxies (rev 5) and node settings (rev 3)") {
    auto update = BuildConfigUpdate(config, "edge-1", 2);
    CHECK_FALSE(update.full());
    CHECK(update.revision() == 6);
    CHECK(update.has_trusted_proxies());
    CHECK(Cidrs(update) == std::vector<std::string>{"10.0.0.0/8", "2a02:6b8::/32"});
    CHECK(update.has_node());
    CHECK_FALSE(IsEmptyUpdate(update, 2));
  }
  SECTION("since 3: only trusted proxies") {
    auto update = BuildConfigUpdate(config, "edge-1", 3);
    CHECK_FALSE(update.full());
    CHECK(update.has_trusted_proxies());
    CHECK_FALSE(update.has_node());
  }
  SECTION("since 4: only trusted proxies") {
    auto update = BuildConfigUpdate(config, "edge-1", 4);
    CHECK_FALSE(update.full());
    CHECK(update.revision() == 6);
    CHECK(update.has_trusted_proxies());
    CHECK(Cidrs(update).size() == 2);
    CHECK_FALSE(update.has_node());
    CHECK_FALSE(update.has_streams());
    CHECK_FALSE(IsEmptyUpdate(update, 4));
  }
  SECTION("since 5: nothing of edge-1 changed, only the revision moved") {
    auto update = BuildConfigUpdate(config, "edge-1", 5);
    CHECK_FALSE(update.full());
    CHECK_FALSE(update.has_trusted_proxies());
    CHECK_FALSE(update.has_node());
    CHECK(update.revision() == 6);
    // Not empty: the node still learns the new revision.
    CHECK_FALSE(IsEmptyUpdate(update, 5));
  }
  SECTION("since 5: edge-2's settings changed at 6") {
    auto update = BuildConfigUpdate(config, "edge-2", 5);
    CHECK_FALSE(update.full());
    CHECK_FALSE(update.has_trusted_proxies());
    REQUIRE(update.has_node());
    CHECK(update.node().id() == "edge-2");
    CHECK(update.node().zone() == "msk");
  }
  SECTION("since 6 (current): nothing to send") {
    auto update = BuildConfigUpdate(config, "edge-1", 6);
    CHECK_FALSE(update.full());
    CHECK_FALSE(update.has_trusted_proxies());
    CHECK_FALSE(update.has_node());
    CHECK(IsEmptyUpdate(update, 6));
  }
}

TEST_CASE("C-2 S-19 a node whose own record changed (its role) is sent the streams again") {
  ClusterConfig config = Sample();
  config.streams["ch1"] = ObjectRecord{{{"placement", {{"streamers", {"ingest-9"}}}}}, 2};
  config.streams_revision = 2;
  // edge-2 became an edge at revision 6 (it was an ingest node holding nothing).
  auto update = BuildConfigUpdate(config, "edge-2", 5);
  REQUIRE(update.has_node());
  REQUIRE(update.has_streams());
  REQUIRE(update.streams().streams_size() == 1);
  CHECK(update.streams().streams(0).name() == "ch1");
  CHECK(update.streams().streams(0).relay());
  // A node whose record did not change gets no stream section.
  CHECK_FALSE(BuildConfigUpdate(config, "edge-1", 5).has_streams());
}

TEST_CASE("C-3 with trusted proxies at 5 and node settings at 3, since=5 is an empty update") {
  ClusterConfig config;
  config.revision = 5;
  config.trusted_proxies = {"192.0.2.0/24"};
  config.trusted_proxies_revision = 5;
  config.streamers["edge-1"] = Record("edge-1", 3, "spb");

  auto since4 = BuildConfigUpdate(config, "edge-1", 4);
  CHECK_FALSE(since4.full());
  CHECK(since4.has_trusted_proxies());
  CHECK(Cidrs(since4) == std::vector<std::string>{"192.0.2.0/24"});
  CHECK_FALSE(since4.has_node());
  CHECK_FALSE(IsEmptyUpdate(since4, 4));

  auto since5 = BuildConfigUpdate(config, "edge-1", 5);
  CHECK(since5.revision() == 5);
  CHECK(IsEmptyUpdate(since5, 5));
}

TEST_CASE("T-3 an emptied trusted-proxy list is still present in a delta") {
  ClusterConfig config;
  config.revision = 8;
  config.trusted_proxies = {};
  config.trusted_proxies_revision = 8;
  config.streamers["edge-1"] = Record("edge-1", 2, "");
  auto update = BuildConfigUpdate(config, "edge-1", 7);
  CHECK_FALSE(update.full());
  CHECK(update.has_trusted_proxies());
  CHECK(update.trusted_proxies().cidrs_size() == 0);
  CHECK_FALSE(update.has_node());
  CHECK_FALSE(IsEmptyUpdate(update, 7));
}

TEST_CASE("C-3 an unknown node gets no node section") {
  ClusterConfig config = Sample();
  auto full = BuildConfigUpdate(config, "stranger", 0);
  CHECK(full.full());
  CHECK(full.has_trusted_proxies());
  CHECK_FALSE(full.has_node());
  auto delta = BuildConfigUpdate(config, "stranger", 5);
  CHECK_FALSE(delta.has_node());
}

TEST_CASE("C-3 IsEmptyUpdate is false for a full update or a different revision") {
  v1::ConfigUpdate update;
  update.set_revision(4);
  CHECK(IsEmptyUpdate(update, 4));
  CHECK_FALSE(IsEmptyUpdate(update, 3));
  update.set_full(true);
  CHECK_FALSE(IsEmptyUpdate(update, 4));
  update.set_full(false);
  update.mutable_streams();
  CHECK_FALSE(IsEmptyUpdate(update, 4));
  update.clear_streams();
  update.mutable_masks();
  CHECK_FALSE(IsEmptyUpdate(update, 4));
}

TEST_CASE(
    "S-19 S-23 an edge gets every stream, those placed elsewhere marked relay, an origin "
    "gets the streams that publish to it, other nodes only their own") {
  ClusterConfig config = Sample();
  config.streamers["ingest-1"] = Record("ingest-1", 2, "dc");
  config.streamers["ingest-1"].settings.set_role(v1::ROLE_INGEST);
  config.streamers["origin-1"] = Record("origin-1", 2, "dc");
  config.streamers["origin-1"].settings.set_role(v1::ROLE_ORIGIN);
  config.streams["ch1"].object = {
      {"name", "ch1"},
      {"placement", {{"streamers", {"ingest-1"}}}},
      {"publish", {{{"to", "origin-1"}, {"pipeline", "eu-a"}, {"from", nullptr}}}}};
  config.streams["ch2"].object = {{"name", "ch2"}, {"placement", {{"streamers", {"edge-2"}}}}};
  config.streams_revision = 6;
  auto names = [&](const std::string& node) {
    std::map<std::string, std::pair<bool, bool>> out;  // name → (relay, publish_target)
    auto update = BuildConfigUpdate(config, node, 0);
    for (const auto& s : update.streams().streams()) {
      out[s.name()] = {s.relay(), s.publish_target()};
    }
    return out;
  };
  using Flags = std::map<std::string, std::pair<bool, bool>>;
  CHECK(names("edge-1") == Flags{{"ch1", {true, false}}, {"ch2", {true, false}}});
  CHECK(names("edge-2") == Flags{{"ch1", {true, false}}, {"ch2", {false, false}}});
  CHECK(names("ingest-1") == Flags{{"ch1", {false, false}}});
  CHECK(names("origin-1") == Flags{{"ch1", {false, true}}});
}

}  // namespace
}  // namespace meshwork::central
