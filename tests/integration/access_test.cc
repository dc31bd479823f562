// Viewer access (spec 09: A-1…A-5, A-10) with real processes: central, an ingest node
// packaging an ffmpeg push of a token-protected stream, an edge relaying it; curl-like
// requests, ffprobe following the URIs, hls.js and dash.js 5 in Chromium.
#include <catch2/catch.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/crypto/jwt.h"
#include "tests/integration/harness.h"
#include "tests/integration/media_harness.h"
#include "tests/integration/viewer_tokens.h"
#include "tests/test_paths.h"

// A namespace of its own: integration tests compile in batches.
namespace meshwork::testing::access_test {

constexpr const char* kSecretB64 = kTestTokenSecretB64;
constexpr const char* kSecret = kTestTokenSecret;
int64_t NowS() { return UnixNowS(); }

// A token for `claims` (JSON members after exp), valid for ten minutes unless exp is given.
std::string Token(const std::string& claims = "", int64_t exp = 0, const std::string& kid = "k1") {
  if (exp == 0) exp = NowS() + 600;
  std::string payload = absl::StrCat(R"({"exp":)", exp, R"(,"sub":"alice")", claims, "}");
  return crypto::SignJwtHs256(payload, kid, kSecret);
}

std::vector<std::pair<std::string, std::string>> ClusterBearer() {
  return {{"Authorization", "Bearer " + ClusterToken()}};
}

// Every URI a playlist or MPD names: lines that are not tags, URI="…" attributes,
// initialization="…", media="…" and sourceURL="…".
std::vector<std::string> UrisOf(const std::string& text) {
  std::vector<std::string> uris;
  static const std::regex kAttr("(URI|initialization|media|sourceURL)=\"([^\"]+)\"");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kAttr);
       it != std::sregex_iterator(); ++it) {
    uris.push_back((*it)[2]);
  }
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    if (!line.empty() && line[0] != '#' && line[0] != '<' && line[0] != ' ') uris.push_back(line);
    at = end + 1;
  }
  return uris;
}

// The reason member of a refusal's body.
std::string ReasonOf(const HttpResult& r) {
  auto body = r.Json();
  return body.is_object() ? body["error"].value("reason", "") : "";
}

struct Cluster {
  Central central;
  Streamer ingest;
  Streamer edge;
  std::unique_ptr<Process> push;
};

// Central with key k1, stream "private" (token mode, recorded) on an ingest node fed by
// ffmpeg, an edge, and stream "other" (token mode, no node); returns once the ingest lists a
// segment.
Cluster StartProtected(const std::string& tag) {
  Cluster k;
  auto dir = MakeTempDir(tag);
  k.central = StartCentral(dir);
  auto key = Http("PUT", k.central.http, kApi + "/access-keys/k1",
                  nlohmann::json{{"alg", "HS256"}, {"secret", kSecretB64}}.dump());
  INFO(key.body);
  REQUIRE(key.status == 201);
  k.ingest = StartIngestWithStream(k.central, "ingest-1", "private");
  auto patch = Http(
      "PATCH", k.central.http, kApi + "/streams/private",
      nlohmann::json{{"access", {{"mode", "token"}}}, {"dvr", {{"root", dir + "/dvr"}}}}.dump());
  INFO(patch.body);
  REQUIRE(patch.status == 200);
  REQUIRE(Http("PUT", k.central.http, kApi + "/streams/other", R"({"access": {"mode": "token"}})")
              .status == 201);
  k.edge = StartStreamer(k.central.grpc, "edge-1", "edge");
  k.push = PushFile(SourceTs(60), k.ingest.publish, "private");
  REQUIRE(Eventually(
      [&] {
        // A whole segment, not only a first part: players join a running stream here (in
        // one CI run, hls.js 1.7.4 joining within the first part stalled at once with
        // bufferAppendNoProgress; stream start is the all-hands tests' subject).
        auto r = Http("GET", k.ingest.http, "/private/v1/index.ll.m3u8", "", ClusterBearer());
        return r.status == 200 && r.body.find("#EXTINF") != std::string::npos;
      },
      20s));
  // The node has the policy: a plain request is refused.
  REQUIRE(Eventually(
      [&] { return Http("GET", k.ingest.http, "/private/index.m3u8").status == 401; }, 10s));
  return k;
}

// Fetches `target` on `address` and checks every URI it names carries `token` — the token
// itself or the short id the node wrote for it (`sid=`, A-3), one id per answer; returns them.
std::vector<std::string> CheckCarried(const std::string& address, const std::string& target,
                                      const std::string& token) {
  auto r = Http("GET", address, target);
  INFO(target << "\n" << r.body);
  REQUIRE(r.status == 200);
  CHECK(r.headers["Cache-Control"].find("private") == 0);
  auto uris = UrisOf(r.body);
  CHECK_FALSE(uris.empty());
  std::set<std::string> ids;
  for (const auto& uri : uris) {
    INFO(uri);
    size_t sid = uri.find("sid=");
    if (sid != std::string::npos) {
      ids.insert(uri.substr(sid + 4, 16));
      CHECK(uri.size() >= sid + 4 + 16);
    } else {
      CHECK(uri.find("token=" + token) != std::string::npos);
    }
  }
  CHECK(ids.size() <= 1);
  return uris;
}

TEST_CASE(
    "A-2 A-3 A-4 a token-protected stream: 401 without a token, 403 with each reason, "
    "and only ?token= on the first URL leads to every object") {
  auto k = StartProtected("access-http");
  const std::string node = k.ingest.http;
  const std::string token = Token();

  auto none = Http("GET", node, "/private/index.m3u8");
  CHECK(none.status == 401);
  CHECK(ReasonOf(none) == "token_missing");
  CHECK(none.headers["WWW-Authenticate"].find("Bearer") == 0);
  auto segment_none = Http("GET", node, "/private/v1/init.mp4");
  CHECK(segment_none.status == 401);
  struct Case {
    std::string token;
    std::string reason;
  };
  for (const Case& c : std::vector<Case>{
           {Token("", NowS() - 120), "expired"},
           {Token(R"(,"streams":["other"])"), "stream"},
           {Token(R"(,"ip":"192.0.2.0/24")"), "address"},
           {Token("", 0, "k9"), "unknown_kid"},
           {crypto::SignJwtHs256(R"({"exp":4000000000})", "k1", "not the secret, 32 bytes long!!"),
            "signature"}}) {
    auto r = Http("GET", node, "/private/index.m3u8?token=" + c.token);
    INFO(r.body);
    CHECK(r.status == 403);
    CHECK(ReasonOf(r) == c.reason);
  }

  // HLS-TS: master → media playlist → segment, each URI carrying the token.
  auto variants = CheckCarried(node, "/private/index.m3u8?token=" + token, token);
  auto media = CheckCarried(node, "/private/" + variants.front(), token);
  auto segment = Http("GET", node, "/private/v1/" + media.back());
  CHECK(segment.status == 200);
  // LL-HLS: parts, the preload hint, rendition reports; a blocking reload too.
  CheckCarried(node, "/private/index.ll.m3u8?token=" + token, token);
  auto ll = CheckCarried(node, "/private/v1/index.ll.m3u8?token=" + token, token);
  auto held = Http("GET", node, "/private/v1/index.ll.m3u8?_HLS_msn=0&token=" + token);
  CHECK(held.status == 200);
  // DASH: the templates carry it; the init it names is served.
  auto mpd = CheckCarried(node, "/private/index.mpd?token=" + token, token);
  std::string init = mpd.front();
  init.replace(init.find("$RepresentationID$"), 18, "v1");
  CHECK(Http("GET", node, "/private/" + init).status == 200);
  // A Bearer header and the cookie are accepted; nothing is carried then.
  auto bearer =
      Http("GET", node, "/private/index.m3u8", "", {{"Authorization", "Bearer " + token}});
  CHECK(bearer.status == 200);
  CHECK(bearer.body.find("token=") == std::string::npos);
  CHECK(Http("GET", node, "/private/index.m3u8", "", {{"Cookie", "meshwork_token=" + token}})
            .status == 200);

  // ffprobe follows the URIs it is given from the master alone.
  auto [code, out] = RunCommand(
      "ffprobe -v error -show_entries stream=codec_name -of csv=p=0 "
      "'http://" +
      node + "/private/index.m3u8?token=" + token + "' 2>&1");
  INFO(out);
  CHECK(code == 0);
  CHECK(out.find("h264") != std::string::npos);

  // The same over HTTP/2 (h2c): refused without the token, carried with it.
  for (const auto& [target, expect] :
       {std::pair<std::string, std::string>{"/private/index.m3u8", "401"},
        std::pair<std::string, std::string>{"/private/index.m3u8?token=" + token, "200"}}) {
    auto [h2_code, h2_out] =
        RunCommand("curl -s --http2-prior-knowledge -w '\\n%{http_version} %{http_code}' 'http://" +
                   node + target + "'");
    INFO(h2_out);
    CHECK(h2_code == 0);
    CHECK(h2_out.ends_with("2 " + expect));
    if (expect == "200") CHECK(h2_out.find("?sid=") != std::string::npos);
  }

  // Central's redirect keeps the token; the archive needs `dvr`.
  auto redirect = Http("GET", k.central.http, "/private/index.ll.m3u8?token=" + token);
  CHECK(redirect.status == 302);
  CHECK(redirect.headers["Location"].find("token=" + token) != std::string::npos);
  const std::string period = absl::StrCat("/private/index-", NowS() - 30, "-now.m3u8?token=");
  auto no_dvr = Http("GET", node, period + token);
  CHECK(no_dvr.status == 403);
  CHECK(ReasonOf(no_dvr) == "dvr");
  const std::string dvr_token = Token(R"(,"dvr":true)");
  auto archive = Http("GET", node, period + dvr_token);
  CHECK(archive.status != 403);
  if (archive.status == 200) CheckCarried(node, period + dvr_token, dvr_token);

  // A-10: refusals by reason, admissions by mode.
  CHECK(MetricAt(node, "meshwork_play_denied_total", "reason=\"expired\"") >= 1);
  CHECK(MetricAt(node, "meshwork_play_denied_total", "reason=\"token_missing\"") >= 2);
  CHECK(MetricAt(node, "meshwork_play_admitted_total", "mode=\"token\"") >= 1);
  auto metrics = Http("GET", node, "/metrics").body;
  CHECK(metrics.find(token) == std::string::npos);
}

TEST_CASE("A-2 an edge checks viewer tokens itself and relays with the cluster token") {
  auto k = StartProtected("access-edge");
  const std::string token = Token();
  const double refused_before = MetricAt(k.ingest.http, "meshwork_play_denied_total");
  CHECK(Http("GET", k.edge.http, "/private/index.ll.m3u8").status == 401);
  CHECK(ReasonOf(Http("GET", k.edge.http,
                      "/private/index.ll.m3u8?token=" + Token("", NowS() - 99))) == "expired");
  auto playlist = Http("GET", k.edge.http, "/private/v1/index.ll.m3u8?token=" + token, "", {}, 15s);
  INFO(playlist.body);
  REQUIRE(playlist.status == 200);
  CheckCarried(k.edge.http, "/private/v1/index.ll.m3u8?token=" + token, token);
  CHECK(MetricAt(k.edge.http, "meshwork_play_denied_total", "reason=\"token_missing\"") >= 1);
  // The ingest refused nothing the edge asked for: its relay presents the cluster token.
  CHECK(MetricAt(k.ingest.http, "meshwork_play_denied_total") == refused_before);
}

TEST_CASE(
    "A-4 access keys: the API never shows a secret, and a retired key stops its tokens "
    "on the nodes without a restart") {
  auto k = StartProtected("access-keys");
  auto list = Http("GET", k.central.http, kApi + "/access-keys");
  INFO(list.body);
  REQUIRE(list.status == 200);
  CHECK(list.Json()["access-keys"] == nlohmann::json::parse(R"([{"kid": "k1", "alg": "HS256"}])"));
  CHECK(list.body.find(kSecretB64) == std::string::npos);
  CHECK(Http("GET", k.central.http, kApi + "/access-keys/k1").body.find(kSecretB64) ==
        std::string::npos);
  auto bad = Http("PUT", k.central.http, kApi + "/access-keys/k2", R"({"alg": "none"})");
  CHECK(bad.status == 400);
  CHECK(bad.Json()["error"]["field"] == "alg");
  CHECK(bad.body.find(kSecretB64) == std::string::npos);

  const std::string token = Token();
  const std::string target = "/private/index.m3u8?token=" + token;
  CHECK(Http("GET", k.ingest.http, target).status == 200);
  REQUIRE(Http("DELETE", k.central.http, kApi + "/access-keys/k1").status == 204);
  CHECK(Eventually([&] { return ReasonOf(Http("GET", k.ingest.http, target)) == "unknown_kid"; },
                   10s));
  REQUIRE(Http("PUT", k.central.http, kApi + "/access-keys/k1",
               nlohmann::json{{"alg", "HS256"}, {"secret", kSecretB64}}.dump())
              .status == 201);
  CHECK(Eventually([&] { return Http("GET", k.ingest.http, target).status == 200; }, 10s));
  // The log of central and of the node never holds the secret.
  for (const Process* p : {k.central.process.get(), k.ingest.process.get()}) {
    auto [code, log] = RunCommand("cat '" + p->log_path() + "'");
    CHECK(log.find(kSecretB64) == std::string::npos);
    CHECK(log.find(token) == std::string::npos);
  }
}

TEST_CASE(
    "A-3 hls.js (LL-HLS through central's redirect, HLS through an edge) and dash.js 5 "
    "play a token-protected stream given only ?token= on the first URL",
    "[2slots]") {
  auto k = StartProtected("access-players");
  const std::string token = Token();
  auto ll = PlayInBrowser("http://" + k.central.http + "/private/index.ll.m3u8?token=" + token, 10,
                          "--low-latency");
  CheckPlayed(ll, 10);
  auto edge = PlayInBrowser("http://" + k.edge.http + "/private/index.m3u8?token=" + token, 10);
  CheckPlayed(edge, 10);
  CheckPlayed(PlayDash("http://" + k.ingest.http + "/private/index.mpd?token=" + token, 10), 10);
  // Without the token the player gets nothing.
  auto refused = PlayInBrowser("http://" + k.ingest.http + "/private/index.m3u8", 5);
  CHECK(refused["ok"] != true);
}

TEST_CASE(
    "A-8 A-9 O-5 a login holds max_sessions on each node, its sessions are listed, and "
    "a revoked login is refused on every node until the revocation is cleared") {
  auto k = StartProtected("access-logins");
  // A second node holding the stream (the seed's backup node): the limit counts per node.
  auto second = StartIngestWithStream(k.central, "ingest-2", "private");
  auto push = PushFile(SourceTs(60), second.publish, "private");
  REQUIRE(Eventually(
      [&] {
        return Http("GET", second.http, "/private/v1/index.m3u8", "", ClusterBearer()).status ==
               200;
      },
      20s));
  const std::string token = Token(R"(,"max_sessions":2)");
  const std::string target = "/private/index.m3u8?token=" + token;
  for (const Streamer* node : {&k.ingest, &second}) {
    INFO(node->http);
    // Three players of the same login (three user agents: three sessions).
    for (const char* agent : {"player-a", "player-b"}) {
      CHECK(Http("GET", node->http, target, "", {{"User-Agent", agent}}).status == 200);
    }
    auto third = Http("GET", node->http, target, "", {{"User-Agent", "player-c"}});
    CHECK(third.status == 403);
    CHECK(ReasonOf(third) == "session_limit");
    // A session already admitted goes on.
    CHECK(Http("GET", node->http, target, "", {{"User-Agent", "player-a"}}).status == 200);
    CHECK(MetricAt(node->http, "meshwork_play_denied_total", "reason=\"session_limit\"") == 1);
  }
  // A-9: central lists the four sessions from the nodes' reports.
  CHECK(Eventually(
      [&] {
        auto list = Http("GET", k.central.http, kApi + "/sessions?stream=private&login=alice");
        return list.status == 200 && list.Json()["sessions"].size() == 4;
      },
      10s));
  auto list = Http("GET", k.central.http, kApi + "/sessions?login=alice").Json()["sessions"];
  std::set<std::string> nodes;
  for (const auto& s : list) {
    nodes.insert(s["node"].get<std::string>());
    CHECK(s["protocol"] == "hls");
    CHECK(s["client"] == "127.0.0.1");
  }
  CHECK(nodes == std::set<std::string>{"ingest-1", "ingest-2"});
  CHECK(Http("GET", k.central.http, kApi + "/sessions?login=bob").Json()["sessions"].empty());

  auto bad = Http("POST", k.central.http, kApi + "/sessions/revoke", R"({"login": ""})");
  CHECK(bad.status == 400);
  CHECK(bad.Json()["error"]["field"] == "login");
  // The operator's commands: `meshctl sessions` and `meshctl revoke`.
  auto meshctl = [&](const std::string& args) {
    return RunCommand("MESHWORK_CENTRAL=" + k.central.http + " " + SourcePath("tools/meshctl") +
                      " " + args + " 2>&1");
  };
  auto [listed, table] = meshctl("sessions --login alice");
  INFO(table);
  CHECK(listed == 0);
  CHECK(table.find("ingest-2") != std::string::npos);
  CHECK(table.find("alice") != std::string::npos);
  auto [revoked_status, revoke] = meshctl("revoke alice");
  INFO(revoke);
  REQUIRE(revoked_status == 0);
  for (const Streamer* node : {&k.ingest, &second}) {
    CHECK(Eventually(
        [&] {
          auto r = Http("GET", node->http, target, "", {{"User-Agent", "player-a"}});
          return r.status == 403 && ReasonOf(r) == "revoked";
        },
        10s));
  }
  auto [list_status, list_json] = meshctl("--json revoke --list");
  INFO(list_json);
  REQUIRE(list_status == 0);
  auto revoked = nlohmann::json::parse(list_json)["revoked"];
  REQUIRE(revoked.size() == 1);
  CHECK(revoked[0]["login"] == "alice");
  CHECK(revoked[0]["active"] == true);
  REQUIRE(meshctl("revoke --clear alice").first == 0);
  CHECK(Http("GET", k.central.http, kApi + "/sessions/revoked").Json()["revoked"].empty());
  // A login that needs escaping in a path is cleared by its escaped form (meshctl's).
  REQUIRE(meshctl("revoke 'carol@example.com'").first == 0);
  auto carol = Http("GET", k.central.http, kApi + "/sessions/revoked").Json()["revoked"];
  REQUIRE(carol.size() == 1);
  CHECK(carol[0]["until_unix_s"].is_null());  // until cleared
  CHECK(carol[0]["active"] == true);
  CHECK(Http("DELETE", k.central.http, kApi + "/sessions/revoke/carol%zz").status == 400);
  REQUIRE(meshctl("revoke --clear 'carol@example.com'").first == 0);
  CHECK(Http("GET", k.central.http, kApi + "/sessions/revoked").Json()["revoked"].empty());
  CHECK(Eventually(
      [&] {
        return Http("GET", k.ingest.http, target, "", {{"User-Agent", "player-a"}}).status == 200;
      },
      10s));
}

}  // namespace meshwork::testing::access_test
