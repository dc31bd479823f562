// OTT redundancy with real processes and a real player (O-3, O-3a, O-6, O-7, O-16, P-8):
// three ingest streamers fed the same ffmpeg source form group ch1; hls.js in Chromium plays
// from one node while it is killed, then from another while its source input is paused; a
// new viewer of the paused node is redirected; a backup at its session limit answers 429.
#include <catch2/catch.hpp>
#include <csignal>
#include <future>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "common/crypto/jwt.h"
#include "tests/integration/black_hole.h"
#include "tests/integration/media_harness.h"

namespace meshwork::testing {
namespace {

constexpr char kBrowser[] =
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 "
    "Safari/537.36";

int Variants(const std::string& master) {
  int n = 0;
  for (size_t at = master.find("#EXT-X-STREAM-INF"); at != std::string::npos;
       at = master.find("#EXT-X-STREAM-INF", at + 1)) {
    ++n;
  }
  return n;
}

// The node reports at least one play session (a player has started on it).
bool Watching(const Central& central, const std::string& node) {
  auto r = Http("GET", central.http, "/central/api-v4/streamers/" + node).Json();
  return r.is_object() && r["status"]["report"].value("play_sessions", 0) >= 1;
}

std::string Host(const std::string& address) { return address; }  // "127.0.0.1:PORT"

// P-8 (a): the player played through, fetched from `from` first and from another node last,
// and never stalled more than 0.5 s from `failed_at` on (printed with `what`; a stall while
// hls.js joined the live edge is the start-up's, printed beside it).
void CheckMovedWithoutStall(const nlohmann::json& result, const std::string& from, const char* what,
                            std::chrono::system_clock::time_point failed_at) {
  INFO(result.dump());
  CHECK(result["ok"] == true);
  for (const auto& e : result["errors"]) CHECK(e["fatal"] == false);
  auto hosts = result["frag_hosts"];
  REQUIRE(hosts.size() >= 2);
  CHECK(hosts.front() == Host(from));
  CHECK(hosts.back() != Host(from));
  const double stall = MaxStallSince(result, failed_at);
  WARN(what << ": max stall " << stall
            << " s (the whole run's, start-up included: " << result["max_stall_s"] << " s)");
  REQUIRE(stall >= 0);
  CHECK(stall <= 0.5);
}

// Three ingest nodes with stream ch1 in OTT group ch1, each fed the same source, every
// member eligible and node A's master listing two backups for a browser.
struct OttCluster {
  Central central;
  Streamer a, b, c;
  std::unique_ptr<Process> push_a, push_b, push_c;
};

void StartOttCluster(OttCluster& k) {
  auto dir = MakeTempDir("ott-e2e");
  k.central = StartCentral(dir);
  k.a = StartIngestWithStream(k.central, "node-a", "ch1");
  k.b = StartIngestWithStream(k.central, "node-b", "ch1");
  k.c = StartIngestWithStream(k.central, "node-c", "ch1");
  auto stream = Http("GET", k.central.http, "/central/api-v4/streams/ch1").Json();
  stream["ott"] = {{"enabled", true}, {"group", "ch1"}};
  auto put = Http("PUT", k.central.http, "/central/api-v4/streams/ch1", stream.dump());
  INFO(put.body);
  REQUIRE(put.status == 200);
  const std::string& source = SourceTs(120);
  k.push_a = PushFile(source, k.a.publish, "ch1");
  k.push_b = PushFile(source, k.b.publish, "ch1");
  k.push_c = PushFile(source, k.c.publish, "ch1");
  REQUIRE(Eventually(
      [&] {
        auto g = Http("GET", k.central.http, "/central/api-v4/ott-groups/ch1").Json();
        if (!g.is_object() || !g["members"].is_array() || g["members"].size() != 3) return false;
        for (const auto& m : g["members"]) {
          if (m["eligible"] != true) return false;
        }
        return true;
      },
      40s));
  REQUIRE(Eventually(
      [&] {
        auto m = Http("GET", k.a.http, "/ch1/index.m3u8", "", {{"User-Agent", kBrowser}});
        return m.status == 200 && Variants(m.body) == 3;
      },
      10s));
}

TEST_CASE("O-3 O-3a O-6 O-16 P-8 hls.js moves to a backup when its node dies or its input stops") {
  OttCluster k;
  StartOttCluster(k);
  Central& central = k.central;
  Streamer& a = k.a;
  Streamer& b = k.b;
  auto& push_b = k.push_b;
  Streamer& c = k.c;
  // Players that do not switch get no backups (O-20).
  auto vlc =
      Http("GET", a.http, "/ch1/index.m3u8", "", {{"User-Agent", "VLC/3.0.18 LibVLC/3.0.18"}});
  CHECK(Variants(vlc.body) == 1);
  // S-17: a DASH player's MPD lists the members as BaseURLs (this node first) and the MPD at
  // each of them as Locations; not for a player that does not switch.
  auto mpd = Http("GET", a.http, "/ch1/index.mpd", "", {{"User-Agent", kBrowser}});
  INFO(mpd.body);
  CHECK(mpd.body.find("<BaseURL serviceLocation=\"node-a\" dvb:priority=\"1\" dvb:weight=\"1\">"
                      "http://" +
                      a.http + "/ch1/</BaseURL>") != std::string::npos);
  for (const Streamer* s : {&b, &c}) {
    CHECK(mpd.body.find(">http://" + s->http + "/ch1/</BaseURL>") != std::string::npos);
    CHECK(mpd.body.find(">http://" + s->http + "/ch1/index.mpd</Location>") != std::string::npos);
  }
  CHECK(Http("GET", a.http, "/ch1/index.mpd", "", {{"User-Agent", "VLC/3.0.18"}})
            .body.find("<BaseURL") == std::string::npos);

  SECTION("kill -9 of the node under a playing viewer") {
    // The VLC request above is a play session on A for two target durations: let it lapse,
    // so that "watching" below means the browser's player.
    REQUIRE(Eventually([&] { return !Watching(central, "node-a"); }, 15s));
    auto playing = std::async(std::launch::async, [&] {
      return PlayInBrowser("http://" + a.http + "/ch1/index.m3u8", 18, "--ott --timeout-s 80");
    });
    REQUIRE(Eventually([&] { return Watching(central, "node-a"); }, 30s));
    // Let the player settle into steady playback on A: the kill mid-playback is under test.
    std::this_thread::sleep_for(6s);
    const auto failed_at = std::chrono::system_clock::now();
    a.process->Signal(SIGKILL);
    a.process->Wait();
    CheckMovedWithoutStall(playing.get(), a.http, "P-8 (a) after kill -9 of the serving node",
                           failed_at);
  }

  SECTION("the source input of the node stops under a playing viewer") {
    auto playing = std::async(std::launch::async, [&] {
      return PlayInBrowser("http://" + b.http + "/ch1/index.m3u8", 18, "--ott --timeout-s 80");
    });
    REQUIRE(Eventually([&] { return Watching(central, "node-b"); }, 30s));
    std::this_thread::sleep_for(6s);  // steady playback on B before its input stops
    push_b->Signal(SIGKILL);
    push_b->Wait();
    auto result = playing.get();
    INFO(result.dump());
    CHECK(result["ok"] == true);
    for (const auto& e : result["errors"]) CHECK(e["fatal"] == false);
    auto hosts = result["frag_hosts"];
    REQUIRE(hosts.size() >= 2);
    CHECK(hosts.back() != Host(b.http));
    WARN("P-8 (b) max stall after the input of the serving node stopped: " << result["max_stall_s"]
                                                                           << " s");
    REQUIRE(result["max_stall_s"].is_number());
    CHECK(result["max_stall_s"].get<double>() <= 2.0);  // P-8 (b)

    // O-3: a new viewer of B (not working now) is sent to a working member with a pass.
    auto start = std::chrono::steady_clock::now();
    auto opened = Http("GET", b.http, "/ch1/index.m3u8", "", {{"User-Agent", kBrowser}});
    double redirect_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    REQUIRE(opened.status == 302);
    std::string location = opened.headers["Location"];
    CHECK(location.find("pass=") != std::string::npos);
    CHECK(location.find(b.http) == std::string::npos);
    WARN("P-8 redirect of a new viewer answered in " << redirect_ms << " ms");
    CHECK(redirect_ms <= 100);  // P-8

    // O-16: a backup at its session limit refuses viewers from other nodes with 429 and keeps
    // serving its own.
    std::smatch m;
    REQUIRE(
        std::regex_search(location, m, std::regex("^http://([^/]+)/ch1/index.m3u8\\?pass=(.+)$")));
    std::string target = m[1];
    std::string target_id = target == a.http ? "node-a" : target == c.http ? "node-c" : "node-b";
    REQUIRE(Http("PATCH", central.http, "/central/api-v4/streamers/" + target_id,
                 R"({"backup_session_limit": 0})")
                .status == 200);
    // Each try is another new viewer: one admitted before the limit reached the node is known
    // there from then on (and rightly kept), so asking again as the same viewer would never
    // see the refusal.
    int attempt = 0;
    CHECK(Eventually(
        [&] {
          auto r = Http("GET", target, "/ch1/v1/index.m3u8?pass=" + m[2].str(), "",
                        {{"User-Agent", "refused-viewer-" + std::to_string(++attempt)}});
          return r.status == 429 && !r.headers["Retry-After"].empty();
        },
        5s));
    CHECK(Http("GET", target, "/ch1/v1/index.m3u8", "", {{"User-Agent", kBrowser}}).status == 200);
    // A forged pass: 403 naming the reason.
    auto forged = Http("GET", target, "/ch1/v1/index.m3u8?pass=AAAA.BBBB");
    CHECK(forged.status == 403);
    CHECK(forged.body.find("pass") != std::string::npos);
  }
  SECTION("both backups refuse: the viewer loses the stream when its node dies") {
    auto playing = std::async(std::launch::async, [&] {
      return PlayInBrowser("http://" + a.http + "/ch1/index.m3u8", 40, "--ott --timeout-s 60");
    });
    REQUIRE(Eventually([&] { return Watching(central, "node-a"); }, 30s));
    std::this_thread::sleep_for(6s);  // steady playback on A, as above
    // The player holds A's master with B and C as backups; now both reach their limit.
    for (const char* id : {"node-b", "node-c"}) {
      REQUIRE(Http("PATCH", central.http, std::string("/central/api-v4/streamers/") + id,
                   R"({"backup_session_limit": 0})")
                  .status == 200);
    }
    // The limits reach B and C over their sessions: each refuses the backup URIs A's master
    // lists (429) before A dies — waited for, not slept on (a loaded run takes longer).
    auto master = Http("GET", a.http, "/ch1/index.m3u8", "", {{"User-Agent", kBrowser}});
    std::set<std::string> backups;
    static const std::regex kBackup("http://([^/\n]+)(/ch1/[^\n]*pass=[^\n]+)");
    for (auto it = std::sregex_iterator(master.body.begin(), master.body.end(), kBackup);
         it != std::sregex_iterator(); ++it) {
      if ((*it)[1] != a.http) backups.insert((*it)[1].str() + " " + (*it)[2].str());
    }
    INFO(master.body);
    REQUIRE(backups.size() == 2);
    for (const auto& backup : backups) {
      const std::string host = backup.substr(0, backup.find(' '));
      const std::string target = backup.substr(backup.find(' ') + 1);
      int attempt = 0;  // a new viewer each try, as above
      CHECK(Eventually(
          [&] {
            return Http("GET", host, target, "",
                        {{"User-Agent", "refused-viewer-" + std::to_string(++attempt)}})
                       .status == 429;
          },
          10s));
    }
    a.process->Signal(SIGKILL);
    a.process->Wait();
    auto result = playing.get();
    INFO(result.dump());
    CHECK(result["ok"] == false);
    bool refused = false;
    for (const auto& e : result["errors"]) refused |= e.value("http_code", 0) == 429;
    CHECK(refused);
    // The refusals are reported to central (alert 79's input; its 30 s rule is unit-tested).
    CHECK(Eventually(
        [&] {
          uint64_t total = 0;
          for (const char* id : {"node-b", "node-c"}) {
            auto r =
                Http("GET", central.http, std::string("/central/api-v4/streamers/") + id).Json();
            total += r["status"]["report"].value("refusals", 0);
          }
          return total > 0;
        },
        5s));
  }
}

// Alone: with three slots (the file's) it passed 0.5 s twice beside load, both times 1.75 s —
// beside a two-slot player test, and (2026-12-05) beside a light test encoding its source.
// A black hole is noticed only after O-21's first-byte timeout (one target duration), so the
// stall is zero only while the player holds more than that; a loaded node publishes late and
// the player's buffer runs thin (0.3 s left when the playlist request went unanswered).
TEST_CASE("R-9 P-8 the node under an hls.js viewer black-holed: it moves to a backup, no stall",
          "[alone]") {
  std::string why;
  REQUIRE(EnterOwnNetwork(&why));  // before any process: they all live in the namespace
  OttCluster k;
  StartOttCluster(k);
  REQUIRE(Eventually([&] { return !Watching(k.central, "node-a"); }, 15s));  // the probe lapsed
  auto playing = std::async(std::launch::async, [&] {
    return PlayInBrowser("http://" + k.a.http + "/ch1/index.m3u8", 18, "--ott --timeout-s 80");
  });
  REQUIRE(Eventually([&] { return Watching(k.central, "node-a"); }, 30s));
  std::this_thread::sleep_for(6s);  // steady playback on A, as in the kill -9 case
  // A's viewer listener goes silent: no reset, no refusal; its requests just never return.
  // Central still sees A (the control channel is another port), so only the player can tell.
  const auto failed_at = std::chrono::system_clock::now();
  BlackHole(PortOf(k.a.http));
  CheckMovedWithoutStall(playing.get(), k.a.http, "R-9 after the serving node was black-holed",
                         failed_at);
}

constexpr char kAccessSecretB64[] = "bWVzaHdvcmstb3R0LWFjY2Vzcy10ZXN0LXNlY3JldC0zMmI";
constexpr char kAccessSecret[] = "meshwork-ott-access-test-secret-32b";

// A token for stream ch1 and `login`, valid ten minutes.
std::string OttToken(const std::string& login) {
  auto exp = std::chrono::duration_cast<std::chrono::seconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count() +
             600;
  return crypto::SignJwtHs256(
      nlohmann::json{{"exp", exp}, {"sub", login}, {"streams", {"ch1"}}}.dump(), "k1",
      kAccessSecret);
}

// Protects stream ch1 of the OTT group (spec 09): HS256 key k1, `max_sessions_per_login` 2.
void ProtectOttStream(OttCluster& k) {
  REQUIRE(Http("PUT", k.central.http, "/central/api-v4/access-keys/k1",
               nlohmann::json{{"alg", "HS256"}, {"secret", kAccessSecretB64}}.dump())
              .status == 201);
  auto patch = Http("PATCH", k.central.http, "/central/api-v4/streams/ch1",
                    R"({"access": {"mode": "token", "max_sessions_per_login": 2}})");
  INFO(patch.body);
  REQUIRE(patch.status == 200);
  for (const Streamer* node : {&k.a, &k.b, &k.c}) {
    REQUIRE(
        Eventually([&] { return Http("GET", node->http, "/ch1/index.m3u8").status == 401; }, 10s));
  }
}

// The nodes central's session list shows `login` on.
std::set<std::string> NodesOf(const Central& central, const std::string& login) {
  std::set<std::string> nodes;
  auto list = Http("GET", central.http, "/central/api-v4/sessions?stream=ch1&login=" + login);
  if (list.status != 200) return nodes;
  const auto body = list.Json();
  for (const auto& s : body["sessions"]) nodes.insert(s["node"].get<std::string>());
  return nodes;
}

TEST_CASE(
    "O-5 A-8 a login holds max_sessions on each member of an OTT group, and a token-holding "
    "hls.js viewer moves to a backup on kill -9, counted under its login there",
    "[2slots]") {
  OttCluster k;
  StartOttCluster(k);
  ProtectOttStream(k);
  const std::string family = OttToken("family-3");
  // O-5: two sessions of one login on each of B and C, the third refused on each.
  for (const Streamer* node : {&k.b, &k.c}) {
    INFO(node->http);
    for (const char* agent : {"tv", "phone"}) {
      CHECK(Http("GET", node->http, "/ch1/index.m3u8?token=" + family, "", {{"User-Agent", agent}})
                .status == 200);
    }
    auto third =
        Http("GET", node->http, "/ch1/index.m3u8?token=" + family, "", {{"User-Agent", "tablet"}});
    CHECK(third.status == 403);
    CHECK(third.Json()["error"]["reason"] == "session_limit");
  }
  // The token's login plays from A, which is killed under it.
  const std::string token = OttToken("subscriber-7");
  REQUIRE(Eventually([&] { return !Watching(k.central, "node-a"); }, 15s));
  auto playing = std::async(std::launch::async, [&] {
    return PlayInBrowser("http://" + k.a.http + "/ch1/index.m3u8?token=" + token, 24,
                         "--ott --timeout-s 80");
  });
  REQUIRE(Eventually([&] { return NodesOf(k.central, "subscriber-7").count("node-a") == 1; }, 30s));
  std::this_thread::sleep_for(6s);  // steady playback on A
  const auto failed_at = std::chrono::system_clock::now();
  k.a.process->Signal(SIGKILL);
  k.a.process->Wait();
  // On the backup, the viewer is counted under its login (A-8).
  CHECK(Eventually(
      [&] {
        auto nodes = NodesOf(k.central, "subscriber-7");
        return nodes.count("node-b") + nodes.count("node-c") == 1;
      },
      15s));
  CheckMovedWithoutStall(playing.get(), k.a.http, "O-5 after kill -9 under a token holder",
                         failed_at);
}

// How much slower the binaries answer in this build: ASan's checks make 300 viewers' requests
// take several times longer, which a viewer's deadline must not mistake for a dead node.
#if defined(__SANITIZE_ADDRESS__)
constexpr int kSlowdown = 4;
#else
constexpr int kSlowdown = 1;
#endif

// A simulated player (R-6): opens a node's master playlist as a browser, then reloads its
// current variant's media playlist and fetches its newest segment about once a second;
// on any failure (refused connection, 4xx, 5xx) it moves to the next variant, as hls.js does
// with redundant variants.
class SimViewer {
 public:
  SimViewer(std::string node, int id) : node_(std::move(node)), id_(id) {}

  void Run(std::chrono::steady_clock::time_point until) {
    auto master = Http("GET", node_, "/ch1/index.m3u8", "",
                       {{"User-Agent", std::string(kBrowser) + " sim/" + std::to_string(id_)}});
    if (master.status != 200) return fail("master " + std::to_string(master.status));
    std::istringstream in(master.body);
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      if (line.rfind("http://", 0) == 0) {
        size_t slash = line.find('/', 7);
        variants_.push_back({line.substr(7, slash - 7), line.substr(slash)});
      } else {
        variants_.push_back({node_, "/ch1/" + line});
      }
    }
    while (std::chrono::steady_clock::now() < until) {
      if (current_ >= variants_.size()) return fail("no variant left");
      const auto& [host, path] = variants_[current_];
      auto playlist = Http("GET", host, path, "", {}, 2s * kSlowdown);
      std::string segment;
      std::istringstream lines(playlist.body);
      for (std::string line; std::getline(lines, line);) {
        if (!line.empty() && line[0] != '#') segment = line;
      }
      std::string dir = path.substr(0, path.rfind('/') + 1);
      bool ok = playlist.status == 200 && !segment.empty() &&
                Http("GET", host, dir + segment, "", {}, 4s * kSlowdown).status == 200;
      if (!ok) {
        ++current_;  // the next variant, at once
        continue;
      }
      serving_ = host;
      std::this_thread::sleep_for(1s);  // a player's reload pace
    }
  }
  const std::string& serving() const { return serving_; }
  const std::string& error() const { return error_; }

 private:
  void fail(std::string why) { error_ = std::move(why); }
  std::string node_;
  int id_;
  std::vector<std::pair<std::string, std::string>> variants_;
  size_t current_ = 0;
  std::string serving_;
  std::string error_;
};

TEST_CASE("R-6 one of three nodes killed under 300 simulated viewers: all continue, split evenly") {
  OttCluster k;
  StartOttCluster(k);
  std::vector<std::string> nodes = {k.a.http, k.b.http, k.c.http};
  std::vector<std::unique_ptr<SimViewer>> viewers;
  for (int i = 0; i < 300; ++i) viewers.push_back(std::make_unique<SimViewer>(nodes[i % 3], i));
  auto until = std::chrono::steady_clock::now() + 25s;
  std::vector<std::thread> threads;
  for (auto& v : viewers) threads.emplace_back([&v, until] { v->Run(until); });
  // Every viewer playing from its own node before the kill.
  REQUIRE(Eventually(
      [&] {
        return std::all_of(viewers.begin(), viewers.end(),
                           [](const auto& v) { return !v->serving().empty(); });
      },
      15s));
  k.a.process->Signal(SIGKILL);
  k.a.process->Wait();
  for (auto& t : threads) t.join();
  std::map<std::string, int> moved;  // where A's viewers went
  for (int i = 0; i < 300; ++i) {
    INFO("viewer " << i << ": " << viewers[i]->error());
    CHECK(viewers[i]->error().empty());
    CHECK(viewers[i]->serving() != k.a.http);
    if (i % 3 == 0) ++moved[viewers[i]->serving()];
  }
  WARN("R-6: A's viewers now on B: " << moved[k.b.http] << ", on C: " << moved[k.c.http]);
  CHECK(moved[k.b.http] + moved[k.c.http] == 100);
  CHECK(std::abs(moved[k.b.http] - 50) <= 5);  // ±10 % of an even split
  CHECK(std::abs(moved[k.c.http] - 50) <= 5);
}

}  // namespace
}  // namespace meshwork::testing
