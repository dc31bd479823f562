#include "streamer/agent/node_config.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <string_view>

#include "common/net/ip_address.h"
#include "tests/unit/common/net/net_test_util.h"

namespace meshwork::streamer {
namespace {

using net::test::Ip;

v1::StreamerSettings Settings(const std::string& zone) {
  v1::StreamerSettings s;
  s.set_id("edge-1");
  s.set_hostname("edge1.example.net");
  s.set_role(v1::ROLE_EDGE);
  s.set_zone(zone);
  return s;
}

// A node that has applied revision 3: trusted 10.0.0.0/8, zone "spb", a session limit.
std::shared_ptr<const NodeConfig> Initial() {
  v1::ConfigUpdate full;
  full.set_revision(3);
  full.set_full(true);
  full.mutable_trusted_proxies()->add_cidrs("10.0.0.0/8");
  *full.mutable_node() = Settings("spb");
  full.mutable_node()->mutable_cdn()->mutable_playback_session_limit()->set_value(100);
  return ApplyUpdate(NodeConfig(), full);
}

TEST_CASE("C-2 a full update replaces the whole configuration") {
  auto initial = Initial();
  CHECK(initial->revision == 3);
  CHECK(initial->trusted_proxies->Contains(Ip("10.1.2.3")));
  CHECK(initial->settings.zone() == "spb");
  CHECK(initial->settings.cdn().playback_session_limit().value() == 100);

  SECTION("sections it carries are replaced") {
    v1::ConfigUpdate full;
    full.set_revision(9);
    full.set_full(true);
    full.mutable_trusted_proxies()->add_cidrs("192.0.2.0/24");
    *full.mutable_node() = Settings("msk");
    auto next = ApplyUpdate(*initial, full);
    CHECK(next->revision == 9);
    CHECK(next->trusted_proxies->Contains(Ip("192.0.2.1")));
    CHECK_FALSE(next->trusted_proxies->Contains(Ip("10.1.2.3")));
    CHECK(next->settings.zone() == "msk");
    CHECK_FALSE(next->settings.cdn().has_playback_session_limit());
  }
  SECTION("sections it lacks are reset, not kept") {
    v1::ConfigUpdate full;
    full.set_revision(9);
    full.set_full(true);
    auto next = ApplyUpdate(*initial, full);
    CHECK(next->revision == 9);
    CHECK(next->trusted_proxies->empty());
    CHECK(next->settings.zone().empty());
    CHECK(next->settings.id().empty());
  }
  // The previous snapshot is untouched.
  CHECK(initial->revision == 3);
  CHECK(initial->settings.zone() == "spb");
  CHECK(initial->trusted_proxies->Contains(Ip("10.1.2.3")));
}

TEST_CASE("T-4 a delta replaces only the sections it carries") {
  auto initial = Initial();

  SECTION("trusted proxies only") {
    v1::ConfigUpdate delta;
    delta.set_revision(5);
    delta.mutable_trusted_proxies()->add_cidrs("2a02:6b8::/32");
    auto next = ApplyUpdate(*initial, delta);
    CHECK(next->revision == 5);
    CHECK(next->trusted_proxies->Contains(Ip("2a02:6b8::1")));
    CHECK_FALSE(next->trusted_proxies->Contains(Ip("10.1.2.3")));
    CHECK(next->settings.zone() == "spb");
    CHECK(next->settings.cdn().playback_session_limit().value() == 100);
  }
  SECTION("an empty trusted-proxy section clears the list (T-3)") {
    v1::ConfigUpdate delta;
    delta.set_revision(5);
    delta.mutable_trusted_proxies();
    auto next = ApplyUpdate(*initial, delta);
    CHECK(next->trusted_proxies->empty());
    CHECK_FALSE(next->trusted_proxies->Contains(Ip("10.1.2.3")));
    CHECK(next->settings.zone() == "spb");
  }
  SECTION("node settings only") {
    v1::ConfigUpdate delta;
    delta.set_revision(6);
    *delta.mutable_node() = Settings("msk");
    auto next = ApplyUpdate(*initial, delta);
    CHECK(next->revision == 6);
    CHECK(next->settings.zone() == "msk");
    // The node section is replaced whole, not merged.
    CHECK_FALSE(next->settings.cdn().has_playback_session_limit());
    CHECK(next->trusted_proxies == initial->trusted_proxies);
  }
  SECTION("no section: only the revision moves") {
    v1::ConfigUpdate delta;
    delta.set_revision(7);
    auto next = ApplyUpdate(*initial, delta);
    CHECK(next->revision == 7);
    CHECK(next->trusted_proxies == initial->trusted_proxies);
    CHECK(next->settings.SerializeAsString() == initial->settings.SerializeAsString());
  }
  CHECK(initial->revision == 3);
}

TEST_CASE("T-4 invalid CIDRs in an update are skipped") {
  v1::ConfigUpdate full;
  full.set_revision(1);
  full.set_full(true);
  full.mutable_trusted_proxies()->add_cidrs("nonsense");
  full.mutable_trusted_proxies()->add_cidrs("10.0.0.1/8");
  full.mutable_trusted_proxies()->add_cidrs("192.0.2.0/24");
  auto next = ApplyUpdate(NodeConfig(), full);
  CHECK(next->trusted_proxies->size() == 1);
  CHECK(next->trusted_proxies->Contains(Ip("192.0.2.7")));
}

TEST_CASE("A-4 access keys from central replace the node's key set, a bad one is skipped") {
  auto initial = Initial();
  CHECK(initial->access_keys->empty());
  v1::ConfigUpdate delta;
  delta.set_revision(4);
  auto* hs = delta.mutable_access_keys()->add_keys();
  hs->set_kid("k1");
  hs->set_alg("HS256");
  hs->set_secret("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY");  // 32 bytes
  auto* bad = delta.mutable_access_keys()->add_keys();
  bad->set_kid("k2");
  bad->set_alg("none");
  auto next = ApplyUpdate(*initial, delta);
  CHECK(next->access_keys->size() == 1);
  std::string token =
      crypto::SignJwtHs256(R"({"exp": 4000000000})", "k1", "0123456789abcdef0123456789abcdef");
  CHECK(crypto::VerifyJwt(token, *next->access_keys, 1'700'000'000).ok());
  CHECK(next->trusted_proxies->Contains(Ip("10.1.2.3")));  // other sections kept
  v1::ConfigUpdate none;
  none.set_revision(5);
  none.mutable_access_keys();  // every key retired
  CHECK(ApplyUpdate(*next, none)->access_keys->empty());
}

TEST_CASE("O-6 a view member with wrongly typed fields is read as missing values, not thrown") {
  v1::ConfigUpdate update;
  update.set_revision(4);
  auto* group = update.mutable_ott_groups()->add_groups();
  group->set_group("ch1");
  group->set_view_json(
      R"({"members": [{"node": "n2", "stream": "ch1", "eligible": null, "address_public": "yes",
                       "shared_name": 1, "http_base": 5},
                      {"node": 7, "stream": "ch1", "eligible": true},
                      {"node": "n3", "stream": "ch1", "eligible": true}]})");
  std::shared_ptr<const NodeConfig> applied;
  REQUIRE_NOTHROW(applied = ApplyUpdate(*Initial(), update));
  const auto& members = applied->ott_groups.at("ch1").members;
  REQUIRE(members.size() == 2);  // the member whose node is not a string is dropped
  CHECK(members[0].node == "n2");
  CHECK_FALSE(members[0].eligible);
  CHECK_FALSE(members[0].address_public);
  CHECK_FALSE(members[0].shared_name);
  CHECK(members[0].http_base.empty());
  CHECK(members[1].node == "n3");
  CHECK(members[1].eligible);
}

}  // namespace
}  // namespace meshwork::streamer
