// LL-HLS over HTTP with a real ffmpeg source (S-10…S-15): blocking reload, held preload-hint
// parts, 503 after three target durations, and hls.js in low-latency mode.
#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <regex>
#include <thread>

#include "tests/integration/media_harness.h"

namespace meshwork::testing {
namespace {

struct Edge {
  int64_t msn = -1;  // the last complete segment
  std::string hint;  // the preload hint URI
};

Edge LiveEdge(const Streamer& node, const std::string& stream) {
  auto r = Http("GET", node.http, "/" + stream + "/v1/index.ll.m3u8");
  Edge edge;
  if (r.status != 200) return edge;
  std::smatch m;
  std::string body = r.body;
  static const std::regex kSegment("\n(\\d+)\\.m4s(\\?[^\n]*)?\n");  // ?v=N (L-14)
  for (auto it = std::sregex_iterator(body.begin(), body.end(), kSegment);
       it != std::sregex_iterator(); ++it) {
    edge.msn = std::stoll((*it)[1]);
  }
  if (std::regex_search(body, m, std::regex("PRELOAD-HINT:TYPE=PART,URI=\"([^\"]+)\""))) {
    edge.hint = m[1];
  }
  return edge;
}

double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

TEST_CASE(
    "S-12 S-13 S-14 S-15 blocking reload and preload hints hold until publish, parts outlive "
    "their listing, 503 after 3 targets") {
  auto dir = MakeTempDir("llhls");
  auto central = StartCentral(dir);
  auto node = StartIngestWithStream(central, "ingest-1", "ll");
  auto push = PushFile(SourceTs(60), node.publish, "ll", {"-t", "20"});
  REQUIRE(Eventually([&] { return LiveEdge(node, "ll").msn >= 0; }, 20s));

  // The next segment: held, then the whole playlist with it (well within its 2 s).
  Edge edge = LiveEdge(node, "ll");
  auto start = std::chrono::steady_clock::now();
  auto held =
      Http("GET", node.http, "/ll/v1/index.ll.m3u8?_HLS_msn=" + std::to_string(edge.msn + 1));
  double waited = Since(start);
  REQUIRE(held.status == 200);
  CHECK(held.body.find("\n" + std::to_string(edge.msn + 1) + ".m4s?v=1\n") != std::string::npos);
  CHECK(held.headers["Cache-Control"] == "max-age=12");  // S-15: 6 × target duration
  CHECK(waited < 3.0);

  // The hinted part, asked for before it exists: held, then its bytes (an fMP4 fragment).
  edge = LiveEdge(node, "ll");
  REQUIRE(!edge.hint.empty());
  auto part = Http("GET", node.http, "/ll/v1/" + edge.hint);
  REQUIRE(part.status == 200);
  CHECK(part.headers["Content-Type"] == "video/mp4");
  CHECK(part.body.substr(4, 4) == "moof");
  auto init = Http("GET", node.http, "/ll/v1/init.mp4");
  CHECK(init.body.substr(4, 4) == "ftyp");
  // ffprobe reads init.mp4 + a whole fMP4 segment of each rendition: one media type each
  // (S-16a), H.264 in v1 and AAC in a1, under the same msn.
  auto segment = Http("GET", node.http, "/ll/v1/" + std::to_string(edge.msn) + ".m4s");
  REQUIRE(segment.status == 200);
  WriteFile(dir + "/seg.mp4", init.body + segment.body);
  auto probe = Probe(dir + "/seg.mp4");
  std::map<std::string, std::string> codecs;
  for (const auto& st : probe["streams"]) codecs[st["codec_type"]] = st["codec_name"];
  CHECK(codecs == std::map<std::string, std::string>{{"video", "h264"}});
  CHECK(probe["first_video_frame"]["key_frame"] == 1);
  auto audio_init = Http("GET", node.http, "/ll/a1/init.mp4");
  auto audio_segment = Http("GET", node.http, "/ll/a1/" + std::to_string(edge.msn) + ".m4s");
  REQUIRE(audio_segment.status == 200);
  WriteFile(dir + "/audio.mp4", audio_init.body + audio_segment.body);
  auto audio_probe = Probe(dir + "/audio.mp4");
  codecs.clear();
  for (const auto& st : audio_probe["streams"]) codecs[st["codec_type"]] = st["codec_name"];
  CHECK(codecs == std::map<std::string, std::string>{{"audio", "aac"}});

  // Rules that answer at once.
  CHECK(Http("GET", node.http, "/ll/v1/index.ll.m3u8?_HLS_part=1").status == 400);
  CHECK(Http("GET", node.http, "/ll/v1/index.ll.m3u8?_HLS_msn=" + std::to_string(edge.msn + 5))
            .status == 400);
  CHECK(Http("GET", node.http, "/ll/v1/" + std::to_string(edge.msn + 7) + ".0.m4s").status ==
        404);  // not the next due part

  // The source stops: a request for a segment that never comes answers 503 after 3 × 2 s.
  push->Wait();

  // S-14: the playlist lists the parts of its newest segments only; a segment's parts stay
  // downloadable for 3 target durations after they leave it — those of the three segments
  // before the oldest one still listed with parts left within that time.
  {
    const std::string text = Http("GET", node.http, "/ll/v1/index.ll.m3u8").body;
    std::smatch m;
    REQUIRE(std::regex_search(text, m, std::regex("#EXT-X-PART:[^\n]*URI=\"([0-9]+)\\.")));
    const int64_t oldest_with_parts = std::stoll(m[1]);
    auto listed = ParseMediaPlaylist(text);
    REQUIRE(!listed.entries.empty());
    INFO(text);
    REQUIRE(listed.entries.front().msn <= oldest_with_parts - 3);  // they were published here
    for (int64_t back = 1; back <= 3; ++back) {
      const std::string name = std::to_string(oldest_with_parts - back) + ".0.m4s";
      CHECK(text.find("URI=\"" + name) == std::string::npos);
      auto left = Http("GET", node.http, "/ll/v1/" + name);
      INFO(name);
      CHECK(left.status == 200);
      CHECK(left.body.substr(4, 4) == "moof");
    }
  }
  edge = LiveEdge(node, "ll");
  start = std::chrono::steady_clock::now();
  auto never = Http("GET", node.http,
                    "/ll/v1/index.ll.m3u8?_HLS_msn=" + std::to_string(edge.msn + 2), "", {}, 15s);
  waited = Since(start);
  CHECK(never.status == 503);
  CHECK(waited == Approx(6.0).margin(1.0));
}

// The last part listed: (msn, index), or (-1, -1).
std::pair<int64_t, int> LastPart(const std::string& playlist) {
  static const std::regex kPart("#EXT-X-PART:[^\n]*URI=\"(\\d+)\\.(\\d+)\\.m4s");
  std::pair<int64_t, int> last{-1, -1};
  for (auto it = std::sregex_iterator(playlist.begin(), playlist.end(), kPart);
       it != std::sregex_iterator(); ++it) {
    last = {std::stoll((*it)[1]), std::stoi((*it)[2])};
  }
  return last;
}

TEST_CASE(
    "P-9 with --ll_tune_in_hold_pct=100 a playlist request without directives waits for the next "
    "part") {
  auto dir = MakeTempDir("tunein");
  auto central = StartCentral(dir);
  auto node = StartIngestWithStream(central, "ingest-1", "tune", {"publish://"},
                                    {"--ll_tune_in_hold_pct=100"});
  auto push = PushFile(SourceTs(60), node.publish, "tune", {"-t", "12"});
  REQUIRE(Eventually(
      [&] { return LastPart(Http("GET", node.http, "/tune/v1/index.ll.m3u8").body).first >= 0; },
      20s));
  // Back to back: each answer comes when a part newer than the last one listed completes,
  // so no two answers list the same last part (without the hold, the second request, sent
  // a few milliseconds after the first answer, would list the same one).
  std::pair<int64_t, int> previous =
      LastPart(Http("GET", node.http, "/tune/v1/index.ll.m3u8").body);
  for (int i = 0; i < 5; ++i) {
    auto r = Http("GET", node.http, "/tune/v1/index.ll.m3u8");
    REQUIRE(r.status == 200);
    CHECK(r.headers["Cache-Control"] == "max-age=1");  // a plain answer, not a blocking one
    auto last = LastPart(r.body);
    INFO(previous.first << "." << previous.second << " then " << last.first << "." << last.second);
    CHECK(last > previous);
    previous = last;
  }
  // With no source (no part comes any more: two answers in a row list the same one), the
  // next part is overdue and the hold ends half a part target (0.25 s) later with the
  // playlist as it is.
  push->Wait();
  REQUIRE(Eventually(
      [&] {
        auto r = Http("GET", node.http, "/tune/v1/index.ll.m3u8");
        auto last = LastPart(r.body);
        bool still = r.status == 200 && last == previous;
        previous = last;
        return still;
      },
      10s));
  auto start = std::chrono::steady_clock::now();
  auto r = Http("GET", node.http, "/tune/v1/index.ll.m3u8");
  double waited = Since(start);
  CHECK(r.status == 200);
  CHECK(LastPart(r.body) == previous);
  CHECK(waited == Approx(0.25).margin(0.2));
}

TEST_CASE(
    "P-9 by default a tune-in request right after a part is answered at once, one late in the "
    "part waits for the next") {
  auto dir = MakeTempDir("tunein-default");
  auto central = StartCentral(dir);
  auto node = StartIngestWithStream(central, "ingest-1", "tunenow");
  auto push = PushFile(SourceTs(60), node.publish, "tunenow", {"-t", "14"});
  REQUIRE(Eventually(
      [&] { return LastPart(Http("GET", node.http, "/tunenow/v1/index.ll.m3u8").body).first >= 0; },
      20s));
  // A blocking reload for the part after the last one listed, answered when it is published:
  // the part it lists is then fresh.
  auto fresh_part = [&] {
    auto last = LastPart(Http("GET", node.http, "/tunenow/v1/index.ll.m3u8").body);
    auto blocking = Http("GET", node.http,
                         "/tunenow/v1/index.ll.m3u8?_HLS_msn=" + std::to_string(last.first) +
                             "&_HLS_part=" + std::to_string(last.second + 1));
    REQUIRE(blocking.status == 200);
    return std::pair{LastPart(blocking.body), std::chrono::steady_clock::now()};
  };
  int at_once = 0;
  for (int i = 0; i < 8 && at_once < 3; ++i) {
    // Sent at once, a plain request finds the next part due in more than half a part target
    // (250 ms of 500): answered at once with the fresh one, not held. (An answer later than
    // 100 ms, on a loaded machine, is not counted: a hold would take 250 ms or more, so a
    // hold on every request leaves none counted.)
    auto [released, at] = fresh_part();
    auto plain = Http("GET", node.http, "/tunenow/v1/index.ll.m3u8");
    if (std::chrono::steady_clock::now() - at > 100ms) continue;
    REQUIRE(plain.status == 200);
    auto got = LastPart(plain.body);
    INFO("blocking " << released.first << "." << released.second << ", plain " << got.first << "."
                     << got.second);
    CHECK(got == released);
    ++at_once;
  }
  CHECK(at_once == 3);
  for (int i = 0; i < 3; ++i) {
    // 300 ms into the part (the next due within 200 ms): held for the next part, so the
    // answer lists a newer part than the fresh one (with the hold off it lists the same).
    auto [released, at] = fresh_part();
    std::this_thread::sleep_until(at + 300ms);
    auto plain = Http("GET", node.http, "/tunenow/v1/index.ll.m3u8");
    REQUIRE(plain.status == 200);
    auto got = LastPart(plain.body);
    INFO("blocking " << released.first << "." << released.second << ", plain " << got.first << "."
                     << got.second);
    CHECK(got > released);
  }
}

TEST_CASE("S-10 hls.js in low-latency mode plays the LL-HLS stream for 12 s") {
  auto dir = MakeTempDir("llhls-play");
  auto central = StartCentral(dir);
  auto node = StartIngestWithStream(central, "ingest-1", "ll");
  auto push = PushFile(SourceTs(60), node.publish, "ll");
  REQUIRE(Eventually([&] { return LiveEdge(node, "ll").msn >= 0; }, 20s));
  auto result = PlayInBrowser("http://" + node.http + "/ll/index.ll.m3u8", 12, "--low-latency");
  INFO(result.dump());
  REQUIRE(result.is_object());
  CHECK(result["exit_code"] == 0);
  CHECK(result["ok"] == true);
  // hls.js's own latency estimate (behind the live edge): a player that fell back to plain
  // HLS would sit 3 segments (6 s) or more behind.
  double latency = result["hls_latency_s"].is_number() ? result["hls_latency_s"].get<double>() : 99;
  std::printf("P-9 hls.js low-latency latency behind the live edge: %.2f s\n", latency);
  CHECK(latency < 6.0);
  // S-12: no seek over a hole after the start-up jump to the live edge. Parts of the segment in
  // progress listed as gaps (hls.js keeps a part's GAP flag for good) made ~1.5 s holes.
  CHECK(result["seeks"].get<int>() <= 1);
}

}  // namespace
}  // namespace meshwork::testing

namespace meshwork::testing {
namespace {

// dash.js 4.x (package dashjs4): the player many viewers still run. dash.js 5.x, stricter about
// one media type per Representation (S-16a), plays in players_e2e_test.cc.
TEST_CASE("S-16 dash.js 4 plays the DASH stream (same fMP4 segments) for 12 s") {
  auto dir = MakeTempDir("dash-play");
  auto central = StartCentral(dir);
  auto node = StartIngestWithStream(central, "ingest-1", "dash");
  auto push = PushFile(SourceTs(60), node.publish, "dash");
  REQUIRE(Eventually([&] { return LiveEdge(node, "dash").msn >= 1; }, 20s));
  auto mpd = Http("GET", node.http, "/dash/index.mpd");
  REQUIRE(mpd.status == 200);
  CHECK(mpd.headers["Content-Type"] == "application/dash+xml");
  CHECK(mpd.body.find("type=\"dynamic\"") != std::string::npos);
  CHECK(mpd.body.find("$Number$") != std::string::npos);
  CHECK(mpd.body.find("UTCTiming") != std::string::npos);
  CHECK(Http("GET", node.http, "/time").status == 200);
  // The segment in progress comes with chunked transfer as its parts complete, and adds up to
  // the finished segment byte for byte (S-16 low latency).
  Edge edge = LiveEdge(node, "dash");
  std::string next = "/dash/v1/" + std::to_string(edge.msn + 1) + ".m4s";
  auto in_progress = Http("GET", node.http, next, "", {}, 10s);
  REQUIRE(in_progress.status == 200);
  CHECK(in_progress.headers["Transfer-Encoding"] == "chunked");
  auto finished = Http("GET", node.http, next);
  REQUIRE(finished.status == 200);
  CHECK(finished.headers.count("Transfer-Encoding") == 0);
  CHECK(in_progress.body == finished.body);
  auto result = PlayInBrowser("http://" + node.http + "/dash/index.mpd", 12, "--player dash4");
  INFO(result.dump(2));
  CHECK(result["player_version"].dump().rfind("\"4.", 0) == 0);  // "4.x.y"
  CHECK(result["exit_code"] == 0);
  CHECK(result["ok"] == true);
  std::printf("dash.js 4 live latency: %s s\n", result["latency_s"].dump().c_str());
}

}  // namespace
}  // namespace meshwork::testing
