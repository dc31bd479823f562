// The streamer's OTT decisions (O-3, O-6, O-7, O-16, O-20) from a group view and viewing keys.
#include "streamer/ott/ott_gate.h"

#include <catch2/catch.hpp>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "common/crypto/pass.h"
#include "common/net/client_address.h"

namespace meshwork::streamer {
namespace {

constexpr char kBrowser[] = "Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0 Safari/537.36";

struct Fixture {
  FakeClock clock;
  Snapshot<NodeConfig> config;
  OttGate gate{"node-a", &config, clock, nullptr};
  OttSettings ott;

  explicit Fixture(std::vector<OttMember> members, uint64_t limit = 100) {
    auto c = std::make_shared<NodeConfig>();
    c->ott_groups["g"] = OttView{"g", std::move(members)};
    c->viewing_keys.push_back({"k1", std::string(32, 'x'), 0, 1});
    c->settings.mutable_backup_session_limit()->set_value(limit);
    c->settings.mutable_alert_thresholds()->mutable_cpu_percent_error()->set_value(90);
    c->streams["ch1"] = ParseStreamConfig(
        "ch1", {{"segment_ms", 2000}, {"ott", {{"enabled", true}, {"group", "g"}}}});
    config.Set(c);
    gate.Apply(*c);
    ott = gate.Settings("ch1");
  }
  http::RequestContext Request(std::string agent, std::string client = "10.0.0.5") {
    http::RequestContext ctx;
    if (!agent.empty()) ctx.request.set(http::beast_http::field::user_agent, agent);
    ctx.client = *net::IpAddress::Parse(client);
    ctx.scheme = "http";
    return ctx;
  }
};

OttMember Member(std::string node, uint64_t load = 0, bool eligible = true) {
  return {node, "ch1", eligible, "http://" + node + ":80", "", false, false, load};
}

TEST_CASE(
    "O-6 O-9 the master lists the node's own variant first, then two backups at their own "
    "addresses") {
  Fixture f({Member("node-a"), Member("node-b"), Member("node-c"), Member("node-d")});
  REQUIRE(f.ott.enabled);
  CHECK(f.ott.stale_after_ms == 4000);
  auto ctx = f.Request(kBrowser);
  auto master = f.gate.MasterWithBackups(ctx, "ch1", f.ott, hls::Variant{1}, "v1");
  REQUIRE(master);
  std::regex uri("\n(http://node-[bcd]:80/ch1/v1/index.m3u8\\?pass=([^\n]+))\n");
  std::vector<std::string> passes;
  for (auto it = std::sregex_iterator(master->begin(), master->end(), uri);
       it != std::sregex_iterator(); ++it) {
    passes.push_back((*it)[2]);
  }
  REQUIRE(passes.size() == 2);
  CHECK(master->find("\nv1/index.m3u8\n") < master->find("http://"));
  auto claims = crypto::VerifyPass(passes[0], "ch1", {{"k1", std::string(32, 'x')}},
                                   UnixMillis(f.clock.Now()) / 1000);
  REQUIRE(claims.ok());
  CHECK(claims->issuer == "node-a");
  CHECK(claims->group == "g");
  CHECK(claims->expires_unix_s - claims->issued_unix_s == OttGate::kPassLifetimeS);
  // O-20: no backups for players that do not switch; none for ineligible peers.
  CHECK_FALSE(
      f.gate.MasterWithBackups(f.Request("Lavf/60.3.100"), "ch1", f.ott, hls::Variant{}, "v1"));
  Fixture lonely({Member("node-a"), Member("node-b", 0, false)});
  CHECK_FALSE(lonely.gate.MasterWithBackups(lonely.Request(kBrowser), "ch1", lonely.ott,
                                            hls::Variant{}, "v1"));
}

TEST_CASE("CS-1 O-8 a member the OTT group does not hold eligible is no steering pathway") {
  // node-b is in ch1's OTT group but not eligible (another timeline); node-c is; node-d is an
  // edge outside the group, judged by central alone.
  Fixture f({Member("node-a"), Member("node-b", 0, false), Member("node-c")});
  auto c = std::make_shared<NodeConfig>(*f.config.Get());
  OttView view{"steering:ch1", {}, "http://central:8080/steering/ch1"};
  for (const char* node : {"node-a", "node-b", "node-c", "node-d"})
    view.members.push_back(Member(node));
  c->ott_groups["steering:ch1"] = view;
  f.config.Set(c);
  auto steering = f.gate.Pathways(f.Request(kBrowser), "ch1");
  REQUIRE(steering);
  std::vector<std::string> ids;
  for (const auto& p : steering->pathways) ids.push_back(p.id);
  CHECK(ids == std::vector<std::string>{"node-a", "node-c", "node-d"});
}

TEST_CASE("O-6 S-17 a DASH viewer's backups rotate over the usable members") {
  Fixture f({Member("node-a"), Member("node-b"), Member("node-c"), Member("node-d")});
  std::map<std::string, int> first;
  for (int i = 0; i < 30; ++i) {
    auto backups = f.gate.MpdBackups(f.Request(kBrowser), "ch1", f.ott);
    REQUIRE(backups.size() == 3);  // this node, then two backups
    CHECK(backups[0].id == "node-a");
    CHECK(backups[1].id != backups[2].id);
    ++first[backups[1].id];
  }
  CHECK(first.size() == 3);
  for (const auto& [node, times] : first) {
    INFO(node);
    CHECK(times == 10);
  }
}

TEST_CASE(
    "CS-1 pathways: this node first, its zone's nodes next, addresses by the viewer, "
    "at most eight") {
  Fixture f({Member("node-a")});
  auto c = std::make_shared<NodeConfig>(*f.config.Get());
  c->settings.set_zone("office");
  OttView view{"steering:ch1", {}, "http://central:8080/steering/ch1"};
  for (int i = 0; i < 12; ++i) {
    OttMember m = Member(i == 0 ? "node-a" : "node-" + std::to_string(100 + i));
    m.zone = i % 3 == 0 ? "office" : "hq";
    m.address_public = true;
    view.members.push_back(m);
  }
  OttMember hidden = Member("node-private");  // a private address, for a public viewer
  hidden.zone = "office";
  view.members.push_back(hidden);
  c->ott_groups["steering:ch1"] = view;
  f.config.Set(c);
  auto steering = f.gate.Pathways(f.Request(kBrowser, "203.0.113.9"), "ch1");
  REQUIRE(steering);
  CHECK(steering->server_uri == "http://central:8080/steering/ch1");
  CHECK(steering->pathway_id == "node-a");
  CHECK(steering->self_base == "http://node-a:80/ch1/");
  std::vector<std::string> ids;
  for (const auto& p : steering->pathways) ids.push_back(p.id);
  // The office's others (103, 106, 109) before hq's, eight in all, no private address.
  CHECK(ids == std::vector<std::string>{"node-a", "node-103", "node-106", "node-109", "node-101",
                                        "node-102", "node-104", "node-105"});
  CHECK(steering->pathways[0].base.empty());
  CHECK(steering->pathways[1].base == "http://node-103:80/ch1/");
  // No view for the stream: no steering.
  CHECK_FALSE(f.gate.Pathways(f.Request(kBrowser), "other"));
}

TEST_CASE("O-7 a pass from another node is admitted, a bad one answered 403 with the reason") {
  Fixture f({Member("node-a"), Member("node-b")});
  int64_t now = UnixMillis(f.clock.Now()) / 1000;
  crypto::ViewingKey key{"k1", std::string(32, 'x')};
  auto good = crypto::SignPass({"k1", "ch1", "g", "node-b", now, now + 3600}, key);
  auto ctx = f.Request(kBrowser);
  CHECK_FALSE(f.gate.AdmitPass(ctx, "ch1", good, "*", std::chrono::seconds(4)));
  CHECK(f.gate.ExpireAndCountBackupSessions() == 1);
  auto other = crypto::SignPass({"k1", "ch2", "g", "node-b", now, now + 3600}, key);
  auto refused = f.gate.AdmitPass(ctx, "ch1", other, "*", std::chrono::seconds(4));
  REQUIRE(refused);
  CHECK(refused->result_int() == 403);
  CHECK(refused->body().find("another stream") != std::string::npos);
  auto wrong_key =
      crypto::SignPass({"k1", "ch1", "g", "node-b", now, now + 3600}, {"k1", std::string(32, 'y')});
  CHECK(f.gate.AdmitPass(ctx, "ch1", wrong_key, "*", std::chrono::seconds(4))->result_int() == 403);
}

TEST_CASE("O-16 a backup session ends when its active window passes on the injected clock") {
  Fixture f({Member("node-a"), Member("node-b")});
  int64_t now = UnixMillis(f.clock.Now()) / 1000;
  crypto::ViewingKey key{"k1", std::string(32, 'x')};
  auto pass = crypto::SignPass({"k1", "ch1", "g", "node-b", now, now + 3600}, key);
  CHECK_FALSE(f.gate.AdmitPass(f.Request(kBrowser), "ch1", pass, "*", std::chrono::seconds(4)));
  CHECK(f.gate.ExpireAndCountBackupSessions() == 1);
  f.clock.Advance(std::chrono::milliseconds(3999));
  CHECK(f.gate.ExpireAndCountBackupSessions() == 1);
  f.clock.Advance(std::chrono::milliseconds(1));
  CHECK(f.gate.ExpireAndCountBackupSessions() == 0);
}

TEST_CASE("O-16 viewers from other nodes are refused at the backup session limit or CPU error") {
  Fixture f({Member("node-a"), Member("node-b")}, /*limit=*/1);
  int64_t now = UnixMillis(f.clock.Now()) / 1000;
  auto pass =
      crypto::SignPass({"k1", "ch1", "g", "node-b", now, now + 3600}, {"k1", std::string(32, 'x')});
  auto first = f.Request(kBrowser, "10.0.0.1");
  auto second = f.Request(kBrowser, "10.0.0.2");
  CHECK_FALSE(f.gate.AdmitPass(first, "ch1", pass, "*", std::chrono::seconds(60)));
  auto refused = f.gate.AdmitPass(second, "ch1", pass, "*", std::chrono::seconds(60));
  REQUIRE(refused);
  CHECK(refused->result_int() == 429);
  CHECK((*refused)[http::beast_http::field::retry_after] != "");
  // The viewer already counted here keeps its place.
  CHECK_FALSE(f.gate.AdmitPass(first, "ch1", pass, "*", std::chrono::seconds(60)));
  CHECK(f.gate.refusals() == 1);
  // CPU above the error threshold refuses new viewers; the counted one keeps its place.
  f.gate.SetLoad(95, 0);
  Fixture roomy({Member("node-a"), Member("node-b")}, /*limit=*/100);
  roomy.gate.SetLoad(95, 0);
  CHECK(roomy.gate.AdmitPass(first, "ch1", pass, "*", std::chrono::seconds(60))->result_int() ==
        429);
  CHECK_FALSE(f.gate.AdmitPass(first, "ch1", pass, "*", std::chrono::seconds(60)));
  CHECK(f.gate.refusals() == 1);
}

TEST_CASE("O-16 R-3 one address making up user agents counts a few backup places, keeps them all") {
  Fixture f({Member("node-a"), Member("node-b")}, /*limit=*/20);
  int64_t now = UnixMillis(f.clock.Now()) / 1000;
  auto pass =
      crypto::SignPass({"k1", "ch1", "g", "node-b", now, now + 3600}, {"k1", std::string(32, 'x')});
  for (int i = 0; i < 50; ++i) {
    // Served, every one; counted up to the per-client share.
    CHECK_FALSE(f.gate.AdmitPass(f.Request("agent-" + std::to_string(i), "203.0.113.9"), "ch1",
                                 pass, "*", std::chrono::seconds(60)));
  }
  CHECK(f.gate.ExpireAndCountBackupSessions() == 8);  // the address's counted share
  // A real viewer from elsewhere is still taken.
  CHECK_FALSE(f.gate.AdmitPass(f.Request(kBrowser, "198.51.100.7"), "ch1", pass, "*",
                               std::chrono::seconds(60)));
  CHECK(f.gate.refusals() == 0);
  // Under overload, viewers behind that one address that switched here keep their places.
  f.gate.SetLoad(95, 0);
  CHECK_FALSE(f.gate.AdmitPass(f.Request("agent-30", "203.0.113.9"), "ch1", pass, "*",
                               std::chrono::seconds(60)));
  CHECK(f.gate
            .AdmitPass(f.Request("agent-99", "203.0.113.9"), "ch1", pass, "*",
                       std::chrono::seconds(60))
            ->result_int() == 429);
}

TEST_CASE("O-3 a new viewer is redirected to the least-loaded eligible member with a pass") {
  Fixture f(
      {Member("node-a"), Member("node-b", 7), Member("node-c", 2), Member("node-d", 0, false)});
  auto location = f.gate.RedirectTarget(f.Request(""), "ch1", f.ott, "v1/index.m3u8");
  CHECK(location.rfind("http://node-c:80/ch1/v1/index.m3u8?pass=", 0) == 0);
  Fixture none({Member("node-a"), Member("node-b", 0, false)});
  CHECK(none.gate.RedirectTarget(none.Request(""), "ch1", none.ott, "index.m3u8").empty());
}

TEST_CASE("O-13 a viewer on HTTPS behind a trusted proxy is offered only HTTPS backups") {
  OttMember secure = Member("node-c");
  secure.https_base = "https://node-c.example:443";
  Fixture f({Member("node-a"), Member("node-b"), secure});
  auto ctx = f.Request(kBrowser);
  ctx.peer_trusted = true;
  ctx.request.set("X-Forwarded-Proto", "https");
  auto master = f.gate.MasterWithBackups(ctx, "ch1", f.ott, hls::Variant{1}, "v1");
  REQUIRE(master);
  CHECK(master->find("https://node-c.example:443/ch1/v1/index.m3u8?pass=") != std::string::npos);
  CHECK(master->find("http://node-b") == std::string::npos);
  // The same header from an untrusted peer changes nothing: both plain backups are offered.
  ctx.peer_trusted = false;
  master = f.gate.MasterWithBackups(ctx, "ch1", f.ott, hls::Variant{1}, "v1");
  REQUIRE(master);
  CHECK(master->find("http://node-b:80/") != std::string::npos);
  CHECK(master->find("http://node-c:80/") != std::string::npos);
}

TEST_CASE("O-11 a viewer with a public address gets no private backup") {
  OttMember open = Member("node-c");
  open.address_public = true;
  Fixture f({Member("node-a"), Member("node-b"), open});
  auto master = f.gate.MasterWithBackups(f.Request(kBrowser, "203.0.113.9"), "ch1", f.ott,
                                         hls::Variant{1}, "v1");
  REQUIRE(master);
  CHECK(master->find("node-b") == std::string::npos);
  CHECK(master->find("http://node-c:80/") != std::string::npos);
  // The redirect on open follows the same rule.
  auto location = f.gate.RedirectTarget(f.Request("", "203.0.113.9"), "ch1", f.ott, "index.m3u8");
  CHECK(location.rfind("http://node-c:80/", 0) == 0);
}

TEST_CASE("O-12 the client is the peer, or behind a trusted proxy the address it forwards") {
  OttMember open = Member("node-c");
  open.address_public = true;
  Fixture f({Member("node-a"), Member("node-b"), open});
  auto trusted = net::CidrSet::Parse({"10.0.0.0/8"}, "trusted_proxies");
  REQUIRE(trusted.ok());
  const std::vector<std::string_view> forwarded = {"203.0.113.9"};
  // What the server fills in per request (T-2): a proxy at 10.0.0.1 forwarding a public viewer.
  auto viewer_via = [&](const char* proxy, const net::CidrSet& trust) {
    auto ctx = f.Request(kBrowser);
    ctx.peer = *net::IpAddress::Parse(proxy);
    ctx.client = net::ResolveClientAddress(ctx.peer, trust, forwarded);
    return f.gate.MasterWithBackups(ctx, "ch1", f.ott, hls::Variant{1}, "v1");
  };
  // Trusted: the viewer is public and gets only the public backup.
  auto master = viewer_via("10.0.0.1", *trusted);
  REQUIRE(master);
  CHECK(master->find("node-b") == std::string::npos);
  CHECK(master->find("http://node-c:80/") != std::string::npos);
  // The same proxy untrusted: every viewer behind it looks private and gets both backups.
  master = viewer_via("10.0.0.1", net::CidrSet());
  REQUIRE(master);
  CHECK(master->find("http://node-b:80/") != std::string::npos);
  CHECK(master->find("http://node-c:80/") != std::string::npos);
}

TEST_CASE("O-6 the backup rotation of one stream stays balanced when another stream interleaves") {
  Fixture f({Member("node-a"), Member("node-b"), Member("node-c")});
  auto c = std::make_shared<NodeConfig>(*f.config.Get());
  c->streams["ch2"] = ParseStreamConfig(
      "ch2", {{"segment_ms", 2000}, {"ott", {{"enabled", true}, {"group", "h"}}}});
  c->ott_groups["h"] = OttView{"h", {Member("node-a"), Member("node-b"), Member("node-c")}};
  f.config.Set(c);
  f.gate.Apply(*c);
  auto other = f.gate.Settings("ch2");
  std::map<std::string, int> first;
  for (int i = 0; i < 100; ++i) {
    auto ctx = f.Request(kBrowser);
    auto m = f.gate.MasterWithBackups(ctx, "ch1", f.ott, hls::Variant{1}, "v1");
    REQUIRE(m);
    first[m->substr(m->find("http://"), 13)]++;
    REQUIRE(f.gate.MasterWithBackups(ctx, "ch2", other, hls::Variant{1}, "v1"));
  }
  CHECK(first["http://node-b"] == 50);
  CHECK(first["http://node-c"] == 50);
}

}  // namespace
}  // namespace meshwork::streamer
