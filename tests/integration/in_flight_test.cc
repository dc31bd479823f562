// P-13 (objects in flight): an edge shares a part with its viewers while the part is still
// crossing from its upstream. The ingest node's only address for the edge is a slow link (a
// TcpProxy pacing the ingest's answers), so a part takes a quarter of a second to cross; a
// viewer asking the edge for the part its playlist hints receives the first bytes as they
// come, the last ones when the link delivers them — not everything at once at the end. Then
// dash.js 5 and Shaka Player 5 play the edge's DASH (made there from the relayed CMAF).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "tests/integration/media_harness.h"
#include "tests/integration/tcp_proxy.h"

namespace meshwork::testing::in_flight_test {
namespace {

std::string PartHint(const std::string& playlist) {
  static const std::regex kHint("#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"([^\"]+)\"");
  std::smatch m;
  return std::regex_search(playlist, m, kHint) ? m[1].str() : "";
}

// The most parts a complete segment of the playlist has (0: none listed). A hint naming a part
// index at or past it is the packager's guess before the segment's end is known: once the
// segment closes, that part never exists (404).
int PartsPerSegment(const std::string& playlist) {
  int most = 0, since_segment = 0;
  std::istringstream lines(playlist);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("#EXT-X-PART:", 0) == 0) ++since_segment;
    if (line.rfind("#EXTINF:", 0) == 0) {
      most = std::max(most, since_segment);
      since_segment = 0;
    }
  }
  return most;
}

// The part index of a hint "M.P.m4s…" (-1: not a part name).
int HintPart(const std::string& hint) {
  int msn_end = static_cast<int>(hint.find('.'));
  if (msn_end < 0) return -1;
  return std::atoi(hint.c_str() + msn_end + 1);
}

// The size of the newest part the playlist lists (0: none).
size_t NewestPartBytes(const Streamer& node, const std::string& playlist) {
  static const std::regex kPart("#EXT-X-PART:[^\n]*URI=\"([^\"]+)\"");
  std::string last;
  for (auto it = std::sregex_iterator(playlist.begin(), playlist.end(), kPart);
       it != std::sregex_iterator(); ++it) {
    last = (*it)[1];
  }
  if (last.empty()) return 0;
  return Http("GET", node.http, "/live/v1/" + last).body.size();
}

// [2slots]: two players and a timing check. A slow relay (the ASan build) can miss the
// upstream's hint for a segment's short last part — the next playlist lists it complete — so
// the relay's fetch of a listed part is shared in flight too; before that, the h2 viewer of
// such a part got it only whole (3 runs of 4 in the ASan build).
TEST_CASE(
    "P-13 S-19 a viewer at an edge receives a part's first bytes before its upstream finished "
    "sending it, over HTTP/1.1 and h2, and dash.js and Shaka play DASH through the edge",
    "[2slots]") {
  TcpProxy link;  // the ingest node's public address: the edge's only way to it
  auto central = StartCentral(MakeTempDir("in-flight"));
  auto ingest = StartIngestWithStream(
      central, "ingest-1", "live", {"publish://"},
      {"--hostname", "127.0.0.1", "--public_port", std::to_string(link.port())});
  link.SetTarget(ingest.http);
  auto edge = StartStreamer(central.grpc, "edge-1", "edge");
  auto push = PushFile(SourceTs(60), ingest.publish, "live");
  REQUIRE(Eventually(
      [&] {
        auto list = Http("GET", edge.http, "/live/v1/index.ll.m3u8", "", {}, 10s);
        return list.status == 200 && NewestPartBytes(edge, list.body) > 0;
      },
      30s));

  // The pace: a part of the size the stream has takes about 0.25 s to cross (the relay keeps
  // up with parts of 0.5 s and more).
  size_t part_bytes =
      NewestPartBytes(ingest, Http("GET", ingest.http, "/live/v1/index.ll.m3u8").body);
  REQUIRE(part_bytes > 0);
  const double pace = static_cast<double>(part_bytes) / 0.25;
  link.PaceAnswers(pace);
  // Past the parts that may have started across at full speed: two hints on.
  for (int i = 0; i < 2; ++i) {
    std::string hint = PartHint(Http("GET", edge.http, "/live/v1/index.ll.m3u8").body);
    REQUIRE(Eventually(
        [&] { return PartHint(Http("GET", edge.http, "/live/v1/index.ll.m3u8").body) != hint; },
        10s));
  }

  const std::string dir = MakeTempDir("in-flight-parts");
  std::string previous;
  for (const std::string mode : {"--http1.1", "--http2-prior-knowledge"}) {
    // A part the edge has not got yet, caught the moment the hint moves on (the relay has
    // just published the part before it, so this one is still being made upstream and
    // crosses the link after curl asks). A hint taken at any moment could be half across
    // already (CI, ASan: first byte 3 ms, last 88 ms of a 278 ms crossing).
    const std::string current = PartHint(Http("GET", edge.http, "/live/v1/index.ll.m3u8").body);
    std::string hint;
    REQUIRE(Eventually(
        [&] {
          std::string playlist = Http("GET", edge.http, "/live/v1/index.ll.m3u8").body;
          hint = PartHint(playlist);
          // Not a hint past its segment's end (a 404 once the segment closes: it failed a
          // rehearsal when the hint caught was one).
          return !hint.empty() && hint != current && hint != previous &&
                 HintPart(hint) < PartsPerSegment(playlist);
        },
        10s));
    previous = hint;
    INFO(mode << " hint " << hint);
    const std::string file = dir + "/part" + std::to_string(mode.size());
    auto [rc, out] = RunCommand("curl -s " + mode + " -o " + file +
                                " -w '%{http_code} %{time_starttransfer} %{time_total}' "
                                "'http://" +
                                edge.http + "/live/v1/" + hint + "'");
    INFO("curl: " << out);
    REQUIRE(rc == 0);
    int code = 0;
    double first = 0, total = 0;
    REQUIRE(std::sscanf(out.c_str(), "%d %lf %lf", &code, &first, &total) == 3);
    REQUIRE(code == 200);
    std::string body = ReadFile(file);
    // Byte for byte the ingest's part.
    auto at_ingest = Http("GET", ingest.http, "/live/v1/" + hint.substr(0, hint.find('?')));
    REQUIRE(at_ingest.status == 200);
    CHECK(body == at_ingest.body);
    // An edge that waited for the whole part would send it in one go after the link's last
    // byte: its first and last bytes would be milliseconds apart, not the link's crossing time.
    const double crossing = static_cast<double>(body.size()) / pace;
    WARN("P-13 " << mode << ": part of " << body.size() << " bytes, first byte at " << first
                 << " s, last at " << total << " s (the link needs " << crossing << " s)");
    CHECK(total - first >= 0.5 * crossing);
  }
  CHECK(MetricAt(edge.http, "meshwork_origin_reads_total", "answer=\"in_flight\"") >= 2);
  link.PaceAnswers(0);

  // S-25: DASH made at the edge from the relayed CMAF plays in the current dash.js and Shaka
  // Player (the same setup, the link at full speed again).
  const std::string mpd = "http://" + edge.http + "/live/index.mpd";
  CheckPlayed(PlayDash(mpd, 8), 8);
  auto shaka = PlayInBrowser(mpd, 8, "--player shaka --timeout-s 45");
  const std::string shaka_version =
      shaka["player_version"].is_string() ? shaka["player_version"].get<std::string>() : "";
  INFO("Shaka Player " << shaka_version);
  CHECK(shaka_version.rfind("v5.", 0) == 0);
  CheckPlayed(shaka, 8);
}

}  // namespace
}  // namespace meshwork::testing::in_flight_test
