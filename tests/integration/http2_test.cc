// S-24: HTTP/2 on the viewer listeners with real clients: curl by prior knowledge (h2c) and
// over TLS with ALPN, on a streamer packaging an ffmpeg push; the same routes, holds and
// bodies as HTTP/1.1.
#include <catch2/catch.hpp>
#include <cstdio>
#include <regex>
#include <string>
#include <vector>

#include "tests/integration/media_harness.h"

namespace meshwork::testing {
namespace {

// A command's stdout (and stderr when `cmd` redirects it), from the harness's RunCommand.
std::string Run(const std::string& cmd) { return RunCommand(cmd).second; }

// curl's stdout (the body, then what -w adds).
std::string Curl(const std::string& args) {
  return Run("curl -s --max-time 20 " + args + " 2>/dev/null");
}

// A self-signed certificate and key in `dir`, as a streamer's --https-listen flags.
std::vector<std::string> TlsFlags(const std::string& dir) {
  std::string cert = dir + "/node.pem", key = dir + "/node.key";
  REQUIRE(std::system(("openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=node -days 1 "
                       "-keyout '" +
                       key + "' -out '" + cert + "' >/dev/null 2>&1")
                          .c_str()) == 0);
  return {"--https-listen=127.0.0.1:0", "--tls-cert=" + cert, "--tls-key=" + key};
}

// "…body…\n<code> <http_version>" → {code, version, body}.
struct CurlResult {
  int status = 0;
  std::string version;
  std::string body;
};
CurlResult CurlGet(const std::string& flags, const std::string& url) {
  std::string out = Curl(flags + " -w '\\n%{http_code} %{http_version}' '" + url + "'");
  CurlResult r;
  auto nl = out.rfind('\n');
  REQUIRE(nl != std::string::npos);
  r.body = out.substr(0, nl);
  std::sscanf(out.c_str() + nl + 1, "%d", &r.status);
  r.version = out.substr(out.find(' ', nl) + 1);
  return r;
}

// The newest part of the playlist: msn and part index.
std::pair<int64_t, int> NewestPart(const std::string& playlist) {
  std::pair<int64_t, int> best{-1, -1};
  std::regex part("#EXT-X-PART:[^\\n]*URI=\"(\\d+)\\.(\\d+)\\.m4s(\\?[^\"]*)?\"");
  for (auto it = std::sregex_iterator(playlist.begin(), playlist.end(), part);
       it != std::sregex_iterator(); ++it) {
    best = std::max(best, std::pair<int64_t, int>(std::stoll((*it)[1]), std::stoi((*it)[2])));
  }
  return best;
}

TEST_CASE("S-24 curl fetches playlists, blocking reloads and parts over h2c and over TLS h2") {
  auto dir = MakeTempDir("http2");
  auto central = StartCentral(dir + "/central");
  auto node = StartIngestWithStream(central, "ingest-1", "live", {"publish://"}, TlsFlags(dir));
  REQUIRE(!node.https.empty());
  auto push = PushFile(SourceTs(60), node.publish, "live");
  const std::string h2c = "http://" + node.http, h2 = "https://" + node.https;
  REQUIRE(Eventually(
      [&] { return NewestPart(Http("GET", node.http, "/live/v1/index.ll.m3u8").body).first >= 1; },
      30s));

  for (const auto& [flags, base] :
       {std::pair<std::string, std::string>{"--http2-prior-knowledge", h2c},
        std::pair<std::string, std::string>{"--http2 -k", h2}}) {
    INFO(flags << " " << base);
    auto playlist = CurlGet(flags, base + "/live/v1/index.ll.m3u8");
    CHECK(playlist.status == 200);
    CHECK(playlist.version == "2");
    CHECK(playlist.body.find("#EXTM3U") == 0);
    // A blocking reload for the part after the newest is held, then answered with it listed.
    auto [msn, part] = NewestPart(playlist.body);
    REQUIRE(msn >= 0);
    std::string next_msn = std::to_string(msn), next_part = std::to_string(part + 1);
    auto held = CurlGet(
        flags, base + "/live/v1/index.ll.m3u8?_HLS_msn=" + next_msn + "&_HLS_part=" + next_part);
    CHECK(held.status == 200);
    CHECK(held.version == "2");
    CHECK(NewestPart(held.body) >= std::make_pair(msn, part + 1));
    // A part over HTTP/2 is the same bytes as over HTTP/1.1.
    std::string name = "/live/v1/" + std::to_string(msn) + "." + std::to_string(part) + ".m4s";
    auto over_h2 = CurlGet(flags, base + name);
    CHECK(over_h2.status == 200);
    CHECK(over_h2.version == "2");
    CHECK(over_h2.body == Http("GET", node.http, name).body);
    // Unknown paths and objects answer as over HTTP/1.1.
    CHECK(CurlGet(flags, base + "/nosuch/v1/index.m3u8").status == 404);
  }
  // HTTP/2 answers are counted like any other (the https listener saw only HTTP/2 so far).
  CHECK(MetricAt(node.http, "meshwork_http_requests_total", "listener=\"https\"") == 4);
  // HTTP/1.1 keeps working on the same listeners.
  CHECK(CurlGet("--http1.1", h2c + "/live/v1/index.ll.m3u8").version == "1.1");
  CHECK(CurlGet("--http1.1 -k", h2 + "/live/v1/index.ll.m3u8").version == "1.1");
  CHECK(node.process->running());
}

TEST_CASE(
    "S-24 1000 held blocking reloads over 10 HTTP/2 connections are all released by one publish") {
  auto dir = MakeTempDir("http2-held");
  auto central = StartCentral(dir + "/central");
  auto node = StartIngestWithStream(central, "ingest-1", "live");
  auto push = PushFile(SourceTs(60), node.publish, "live");
  REQUIRE(Eventually(
      [&] { return NewestPart(Http("GET", node.http, "/live/v1/index.ll.m3u8").body).first >= 1; },
      30s));
  // The part two after the newest: not there yet when the requests go out.
  auto [msn, part] = NewestPart(Http("GET", node.http, "/live/v1/index.ll.m3u8").body);
  std::string url = "http://" + node.http +
                    "/live/v1/index.ll.m3u8?_HLS_msn=" + std::to_string(msn) +
                    "&_HLS_part=" + std::to_string(part + 2);
  // h2load (Debian nghttp2-client): 10 connections, 100 concurrent streams each.
  std::string out = Run("h2load -n 1000 -c 10 -m 100 '" + url + "' 2>&1");

  INFO(out);
  CHECK(out.find("1000 succeeded") != std::string::npos);
  CHECK(out.find("1000 2xx") != std::string::npos);
  CHECK(out.find("h2c") != std::string::npos);  // the protocol h2load negotiated
  // Every answer lists the part the requests waited for.
  auto after = Http("GET", node.http, "/live/v1/index.ll.m3u8");
  CHECK(NewestPart(after.body) >= std::pair<int64_t, int>(msn, part + 2));
  CHECK(node.process->running());
}

TEST_CASE("S-24 hls.js in Chromium plays LL-HLS over HTTPS with HTTP/2 for 12 s") {
  auto dir = MakeTempDir("http2-hlsjs");
  auto central = StartCentral(dir + "/central");
  auto node = StartIngestWithStream(central, "ingest-1", "live", {"publish://"}, TlsFlags(dir));
  auto push = PushFile(SourceTs(60), node.publish, "live");
  REQUIRE(Eventually(
      [&] { return NewestPart(Http("GET", node.http, "/live/v1/index.ll.m3u8").body).first >= 1; },
      30s));
  auto played = PlayInBrowser("https://" + node.https + "/live/index.ll.m3u8", 12,
                              "--low-latency --insecure-tls");
  INFO(played.dump(2));
  CHECK(played["ok"] == true);
  for (const auto& e : played["errors"]) CHECK(e["fatal"] != true);
  // Chromium's nextHopProtocol for the stream's responses: HTTP/2 only.
  CHECK(played["protocols"].value("h2", 0) >= 20);
  CHECK_FALSE(played["protocols"].contains("http/1.1"));
}

}  // namespace
}  // namespace meshwork::testing
