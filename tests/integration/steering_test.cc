// Content steering with real processes (CS-1…CS-4, spec 10): two ingest nodes fed the same
// source, a stream with steering on; the pathways in each node's master playlist, central's
// steering answers (order, stickiness, drain, DASH form, 410), and hls.js in Chromium moving
// from a drained node to the other within the answer's TTL and one target duration.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <future>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/crypto/jwt.h"
#include "tests/integration/media_harness.h"
#include "tests/integration/viewer_tokens.h"

namespace meshwork::testing {
namespace steering_test {
namespace {

using namespace std::chrono_literals;

constexpr int kTtlS = 5;

// The node reports at least one play session.
bool Watching(const Central& central, const std::string& node) {
  auto r = Http("GET", central.http, "/central/api-v4/streamers/" + node).Json();
  return r.is_object() && r["status"]["report"].value("play_sessions", 0) >= 1;
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

struct SteeredCluster {
  Central central;
  Streamer a, b;
  std::unique_ptr<Process> push_a, push_b;
};

void StartSteered(SteeredCluster& k) {
  k.central = StartCentral(MakeTempDir("steering"));
  k.a = StartIngestWithStream(k.central, "node-a", "ch1");
  // B on a loopback address of its own, as two machines would be: players tell pathways
  // apart by host (Shaka bans a failed location by its domain).
  k.b = StartIngestWithStream(k.central, "node-b", "ch1", {"publish://"},
                              {"--listen=127.0.0.2:0", "--hostname=127.0.0.2"});
  auto stream = Http("GET", k.central.http, "/central/api-v4/streams/ch1").Json();
  stream["steering"] = {{"enabled", true}, {"ttl_s", kTtlS}};
  auto put = Http("PUT", k.central.http, "/central/api-v4/streams/ch1", stream.dump());
  INFO(put.body);
  REQUIRE(put.status == 200);
  const std::string& source = SourceTs(120);
  k.push_a = PushFile(source, k.a.publish, "ch1");
  k.push_b = PushFile(source, k.b.publish, "ch1");
  // Players start once each node lists three segments: the stall bounds below are about the
  // move, not about a player's start on a stream seconds old.
  for (const Streamer* s : {&k.a, &k.b}) {
    REQUIRE(Eventually(
        [&] { return Count(Http("GET", s->http, "/ch1/v1/index.m3u8").body, "#EXTINF") >= 3; },
        40s));
  }
  // Both nodes list both pathways once each has the stream.
  for (const Streamer* s : {&k.a, &k.b}) {
    REQUIRE(Eventually(
        [&] {
          auto m = Http("GET", s->http, "/ch1/index.m3u8");
          return m.status == 200 && Count(m.body, "PATHWAY-ID=\"node-a\"") >= 1 &&
                 Count(m.body, "PATHWAY-ID=\"node-b\"") >= 1;
        },
        40s));
  }
}

nlohmann::json Steer(const Central& central, const std::string& query) {
  auto r = Http("GET", central.http, "/steering/ch1" + query);
  INFO(r.status << " " << r.body);
  REQUIRE(r.status == 200);
  CHECK(r.headers["Access-Control-Allow-Origin"] == "*");
  return r.Json();
}

// The Apple and DASH-IF field rules: VERSION 1, a positive TTL, an absolute RELOAD-URI, and a
// non-empty priority list of unique pathway ids.
void CheckManifest(const nlohmann::json& m, const char* list) {
  INFO(m.dump());
  CHECK(m["VERSION"] == 1);
  CHECK(m["TTL"] == kTtlS);
  REQUIRE(m["RELOAD-URI"].is_string());
  CHECK(m["RELOAD-URI"].get<std::string>().rfind("http://", 0) == 0);
  REQUIRE(m[list].is_array());
  CHECK_FALSE(m[list].empty());
  std::set<std::string> unique;
  for (const auto& p : m[list]) unique.insert(p.get<std::string>());
  CHECK(unique.size() == m[list].size());
}

TEST_CASE(
    "CS-1 CS-2 CS-3 CS-4 Z-15 pathways in every master, steering answers by load, stickiness "
    "and drain, DASH form, 410 for an unknown stream") {
  SteeredCluster k;
  StartSteered(k);

  // CS-1: node A's master: the steering tag names central and A's own pathway; A's variants
  // are relative, B's absolute on B's address; each pathway lists the variant once.
  auto master = Http("GET", k.a.http, "/ch1/index.m3u8");
  INFO(master.body);
  CHECK(master.body.find("#EXT-X-CONTENT-STEERING:SERVER-URI=\"http://" + k.central.http +
                         "/steering/ch1\",PATHWAY-ID=\"node-a\"") != std::string::npos);
  CHECK(master.body.find("\nv1/index.m3u8") != std::string::npos);
  CHECK(master.body.find("\nhttp://" + k.b.http + "/ch1/v1/index.m3u8") != std::string::npos);
  CHECK(Count(master.body, "#EXT-X-STREAM-INF") == 2);
  CHECK(master.headers["Cache-Control"] == "private, no-store");
  auto ll = Http("GET", k.b.http, "/ch1/index.ll.m3u8");
  CHECK(ll.body.find("PATHWAY-ID=\"node-b\"\n") != std::string::npos);
  CHECK(ll.body.find("http://" + k.a.http + "/ch1/") != std::string::npos);

  // CS-2: both nodes, in an HLS manifest; RELOAD-URI at central.
  auto first = Steer(k.central, "");
  CheckManifest(first, "PATHWAY-PRIORITY");
  CHECK(first["PATHWAY-PRIORITY"].size() == 2);
  CHECK(first["RELOAD-URI"] == "http://" + k.central.http + "/steering/ch1");
  // CS-3: a viewer on either pathway stays there while loads are even.
  CHECK(Steer(k.central, "?_HLS_pathway=node-b&_HLS_throughput=5000000")["PATHWAY-PRIORITY"][0] ==
        "node-b");
  CHECK(Steer(k.central, "?_HLS_pathway=node-a")["PATHWAY-PRIORITY"][0] == "node-a");
  // DASH clients get SERVICE-LOCATION-PRIORITY (and PATHWAY-PRIORITY, which dash.js and
  // Shaka read); their own query stays in RELOAD-URI. dash.js names the service locations it
  // used, quoted, the newest last.
  auto dash = Steer(k.central,
                    "?_DASH_pathway=%22node-a%2Cnode-b%22&_DASH_throughput=100,"
                    "200&session=7");
  CheckManifest(dash, "SERVICE-LOCATION-PRIORITY");
  CheckManifest(dash, "PATHWAY-PRIORITY");
  CHECK(dash["SERVICE-LOCATION-PRIORITY"][0] == "node-b");
  CHECK(dash["PATHWAY-PRIORITY"] == dash["SERVICE-LOCATION-PRIORITY"]);
  CHECK(dash["RELOAD-URI"] == "http://" + k.central.http + "/steering/ch1?session=7");
  CHECK_FALSE(first.contains("SERVICE-LOCATION-PRIORITY"));

  // CS-1, S-17: the MPD has a BaseURL per pathway (its own first) and names the server.
  auto mpd = Http("GET", k.a.http, "/ch1/index.mpd");
  INFO(mpd.body);
  CHECK(mpd.body.find("<BaseURL serviceLocation=\"node-a\" dvb:priority=\"1\" "
                      "dvb:weight=\"1\">http://" +
                      k.a.http + "/ch1/</BaseURL>") != std::string::npos);
  CHECK(mpd.body.find("<BaseURL serviceLocation=\"node-b\" dvb:priority=\"2\" "
                      "dvb:weight=\"1\">http://" +
                      k.b.http + "/ch1/</BaseURL>") != std::string::npos);
  CHECK(mpd.body.find("<ContentSteering defaultServiceLocation=\"node-a\" "
                      "queryBeforeStart=\"false\">http://" +
                      k.central.http + "/steering/ch1?format=dash</ContentSteering>") !=
        std::string::npos);

  // A-3 CS-1: a protected stream's pathways to the other node carry the viewer's token, not
  // this node's session id (which only this node knows), and the other node takes them.
  auto key = Http("PUT", k.central.http, "/central/api-v4/access-keys/k1",
                  nlohmann::json{{"alg", "HS256"}, {"secret", kTestTokenSecretB64}}.dump());
  REQUIRE(key.status == 201);
  REQUIRE(Http("PATCH", k.central.http, "/central/api-v4/streams/ch1",
               R"({"access": {"mode": "token"}})")
              .status == 200);
  const std::string token = crypto::SignJwtHs256(
      absl::StrCat(R"({"exp":)", UnixNowS() + 600, R"(,"sub":"alice"})"), "k1", kTestTokenSecret);
  for (const Streamer* s : {&k.a, &k.b}) {
    REQUIRE(Eventually([&] { return Http("GET", s->http, "/ch1/index.m3u8").status == 401; }, 10s));
  }
  for (const char* master_name : {"index.m3u8", "index.ll.m3u8"}) {
    auto protected_master =
        Http("GET", k.a.http, std::string("/ch1/") + master_name + "?token=" + token);
    INFO(protected_master.body);
    REQUIRE(protected_master.status == 200);
    size_t at = protected_master.body.find("\nhttp://" + k.b.http + "/ch1/");
    REQUIRE(at != std::string::npos);
    std::string to_b =
        protected_master.body.substr(at + 1, protected_master.body.find('\n', at + 1) - (at + 1));
    INFO(to_b);
    CHECK(to_b.find("token=" + token) != std::string::npos);
    CHECK(to_b.find("sid=") == std::string::npos);
    CHECK(Http("GET", k.b.http, to_b.substr(std::string("http://").size() + k.b.http.size()))
              .status == 200);
  }
  auto protected_mpd = Http("GET", k.a.http, "/ch1/index.mpd?token=" + token);
  INFO(protected_mpd.body);
  REQUIRE(protected_mpd.status == 200);
  // The templates, resolved against B's BaseURL too, carry the token.
  CHECK(protected_mpd.body.find(">http://" + k.b.http + "/ch1/</BaseURL>") != std::string::npos);
  CHECK(protected_mpd.body.find("token=" + token) != std::string::npos);
  CHECK(protected_mpd.body.find("sid=") == std::string::npos);
  REQUIRE(Http("PATCH", k.central.http, "/central/api-v4/streams/ch1",
               R"({"access": {"mode": "open"}})")
              .status == 200);
  for (const Streamer* s : {&k.a, &k.b}) {
    REQUIRE(Eventually([&] { return Http("GET", s->http, "/ch1/index.m3u8").status == 200; }, 10s));
  }

  // Z-15: A at its session limit (one viewer) comes last, and new viewers go to B.
  auto limit = Http("PATCH", k.central.http, "/central/api-v4/streamers/node-a",
                    R"({"cdn": {"playback_session_limit": 1}})");
  REQUIRE(limit.status == 200);
  REQUIRE(Http("GET", k.a.http, "/ch1/index.m3u8").status == 200);
  REQUIRE(Eventually(
      [&] {
        auto m = Steer(k.central, "?_HLS_pathway=node-a");
        return m["PATHWAY-PRIORITY"] == nlohmann::json::array({"node-b", "node-a"});
      },
      10s));
  auto to_b = Http("GET", k.central.http, "/ch1/index.m3u8");
  CHECK(to_b.status == 302);
  CHECK(to_b.headers["Location"].find(k.b.http) != std::string::npos);
  REQUIRE(Http("PATCH", k.central.http, "/central/api-v4/streamers/node-a",
               R"({"cdn": {"playback_session_limit": null}})")
              .status == 200);

  // CS-4: drain B: last in every answer, for its own viewers too; no new viewer sent there.
  auto drain =
      Http("PATCH", k.central.http, "/central/api-v4/streamers/node-b", R"({"drain": true})");
  INFO(drain.body);
  REQUIRE(drain.status == 200);
  REQUIRE(Eventually(
      [&] {
        auto m = Steer(k.central, "?_HLS_pathway=node-b");
        return m["PATHWAY-PRIORITY"].size() == 2 && m["PATHWAY-PRIORITY"][0] == "node-a" &&
               m["PATHWAY-PRIORITY"][1] == "node-b";
      },
      5s));
  for (int i = 0; i < 4; ++i) {
    auto r = Http("GET", k.central.http, "/ch1/index.m3u8");
    CHECK(r.status == 302);
    CHECK(r.headers["Location"].find(k.a.http) != std::string::npos);
  }
  // Both drained: they still serve, so both are listed (never an empty priority).
  REQUIRE(Http("PATCH", k.central.http, "/central/api-v4/streamers/node-a", R"({"drain": true})")
              .status == 200);
  REQUIRE(Eventually(
      [&] {
        auto r = Http("GET", k.central.http, "/steering/ch1");
        return r.status == 200 && r.Json()["PATHWAY-PRIORITY"].size() == 2 &&
               Http("GET", k.central.http, "/ch1/index.m3u8").status == 503;
      },
      5s));

  // CS-1: the cluster-wide default in /config steers a stream without its own member; with
  // neither, the master has no pathways.
  auto stream = Http("GET", k.central.http, "/central/api-v4/streams/ch1").Json();
  stream.erase("steering");
  REQUIRE(Http("PUT", k.central.http, "/central/api-v4/streams/ch1", stream.dump()).status == 200);
  REQUIRE(Eventually(
      [&] {
        return Http("GET", k.a.http, "/ch1/index.m3u8").body.find("PATHWAY-ID") ==
               std::string::npos;
      },
      10s));
  auto cluster = Http("PATCH", k.central.http, "/central/api-v4/config",
                      R"({"steering": {"enabled": true, "ttl_s": 5}})");
  INFO(cluster.body);
  REQUIRE(cluster.status == 200);
  CHECK(cluster.Json()["steering"]["ttl_s"] == 5);
  REQUIRE(Eventually(
      [&] {
        return Http("GET", k.a.http, "/ch1/index.m3u8").body.find("PATHWAY-ID=\"node-b\"") !=
               std::string::npos;
      },
      10s));
  CHECK(Http("PATCH", k.central.http, "/central/api-v4/config", R"({"steering": {"ttl_s": 0}})")
            .status == 400);

  // 410 for a stream the cluster does not know; a bad pathway id is ignored, not echoed.
  auto unknown = Http("GET", k.central.http, "/steering/nope");
  CHECK(unknown.status == 410);
  auto odd = Http("GET", k.central.http, "/steering/ch1?_HLS_pathway=%3Cscript%3E");
  CHECK(odd.status == 200);
  CHECK(odd.body.find("script") == std::string::npos);
}

TEST_CASE(
    "CS-2 CS-5 the steering server: 429 with Retry-After beyond its answer budget, h2c "
    "and HTTP/1.1") {
  Central central = StartCentral(MakeTempDir("steering-limits"), "127.0.0.1:0", "127.0.0.1:0",
                                 {"--steering-max-answers-per-s=5"});
  auto put = Http("PUT", central.http, "/central/api-v4/streams/ch1",
                  R"({"placement": {"streamers": []}, "steering": {"enabled": true}})");
  REQUIRE((put.status == 200 || put.status == 201));
  // No node serves it: 503 with Retry-After (the player keeps its pathway and asks again).
  auto none = Http("GET", central.http, "/steering/ch1");
  CHECK(none.status == 503);
  CHECK(none.headers["Retry-After"] == "10");
  // Over HTTP/2 (prior knowledge) as over HTTP/1.1.
  auto [rc, out] = RunCommand(
      "curl -s -o /dev/null -w '%{http_version} %{http_code}' "
      "--http2-prior-knowledge http://" +
      central.http + "/steering/nope");
  CHECK(out == "2 410");
  // Beyond five answers in a second: 429 + Retry-After, counted as overload.
  int refused = 0;
  for (int i = 0; i < 20; ++i) {
    auto r = Http("GET", central.http, "/steering/ch1");
    if (r.status == 429) {
      ++refused;
      CHECK(r.headers["Retry-After"] == "1");
    }
  }
  CHECK(refused >= 5);
  CHECK(MetricAt(central.http, "meshwork_steering_answers_total", "result=\"overload\"") >=
        refused);

  // R-3: one client address has its own share of the budget: beyond it that client gets 429,
  // and another address is still answered.
  Central shared = StartCentral(MakeTempDir("steering-per-client"), "127.0.0.1:0", "127.0.0.1:0",
                                {"--steering-max-answers-per-client-per-s=3"});
  REQUIRE(Http("PUT", shared.http, "/central/api-v4/streams/ch1",
               R"({"placement": {"streamers": []}, "steering": {"enabled": true}})")
              .status == 201);
  int greedy_refused = 0;
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < 10; ++i) {
    greedy_refused += Http("GET", shared.http, "/steering/ch1").status == 429;
  }
  // At most 3 answers in each second the requests spanned.
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started)
          .count() +
      2;
  CHECK(10 - greedy_refused <= 3 * seconds);
  CHECK(greedy_refused > 0);
  CHECK(MetricAt(shared.http, "meshwork_steering_answers_total", "result=\"client_overload\"") ==
        greedy_refused);
  auto [other_rc, other] =
      RunCommand("curl -s -o /dev/null -w '%{http_code}' --interface 127.0.0.2 http://" +
                 shared.http + "/steering/ch1");
  CHECK(other == "503");  // answered (no node serves ch1), not refused
}

// CS-4 with a real player: it plays from node A, A is drained, and B counts its session
// within the steering TTL and one target duration, with no stall over 0.5 s and no fatal
// error. Returns the player's result.
nlohmann::json DrainUnderPlayer(const std::string& what, const std::string& path,
                                const std::string& flags) {
  SteeredCluster k;
  StartSteered(k);
  // The set-up's own requests to A and B were play sessions there for a few seconds: let them
  // lapse before the player starts, so that neither counts as the player's (A's would start
  // the drain early, B's would pass for a move), and so that the wait does not eat the
  // playback the move needs. Nodes report each second: first let B's show, then see both go.
  (void)Eventually([&] { return Watching(k.central, "node-b"); }, 3s);
  REQUIRE(Eventually(
      [&] { return !Watching(k.central, "node-a") && !Watching(k.central, "node-b"); }, 15s));
  // 16 s of playback: the drain comes ~5 s in, and the move takes up to the TTL and a target
  // duration more. A player that keeps ~5 s of buffer (Shaka at the DASH live edge) asks for
  // its next segment ~5 s ahead of the playhead, so with 10 s it could finish without one
  // more fetch after the steering answer changed (a CI run saw exactly that).
  auto playing = std::async(std::launch::async, [&] {
    return PlayInBrowser("http://" + k.a.http + path, 16, "--timeout-s 80 " + flags);
  });
  REQUIRE(Eventually([&] { return Watching(k.central, "node-a"); }, 30s));
  std::this_thread::sleep_for(4s);      // steady playback on A
  if (Watching(k.central, "node-b")) {  // nothing has moved the player yet
    INFO("player: " << playing.get().dump());
    FAIL("node B counts a play session before the drain");
  }
  auto drained_at = std::chrono::steady_clock::now();
  const auto drained_wall = std::chrono::system_clock::now();
  REQUIRE(Http("PATCH", k.central.http, "/central/api-v4/streamers/node-a", R"({"drain": true})")
              .status == 200);
  // B counts a play session from the player's first request there, a segment for a DASH
  // player (which keeps reloading its MPD from A); reported each second.
  bool moved = Eventually([&] { return Watching(k.central, "node-b"); }, 20s);
  INFO("steering answers at central: " << MetricAt(
           k.central.http, "meshwork_steering_answers_total", "result=\"ok\""));
  if (!moved) {
    // What the player did (its fetches, steering answers, events) names why it did not move.
    INFO("player: " << playing.get().dump());
    REQUIRE(moved);
  }
  const double moved_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - drained_at).count();
  auto result = playing.get();
  INFO(result.dump());
  CHECK(result["ok"] == true);
  for (const auto& e : result["errors"]) CHECK(e["fatal"] == false);
  // The move is under test; a stall while the player joined the live edge is the start-up's.
  const double stall = MaxStallSince(result, drained_wall);
  REQUIRE(stall >= 0);
  WARN("CS-4 " << what << " " << result["player_version"] << ": on node B " << moved_s
               << " s after the drain; max stall " << stall
               << " s (start-up included: " << result["max_stall_s"] << " s)");
  CHECK(stall <= 0.5);
  CHECK(moved_s <= kTtlS + 2 + 1);  // TTL + one target duration + the report's second
  auto hosts = result["frag_hosts"];
  REQUIRE(hosts.size() >= 2);
  CHECK(hosts.front() == k.a.http);
  CHECK(hosts.back() == k.b.http);
  return result;
}

TEST_CASE("CS-4 hls.js moves off a drained node within the TTL and a target duration, no stall") {
  DrainUnderPlayer("hls.js", "/ch1/index.m3u8", "");
}

TEST_CASE("CS-4 S-17 dash.js 5 moves off a drained node by its BaseURLs and steering") {
  auto result = DrainUnderPlayer("dash.js", "/ch1/index.mpd", "--player dash");
  CHECK(result["player_version"].get<std::string>().rfind("5.", 0) == 0);
}

TEST_CASE("CS-4 S-17 Shaka moves off a drained node by its BaseURLs and steering") {
  DrainUnderPlayer("Shaka", "/ch1/index.mpd", "--player shaka");
}

// A player started on node A, A killed under it after steady playback: the result, checked to
// have played through with no fatal error, fetching from A first and from B last (printed
// with `what`), with "stall_after_failure_s": its longest stall from the kill on.
// `whichever`: the node killed is the one the player last fetched an object from before the
// kill (a DASH player picks among the MPD's BaseURLs itself, and Shaka may
// take B's from the start when the steering's first answer names B); otherwise A. The player
// must have fetched from it and end on the other.
nlohmann::json KillUnderPlayer(SteeredCluster& k, const std::string& path, const std::string& flags,
                               const std::string& what, bool whichever = false) {
  // 16 s of playback: the kill comes ~5 s in, and a player that keeps ~5 s of buffer (Shaka
  // at the DASH live edge) could otherwise finish 10 s without one more fetch, from anywhere.
  auto playing = std::async(std::launch::async, [&] {
    return PlayInBrowser("http://" + k.a.http + path, 16, flags + " --timeout-s 80");
  });
  REQUIRE(Eventually([&] { return Watching(k.central, "node-a"); }, 30s));
  // Object reads (parts, segments, init; not playlists or MPDs) on each node.
  auto reads = [](const Streamer& s) {
    return MetricAt(s.http, "meshwork_origin_index_lookups_total");
  };
  // 4 s of steady playback, watching which node the player last read an object from (a
  // player ahead by a segment or more reads only every few seconds).
  Streamer* victim = &k.a;
  Streamer* other = &k.b;
  double a_reads = reads(k.a), b_reads = reads(k.b);
  for (auto until = std::chrono::steady_clock::now() + 4s;
       std::chrono::steady_clock::now() < until;) {
    std::this_thread::sleep_for(200ms);
    const double a_now = reads(k.a), b_now = reads(k.b);
    if (whichever && (a_now > a_reads || b_now > b_reads)) {
      const bool on_b = b_now > b_reads && a_now == a_reads;
      victim = on_b ? &k.b : &k.a;
      other = on_b ? &k.a : &k.b;
    }
    a_reads = a_now;
    b_reads = b_now;
  }
  INFO("killed " << victim->http);
  const auto failed_at = std::chrono::system_clock::now();
  victim->process->Signal(SIGKILL);
  victim->process->Wait();
  auto result = playing.get();
  result["stall_after_failure_s"] = MaxStallSince(result, failed_at);
  INFO(result.dump());
  CHECK(result["ok"] == true);
  for (const auto& e : result["errors"]) CHECK(e["fatal"] == false);
  auto hosts = result["frag_hosts"];
  REQUIRE(hosts.size() >= 2);
  CHECK(std::find(hosts.begin(), hosts.end(), victim->http) != hosts.end());
  CHECK(hosts.back() == other->http);
  REQUIRE(result["stall_after_failure_s"].get<double>() >= 0);
  WARN(what << " " << result["player_version"] << " after kill -9 of its node: max stall "
            << result["stall_after_failure_s"] << " s (start-up included: " << result["max_stall_s"]
            << " s)");
  return result;
}

// S-17 with steering: a DASH player's node killed under it, the player carries on from the
// other pathway (its BaseURLs, and its MPD reloads by the Locations the steering orders).
void DashContinuesOnKill(const char* what, const std::string& flags) {
  SteeredCluster k;
  StartSteered(k);
  KillUnderPlayer(k, "/ch1/index.mpd", flags, std::string("S-17 ") + what, /*whichever=*/true);
}

// These bound no stall (printed only): two slots (tests/CMakeLists.txt).
TEST_CASE("S-17 CS-1 dash.js 5 moves to the other BaseURL when its node is killed", "[2slots]") {
  DashContinuesOnKill("dash.js", "--player dash");
}

TEST_CASE("S-17 CS-1 Shaka moves to the other BaseURL when its node is killed", "[2slots]") {
  DashContinuesOnKill("Shaka", "--player shaka");
}

TEST_CASE("CS-4 video.js moves off a drained node by its pathways") {
  auto result = DrainUnderPlayer("video.js", "/ch1/index.m3u8", "--player videojs");
  CHECK(result["player_version"].get<std::string>().rfind("8.", 0) == 0);
}

// CS-1: the fourth player of spec 10's list, its node killed under it: it carries on from the
// other pathway of the master (no stall bound: printed only, like the DASH players').
TEST_CASE("CS-1 video.js continues on the other pathway when its node is killed", "[2slots]") {
  SteeredCluster k;
  StartSteered(k);
  auto result = KillUnderPlayer(k, "/ch1/index.m3u8", "--player videojs", "CS-1 video.js");
  CHECK(result["player_version"].get<std::string>().rfind("8.", 0) == 0);
}

TEST_CASE(
    "CS-2 Z-6 an office's only node killed under hls.js: it continues on the fallback zone's "
    "node by its pathway") {
  SteeredCluster k;
  StartSteered(k);
  // A is the office's node (the office's routes cover this client), B the fallback zone's.
  auto put = [&](const std::string& path, const std::string& body) {
    auto r = Http("PUT", k.central.http, "/central/api-v4/" + path, body);
    INFO(path << ": " << r.body);
    REQUIRE((r.status == 200 || r.status == 201));
  };
  put("zones/hq", R"({"routes": []})");
  put("zones/office", R"({"routes": ["127.0.0.0/8", "::1/128"], "fallback_zone": "hq"})");
  for (auto [node, zone] : {std::pair{"node-a", "office"}, std::pair{"node-b", "hq"}}) {
    auto r = Http("PATCH", k.central.http, std::string("/central/api-v4/streamers/") + node,
                  std::string(R"({"zone": ")") + zone + "\"}");
    REQUIRE(r.status == 200);
  }
  // The office first for its viewer, even with B less loaded (a better zone wins, CS-2).
  REQUIRE(Eventually(
      [&] {
        auto m = Steer(k.central, "?_HLS_pathway=node-b");
        return m["PATHWAY-PRIORITY"] == nlohmann::json::array({"node-a", "node-b"});
      },
      5s));

  {
    auto result =
        KillUnderPlayer(k, "/ch1/index.m3u8", "--ott", "CS-2 Z-6 hls.js, the office's node");
    CHECK(result["stall_after_failure_s"].get<double>() <= 0.5);
    // Steering now names only the fallback zone's node (the office's is offline).
    REQUIRE(Eventually(
        [&] {
          return Steer(k.central, "")["PATHWAY-PRIORITY"] == nlohmann::json::array({"node-b"});
        },
        15s));
  }
}

}  // namespace
}  // namespace steering_test
}  // namespace meshwork::testing
