// OTT groups on central (O-1, O-8…O-15, O-19): the pure evaluator, its API shapes and the
// views pushed to member nodes.
#include "central/ott/groups.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>
#include <limits>
#include <string>

#include "tests/unit/central/ott/ott_fixture.h"

namespace meshwork::central::ott {
namespace {

using namespace testing;
using nlohmann::json;

bool HasProblem(const GroupStatus& group, const std::string& text) {
  return std::find(group.problems.begin(), group.problems.end(), text) != group.problems.end();
}

TEST_CASE("O-15 three healthy members are all eligible and the group has backup") {
  auto snapshot = EvaluateGroups(HealthyConfig(), HealthyNodes(), kNow);
  REQUIRE(snapshot.groups.size() == 1);
  const GroupStatus& group = snapshot.groups.at("ch1");
  INFO(GroupJson(group).dump(2));
  CHECK(group.state == "with_backup");
  CHECK(group.problems.empty());
  REQUIRE(group.members.size() == 3);
  CHECK(group.members[0].node == "ingest-1");
  CHECK(group.members[1].node == "ingest-2");
  CHECK(group.members[1].stream == "ch1-spare");
  for (const auto& m : group.members) {
    CHECK(m.eligible);
    CHECK(m.eligible_backups == 2);
    CHECK(m.same_timeline);
    CHECK(m.codecs_match);
    CHECK(m.key_held);
    CHECK_FALSE(m.overloaded);
    CHECK(m.version_ok);
    CHECK(m.clock_skew_s == 0.0);
    CHECK(m.live_window_age_s == 1.5);
    CHECK(m.address_public);
    CHECK_FALSE(m.shared_name);
    CHECK(m.http_base == "http://" + m.node + ".example.net:8080");
    CHECK(m.https_base == "https://" + m.node + ".example.net:8443");
    CHECK(m.load == 7);
  }
  CHECK(snapshot.key_id == "k2");
}

TEST_CASE("O-4 O-15 every eligibility column turns a member ineligible") {
  struct Row {
    const char* name;
    std::function<void(ClusterConfig&, NodeStates&, GroupOptions&)> change;
    std::function<bool(const MemberStatus&)> column_ok;  // the column that must turn false
  };
  auto stream_of = [](NodeStates& nodes) -> v1::StreamReport& {
    return *nodes["ingest-2"].report.mutable_streams(0);
  };
  const Row rows[] = {
      {"not offered as backup",
       [](ClusterConfig& c, NodeStates&, GroupOptions&) {
         PutStream(c, "ch1-spare", {"ingest-2"}, "not_offered");
       },
       [](const MemberStatus& m) { return m.backup == "can_replace"; }},
      {"live window 601 s old",
       [&](ClusterConfig&, NodeStates& n, GroupOptions&) {
         stream_of(n).set_live_window_age_s(601);
       },
       [](const MemberStatus& m) { return m.window_ok; }},
      {"stream not working",
       [&](ClusterConfig&, NodeStates& n, GroupOptions&) { stream_of(n).set_working(false); },
       [](const MemberStatus& m) { return m.window_ok; }},
      {"timeline differs",
       [&](ClusterConfig&, NodeStates& n, GroupOptions&) {
         // Half a segment and one tick off the common timeline.
         stream_of(n).set_timeline_fingerprint(
             "1000:" + std::to_string(1000 * kSegmentMs * 90 + kSegmentMs * 45 + 1) + ":180000");
       },
       [](const MemberStatus& m) { return m.same_timeline; }},
      {"codecs differ",
       [&](ClusterConfig&, NodeStates& n, GroupOptions&) {
         stream_of(n).mutable_renditions(0)->set_codecs("hvc1.1.6.L93.B0,mp4a.40.2");
       },
       [](const MemberStatus& m) { return m.codecs_match; }},
      {"bitrate 1.3x",
       [&](ClusterConfig&, NodeStates& n, GroupOptions&) {
         stream_of(n).mutable_renditions(1)->set_bitrate_kbit(1040);  // 800 × 1.3
       },
       [](const MemberStatus& m) { return m.codecs_match; }},
      {"clock skew 241 s",
       [](ClusterConfig&, NodeStates& n, GroupOptions&) {
         n["ingest-2"].report.set_node_clock_unix_ms(kNow + 241'000);
       },
       [](const MemberStatus& m) { return m.clock_ok; }},
      {"clock skew -241 s",
       [](ClusterConfig&, NodeStates& n, GroupOptions&) {
         n["ingest-2"].report.set_node_clock_unix_ms(kNow - 241'000);
       },
       [](const MemberStatus& m) { return m.clock_ok; }},
      {"key not held",
       [](ClusterConfig&, NodeStates& n, GroupOptions&) {
         n["ingest-2"].report.clear_viewing_key_ids();
         n["ingest-2"].report.add_viewing_key_ids("k1");
       },
       [](const MemberStatus& m) { return m.key_held; }},
      {"cpu over threshold",
       [](ClusterConfig&, NodeStates& n, GroupOptions&) {
         n["ingest-2"].report.set_cpu_percent(95);
       },
       [](const MemberStatus& m) { return !m.overloaded; }},
      {"network over threshold",
       [](ClusterConfig&, NodeStates& n, GroupOptions&) {
         n["ingest-2"].report.set_out_kbit(950'000);  // 95 % of 1 Gbit/s
       },
       [](const MemberStatus& m) { return !m.overloaded; }},
      {"backup sessions at limit",
       [](ClusterConfig&, NodeStates& n, GroupOptions&) {
         n["ingest-2"].report.set_backup_sessions(100);
       },
       [](const MemberStatus& m) { return !m.overloaded; }},
      {"protocol too old",
       [](ClusterConfig&, NodeStates& n, GroupOptions&) {
         n["ingest-2"].registration.set_protocol_version(0);
       },
       [](const MemberStatus& m) { return m.version_ok; }},
      {"protocol below the group minimum",
       [](ClusterConfig&, NodeStates&, GroupOptions& o) { o.min_protocol_version = 2; },
       [](const MemberStatus& m) { return m.version_ok; }},
      {"protocol below the minimum one of the group's streams asks for (O-4)",
       [](ClusterConfig& c, NodeStates& n, GroupOptions&) {
         c.streams["ch1"].object["ott"]["min_protocol_version"] = 2u;
         n["ingest-1"].registration.set_protocol_version(2);
         n["ingest-3"].registration.set_protocol_version(2);
       },
       [](const MemberStatus& m) { return m.version_ok; }},
      {"offline",
       [](ClusterConfig&, NodeStates& n, GroupOptions&) { n["ingest-2"].online = false; },
       [](const MemberStatus& m) { return m.online; }},
  };
  for (const Row& row : rows) {
    ClusterConfig config = HealthyConfig();
    NodeStates nodes = HealthyNodes();
    GroupOptions options;
    row.change(config, nodes, options);
    auto snapshot = EvaluateGroups(config, nodes, kNow, options);
    const GroupStatus& group = snapshot.groups.at("ch1");
    INFO(row.name << "\n" << GroupJson(group).dump(2));
    const MemberStatus& changed = Member(snapshot, "ingest-2");
    CHECK_FALSE(changed.eligible);
    CHECK_FALSE(row.column_ok(changed));
    if (options.min_protocol_version == 1) {
      // The other two stay eligible and still back each other up.
      CHECK(Member(snapshot, "ingest-1").eligible);
      CHECK(Member(snapshot, "ingest-3").eligible);
      CHECK(Member(snapshot, "ingest-1").eligible_backups == 1);
      // A member not offered is a choice, not a problem; any other reason is one.
      if (changed.backup == "can_replace") CHECK(group.state != "with_backup");
    }
  }
}

TEST_CASE("O-15 just inside the limits a member stays eligible") {
  ClusterConfig config = HealthyConfig();
  NodeStates nodes = HealthyNodes();
  auto& r = nodes["ingest-2"].report;
  r.mutable_streams(0)->set_live_window_age_s(600);
  r.set_node_clock_unix_ms(kNow - 240'000);
  r.set_cpu_percent(90);
  r.set_backup_sessions(99);
  r.mutable_streams(0)->mutable_renditions(1)->set_bitrate_kbit(1000);  // 800 × 1.25
  r.mutable_streams(0)->set_timeline_fingerprint(
      "1000:" + std::to_string(1000 * kSegmentMs * 90 - kSegmentMs * 45) + ":180000");
  auto snapshot = EvaluateGroups(config, nodes, kNow);
  INFO(GroupJson(snapshot.groups.at("ch1")).dump(2));
  CHECK(Member(snapshot, "ingest-2").eligible);
  CHECK(snapshot.groups.at("ch1").state == "with_backup");
}

TEST_CASE("O-8 the timeline reference is the majority, and names the odd member") {
  ClusterConfig config = HealthyConfig();
  NodeStates nodes = HealthyNodes();
  // ingest-1 (lowest id) is the one off the timeline: the other two are the majority.
  nodes["ingest-1"].report.mutable_streams(0)->set_timeline_fingerprint("1000:12345:180000");
  auto snapshot = EvaluateGroups(config, nodes, kNow);
  const GroupStatus& group = snapshot.groups.at("ch1");
  INFO(GroupJson(group).dump(2));
  CHECK_FALSE(Member(snapshot, "ingest-1").same_timeline);
  CHECK(Member(snapshot, "ingest-2").same_timeline);
  CHECK(Member(snapshot, "ingest-3").same_timeline);
  CHECK(HasProblem(group, "ingest-1: timeline differs from ingest-2"));
}

TEST_CASE(
    "R-2 O-8 fingerprints, archive ranges and clocks beyond any calendar in a node's report "
    "are not computed with") {
  CHECK_FALSE(ParseFingerprint("9223372036854775807:0:180000"));
  CHECK_FALSE(ParseFingerprint("-1:0:180000"));
  CHECK(ParseFingerprint("1000:12345:180000"));
  // The largest a fingerprint may name, against the smallest: no overflow in the comparison.
  constexpr int64_t kMax = int64_t{1} << 56;
  CHECK_FALSE(SameTimeline({kMax, 0, 180000}, {0, kMax, 180000}, 2000));
  ClusterConfig config = HealthyConfig();
  NodeStates nodes = HealthyNodes();
  auto& report = nodes["ingest-1"].report;
  report.mutable_streams(0)->set_timeline_fingerprint("9223372036854775807:0:180000");
  auto* range = report.mutable_streams(0)->add_archive();
  range->set_from_ms(std::numeric_limits<int64_t>::max());
  range->set_to_ms(std::numeric_limits<int64_t>::max());
  report.set_node_clock_unix_ms(std::numeric_limits<int64_t>::min());
  auto snapshot = EvaluateGroups(config, nodes, kNow);  // UBSan: no overflow on the way
  CHECK_FALSE(Member(snapshot, "ingest-1").same_timeline);
  CHECK_FALSE(Member(snapshot, "ingest-1").clock_ok);
}

TEST_CASE("O-19 group states: with_backup, degraded, no_backup") {
  SECTION("a problem on a member that others do not need: degraded") {
    ClusterConfig config = HealthyConfig();
    NodeStates nodes = HealthyNodes();
    nodes["ingest-3"].report.clear_viewing_key_ids();
    auto snapshot = EvaluateGroups(config, nodes, kNow);
    const GroupStatus& group = snapshot.groups.at("ch1");
    INFO(GroupJson(group).dump(2));
    CHECK(group.state == "degraded");
    CHECK(HasProblem(group, "ingest-3: does not hold viewing key k2"));
    CHECK(Member(snapshot, "ingest-3").eligible_backups == 2);
  }
  SECTION("two members offline: the third has no backup") {
    ClusterConfig config = HealthyConfig();
    NodeStates nodes = HealthyNodes();
    nodes["ingest-1"].online = false;
    nodes["ingest-2"].online = false;
    auto snapshot = EvaluateGroups(config, nodes, kNow);
    const GroupStatus& group = snapshot.groups.at("ch1");
    CHECK(group.state == "no_backup");
    CHECK(Member(snapshot, "ingest-3").eligible_backups == 0);
    CHECK(Member(snapshot, "ingest-1").eligible_backups == 1);
    CHECK(HasProblem(group, "ingest-1: offline"));
  }
  SECTION("a group on one node only has no backup") {
    ClusterConfig config;
    PutStream(config, "solo", {"ingest-1"}, "can_replace");
    config.streams["solo"].object["ott"]["group"] = "ch1";
    NodeStates nodes;
    nodes["ingest-1"] = HealthyNode("ingest-1", "solo", 10);
    auto snapshot = EvaluateGroups(config, nodes, kNow);
    CHECK(snapshot.groups.at("ch1").state == "no_backup");
    CHECK(HasProblem(snapshot.groups.at("ch1"), "the group has fewer than two nodes"));
  }
  SECTION("a node never registered is an offline member") {
    ClusterConfig config = HealthyConfig();
    NodeStates nodes = HealthyNodes();
    nodes.erase("ingest-3");
    auto snapshot = EvaluateGroups(config, nodes, kNow);
    const MemberStatus& m = Member(snapshot, "ingest-3");
    CHECK_FALSE(m.online);
    CHECK_FALSE(m.eligible);
    CHECK(m.http_base.empty());
    CHECK_FALSE(m.live_window_age_s.has_value());
    CHECK(snapshot.groups.at("ch1").state == "degraded");
  }
  SECTION("streams without ott form no group") {
    ClusterConfig config = HealthyConfig();
    config.streams["ch1"].object["ott"]["enabled"] = false;
    config.streams["ch1-spare"].object["ott"]["enabled"] = false;
    CHECK(EvaluateGroups(config, HealthyNodes(), kNow).groups.empty());
  }
}

TEST_CASE("O-11 a member with only a private address is a group problem") {
  ClusterConfig config = HealthyConfig();
  config.streamers["ingest-2"].settings.set_hostname("10.0.0.2");
  auto snapshot = EvaluateGroups(config, HealthyNodes(), kNow);
  const GroupStatus& group = snapshot.groups.at("ch1");
  INFO(GroupJson(group).dump(2));
  const MemberStatus& m = Member(snapshot, "ingest-2");
  CHECK_FALSE(m.address_public);
  CHECK(m.http_base == "http://10.0.0.2:8080");
  CHECK(m.https_base.empty());  // the certificate names no IP address
  CHECK(m.eligible);            // addresses are decided per viewer on the node
  CHECK(HasProblem(group, "ingest-2: a node has only private addresses for backup"));
  CHECK(group.state == "degraded");

  SECTION("a public IPv6 literal is public and bracketed") {
    config.streamers["ingest-2"].settings.set_hostname("2001:4860::8888");
    auto again = EvaluateGroups(config, HealthyNodes(), kNow);
    CHECK(Member(again, "ingest-2").address_public);
    CHECK(Member(again, "ingest-2").http_base == "http://[2001:4860::8888]:8080");
  }
}

TEST_CASE("O-13 a member without an https address is a group problem") {
  ClusterConfig config = HealthyConfig();
  NodeStates nodes = HealthyNodes();
  SECTION("no https listener") {
    auto* listeners = nodes["ingest-3"].registration.mutable_listeners();
    listeners->erase(listeners->begin() + 1);
  }
  SECTION("a certificate that does not cover the hostname") {
    nodes["ingest-3"].registration.clear_certificate_names();
    nodes["ingest-3"].registration.add_certificate_names("*.other.example.net");
    nodes["ingest-3"].registration.add_certificate_names("*.net");
  }
  auto snapshot = EvaluateGroups(config, nodes, kNow);
  const GroupStatus& group = snapshot.groups.at("ch1");
  INFO(GroupJson(group).dump(2));
  CHECK(Member(snapshot, "ingest-3").https_base.empty());
  CHECK(Member(snapshot, "ingest-3").http_base == "http://ingest-3.example.net:8080");
  CHECK(HasProblem(group, "ingest-3: a node has no https address for backup"));
  CHECK(group.state == "degraded");
}

TEST_CASE("O-13 certificate names match exactly or by a one-label wildcard") {
  CHECK(CertificateCovers({"edge-1.example.net"}, "EDGE-1.example.net"));
  CHECK(CertificateCovers({"*.example.net"}, "edge-1.example.net"));
  CHECK_FALSE(CertificateCovers({"*.example.net"}, "a.edge-1.example.net"));
  CHECK_FALSE(CertificateCovers({"*.example.net"}, "example.net"));
  CHECK_FALSE(CertificateCovers({}, "edge-1.example.net"));
  CHECK(CertificateCovers({"203.0.113.7"}, "203.0.113.7"));
  CHECK_FALSE(CertificateCovers({"*.0.113.7"}, "203.0.113.7"));
}

TEST_CASE("O-14 a hostname shared by two nodes on the same port is flagged") {
  ClusterConfig config = HealthyConfig();
  config.streamers["ingest-1"].settings.set_hostname("cdn.example.net");
  config.streamers["ingest-2"].settings.set_hostname("CDN.example.net");
  NodeStates nodes = HealthyNodes();
  auto snapshot = EvaluateGroups(config, nodes, kNow);
  CHECK(Member(snapshot, "ingest-1").shared_name);
  CHECK(Member(snapshot, "ingest-2").shared_name);
  CHECK_FALSE(Member(snapshot, "ingest-3").shared_name);
  CHECK(snapshot.groups.at("ch1").state == "degraded");
  CHECK(std::find(snapshot.groups.at("ch1").problems.begin(),
                  snapshot.groups.at("ch1").problems.end(),
                  "ingest-1: its hostname is shared with another node, not usable for backup") !=
        snapshot.groups.at("ch1").problems.end());

  SECTION("nodes on one host, each on its own ports, are distinct") {
    for (const char* id : {"ingest-1", "ingest-2", "ingest-3"}) {
      config.streamers[id].settings.set_hostname("203.0.113.7");
    }
    nodes["ingest-2"].registration.mutable_listeners(0)->set_port(8081);
    nodes["ingest-2"].registration.mutable_listeners(1)->set_port(8444);
    nodes["ingest-3"].registration.mutable_listeners(0)->set_port(8082);
    nodes["ingest-3"].registration.mutable_listeners(1)->set_port(8445);
    auto distinct = EvaluateGroups(config, nodes, kNow);
    CHECK_FALSE(Member(distinct, "ingest-1").shared_name);
    CHECK_FALSE(Member(distinct, "ingest-2").shared_name);
    CHECK(Member(distinct, "ingest-2").http_base == "http://203.0.113.7:8081");
  }
}

TEST_CASE("O-10 http_base uses the public port when the node announces one") {
  NodeStates nodes = HealthyNodes();
  nodes["ingest-1"].registration.set_public_port(80);
  auto snapshot = EvaluateGroups(HealthyConfig(), nodes, kNow);
  CHECK(Member(snapshot, "ingest-1").http_base == "http://ingest-1.example.net:80");
  CHECK(Member(snapshot, "ingest-1").https_base == "https://ingest-1.example.net:8443");
}

TEST_CASE("O-8 timeline fingerprints compare by msn and start within half a segment") {
  auto a = ParseFingerprint("100:18000000:180000");
  REQUIRE(a);
  CHECK(a->msn == 100);
  CHECK(a->start_90k == 18'000'000);
  CHECK_FALSE(ParseFingerprint(""));
  CHECK_FALSE(ParseFingerprint("1:2"));
  CHECK_FALSE(ParseFingerprint("1:2:x"));
  TimelineFingerprint b{102, 18'000'000 + 2 * 180'000 + 90'000, 180'000};
  CHECK(SameTimeline(*a, b, 2000));
  b.start_90k += 1;
  CHECK_FALSE(SameTimeline(*a, b, 2000));
  CHECK_FALSE(SameTimeline(b, *a, 2000));
}

TEST_CASE("O-19 the group JSON has every member column and the problems") {
  NodeStates nodes = HealthyNodes();
  nodes["ingest-2"].online = false;
  auto snapshot = EvaluateGroups(HealthyConfig(), nodes, kNow);
  json j = GroupJson(snapshot.groups.at("ch1"));
  CHECK(j["name"] == "ch1");
  CHECK(j["state"] == "degraded");
  REQUIRE(j["members"].size() == 3);
  for (const char* key : {"stream", "node", "backup", "live_window_age_s", "same_timeline",
                          "codecs_match", "clock_skew_s", "key_held", "overloaded", "version",
                          "eligible", "http_base", "https_base"}) {
    CHECK(j["members"][0].contains(key));
  }
  CHECK(j["members"][1]["node"] == "ingest-2");
  CHECK(j["members"][1]["eligible"] == false);
  CHECK(j["members"][1]["version"] == true);
  CHECK(j["problems"] == json::array({"ingest-2: offline"}));
  json list = GroupsJson(snapshot);
  REQUIRE(list["groups"].size() == 1);
  CHECK(list["groups"][0] == j);
}

TEST_CASE("O-6 each member node gets the view of its groups") {
  ClusterConfig config = HealthyConfig();
  PutStream(config, "other", {"ingest-1"}, "can_replace");
  config.streams["other"].object["ott"]["group"] = "other";
  auto views = NodeViews(EvaluateGroups(config, HealthyNodes(), kNow));
  REQUIRE(views.size() == 3);
  REQUIRE(views["ingest-1"].groups_size() == 2);
  CHECK(views["ingest-1"].groups(0).group() == "ch1");
  CHECK(views["ingest-1"].groups(1).group() == "other");
  REQUIRE(views["ingest-2"].groups_size() == 1);
  json view = json::parse(views["ingest-2"].groups(0).view_json());
  CHECK(view["group"] == "ch1");
  REQUIRE(view["members"].size() == 3);
  CHECK(view["members"][0] == json::parse(R"({"node": "ingest-1", "stream": "ch1",
      "eligible": true, "http_base": "http://ingest-1.example.net:8080",
      "https_base": "https://ingest-1.example.net:8443", "address_public": true,
      "shared_name": false, "load": 7})"));
}

TEST_CASE("O-19 nodes holding the key: online nodes with an OTT stream") {
  ClusterConfig config = HealthyConfig();
  NodeStates nodes = HealthyNodes();
  nodes["edge-9"] = HealthyNode("edge-9", "plain", 1);  // no OTT stream: not counted
  nodes["ingest-3"].report.clear_viewing_key_ids();
  auto holding = CountKeyHolders(config, nodes, "k2");
  CHECK(holding.total == 3);
  CHECK(holding.holding == 2);
  nodes["ingest-1"].online = false;
  holding = CountKeyHolders(config, nodes, "k2");
  CHECK(holding.total == 2);
  CHECK(holding.holding == 1);
}

}  // namespace
}  // namespace meshwork::central::ott
