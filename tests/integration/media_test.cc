// Streamer media I with real peers: ffmpeg pushes MPEG-TS into a streamer, ffprobe checks the
// HLS segments, two nodes of a stream agree on the timeline and its wall-clock dates, a cut source
// resumes with a discontinuity (S-1, S-3, S-5, S-7, S-8, S-9, S-22).
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <ctime>
#include <iomanip>
#include <map>
#include <sstream>
#include <thread>

#include "tests/integration/media_harness.h"

namespace meshwork::testing {
namespace {

// "2026-12-02T00:45:41.779Z" → Unix ms (-1 when unreadable).
int64_t IsoMillis(const std::string& text) {
  std::tm tm{};
  std::istringstream in(text.substr(0, 19));
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
  if (in.fail()) return -1;
  int64_t ms = static_cast<int64_t>(timegm(&tm)) * 1000;
  if (text.size() >= 23 && text[19] == '.') ms += std::stoi(text.substr(20, 3));
  return ms;
}

int64_t NowMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// S-5: the newest segment of a playlist just fetched is dated in wall-clock time: it ended no
// later than now (plus a second) and at most `max_lag_ms` before (it was made when the next
// keyframe arrived, and listed since then).
void CheckNewestIsWallClock(const MediaPlaylistInfo& playlist, int64_t max_lag_ms) {
  REQUIRE(!playlist.entries.empty());
  const PlaylistEntry& newest = playlist.entries.back();
  int64_t end = IsoMillis(newest.program_date_time) + std::llround(newest.duration * 1000);
  int64_t lag = NowMillis() - end;
  INFO("newest msn " << newest.msn << " PDT " << newest.program_date_time << " lag " << lag);
  CHECK(lag >= -1000);
  CHECK(lag <= max_lag_ms);
}

nlohmann::json NodeStatus(const Central& central, const std::string& id) {
  return Http("GET", central.http, "/central/api-v4/streamers/" + id).Json()["status"];
}

// The timeline anchor a node reports for a stream (null when none).
nlohmann::json ReportedAnchor(const Central& central, const std::string& id,
                              const std::string& stream) {
  auto s = ReportedStream(central, id, stream);
  return s.is_object() ? s["timeline_anchor"] : nlohmann::json();
}

TEST_CASE("S-1 S-8 S-9 ffmpeg pushes over HTTP and ffprobe validates the HLS segments") {
  auto dir = MakeTempDir("s8");
  auto central = StartCentral(dir);
  auto node = StartIngestWithStream(central, "ingest-1", "news/ch1");
  auto push = PushFile(SourceTs(), node.publish, "news/ch1");
  REQUIRE(Eventually([&] { return HasSegments(node, "news/ch1", 4); }, 20s));

  auto master = Http("GET", node.http, "/news/ch1/index.m3u8", "", {{"Origin", "http://x"}});
  REQUIRE(master.status == 200);
  CHECK(master.headers["Content-Type"] == "application/vnd.apple.mpegurl");
  CHECK(master.headers["Access-Control-Allow-Origin"] == "*");  // S-22
  CHECK(master.body.find("CODECS=\"avc1.") != std::string::npos);
  CHECK(master.body.find("mp4a.40.2") != std::string::npos);
  CHECK(master.body.find("RESOLUTION=640x360") != std::string::npos);
  CHECK(master.body.find("FRAME-RATE=25.000") != std::string::npos);
  CHECK(master.body.find("v1/index.m3u8") != std::string::npos);

  auto playlist = Playlist(node, "news/ch1");
  CHECK(playlist.target_duration == 2);
  CHECK(playlist.media_sequence == playlist.entries.front().msn);
  double previous_end = -1;
  int64_t previous_msn = -1;
  for (const auto& entry : playlist.entries) {
    INFO("msn " << entry.msn);
    CHECK(!entry.program_date_time.empty());
    CHECK(entry.duration == Approx(2.0).margin(0.05));
    if (previous_msn >= 0) CHECK(entry.msn == previous_msn + 1);
    previous_msn = entry.msn;
    auto seg = Http("GET", node.http, "/news/ch1/v1/" + std::to_string(entry.msn) + ".ts");
    REQUIRE(seg.status == 200);
    CHECK(seg.headers["Content-Type"] == "video/mp2t");
    std::string file = dir + "/" + std::to_string(entry.msn) + ".ts";
    WriteFile(file, seg.body);
    auto probe = Probe(file);
    REQUIRE(probe.contains("streams"));
    std::map<std::string, std::string> codecs;
    for (const auto& s : probe["streams"]) codecs[s["codec_type"]] = s["codec_name"];
    CHECK(codecs["video"] == "h264");
    CHECK(codecs["audio"] == "aac");
    CHECK(probe["first_video_frame"]["key_frame"] == 1);  // S-8: starts with a keyframe
    double start = std::stod(probe["streams"][0]["start_time"].get<std::string>());
    for (const auto& s : probe["streams"]) {
      if (s["codec_type"] == "video") start = std::stod(s["start_time"].get<std::string>());
    }
    if (previous_end >= 0) CHECK(start == Approx(previous_end).margin(0.05));  // continuous
    previous_end = start + entry.duration;
  }

  // S-22: Range and gzip for browser players; CORS preflight.
  std::string first = "/news/ch1/v1/" + std::to_string(playlist.entries.front().msn) + ".ts";
  auto range = Http("GET", node.http, first, "", {{"Range", "bytes=188-375"}});
  CHECK(range.status == 206);
  CHECK(range.body.size() == 188);
  CHECK(range.body[0] == 0x47);
  CHECK(Http("GET", node.http, first, "", {{"Range", "bytes=999999999-"}}).status == 416);
  auto gz = Http("GET", node.http, "/news/ch1/v1/index.m3u8", "", {{"Accept-Encoding", "gzip"}});
  CHECK(gz.headers["Content-Encoding"] == "gzip");
  auto preflight = Http("OPTIONS", node.http, first, "",
                        {{"Origin", "http://x"}, {"Access-Control-Request-Method", "GET"}});
  CHECK(preflight.status == 204);
  CHECK(preflight.headers["Access-Control-Allow-Origin"] == "*");
  // Unknown stream and out-of-window segment.
  CHECK(Http("GET", node.http, "/nope/index.m3u8").status == 404);
  auto before = Http("GET", node.http, "/news/ch1/v1/1.ts");
  INFO(before.body << " / playlist: " << Http("GET", node.http, "/news/ch1/v1/index.m3u8").body);
  CHECK(before.status == 410);  // L-9: before the start

  // The load report carries the stream (S-6, C-2): working, codecs, bitrate, fingerprint.
  auto report = Http("GET", central.http, "/central/api-v4/streamers/ingest-1").Json();
  auto streams = report["status"]["report"]["streams"];
  REQUIRE(streams.size() == 1);
  CHECK(streams[0]["working"] == true);
  CHECK(!streams[0]["timeline_fingerprint"].get<std::string>().empty());
  CHECK(streams[0]["renditions"][0]["bitrate_kbit"].get<int>() > 0);
}

TEST_CASE(
    "S-5 two streamers of a stream fed the same source 7 s apart agree on the timeline and print "
    "the same wall-clock program date-time") {
  auto dir = MakeTempDir("s5");
  auto central = StartCentral(dir);
  auto a = StartIngestWithStream(central, "ingest-a", "s5");
  auto b = StartIngestWithStream(central, "ingest-b", "s5");
  const std::string& source = SourceTs(40);  // PTS from 1.4 s: nothing to do with the date
  const auto a_started = std::chrono::steady_clock::now();
  auto push_a = PushFile(source, a.publish, "s5");
  REQUIRE(Eventually([&] { return HasSegments(a, "s5", 3); }, 20s));
  CheckNewestIsWallClock(Playlist(a, "s5"), 3000);

  // Central keeps A's proposal as the stream's anchor and pushes it to B (B applied a
  // revision at least that of the anchor's write before its source starts).
  nlohmann::json anchor;
  REQUIRE(Eventually(
      [&] {
        anchor = Http("GET", central.http, "/central/api-v4/streams/s5").Json()["timeline_anchor"];
        return anchor.is_object();
      },
      10s));
  const auto revision = Http("GET", central.http, "/central/api-v4/config").Json()["revision"];
  REQUIRE(Eventually([&] { return NodeStatus(central, "ingest-b")["revision"] >= revision; }, 10s));
  // A dates its segments with it.
  CHECK(Eventually([&] { return ReportedAnchor(central, "ingest-a", "s5") == anchor; }, 5s));

  // B joins the same source 7 s after A: the scenario's own timing, not a wait for an event.
  std::this_thread::sleep_until(a_started + 7s);
  auto push_b = PushFile(source, b.publish, "s5", {"-ss", "7"});
  REQUIRE(Eventually([&] { return HasSegments(b, "s5", 4); }, 25s));
  CheckNewestIsWallClock(Playlist(b, "s5"), 4000);
  // B adopted the stream's anchor; central's stays the first one.
  CHECK(ReportedAnchor(central, "ingest-b", "s5") == anchor);
  CHECK(Http("GET", central.http, "/central/api-v4/streams/s5").Json()["timeline_anchor"] ==
        anchor);

  const int common = CheckSameTimeline(a, b, "s5", dir);
  INFO("segments both nodes hold: " << common);
  CHECK(common >= 2);
}

size_t CountOf(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

TEST_CASE(
    "S-7 S-16a a source cut for 5 s resumes with the msn continuing, a discontinuity and a new "
    "DASH Period") {
  auto dir = MakeTempDir("s7");
  auto central = StartCentral(dir);
  auto node = StartIngestWithStream(central, "ingest-1", "s7");
  {
    auto push = PushFile(SourceTs(40), node.publish, "s7", {"-t", "9"});
    REQUIRE(Eventually([&] { return HasSegments(node, "s7", 3); }, 20s));
    push->Wait();
  }
  auto before = Playlist(node, "s7");
  REQUIRE(!before.entries.empty());
  auto mpd_before = Http("GET", node.http, "/s7/index.mpd").body;
  INFO(mpd_before);
  REQUIRE(CountOf(mpd_before, "<Period ") == 1);
  const std::string ast = MpdAttr(mpd_before, "MPD", "availabilityStartTime");
  CHECK(ast.rfind("20", 0) == 0);  // a real date (S-16a), not 1970
  // The window survives the loss (S-7): still served during the gap.
  REQUIRE(Eventually([] { return false; }, 5s) == false);  // the 5 s cut itself
  CHECK(Playlist(node, "s7").entries.size() == before.entries.size());
  // The source returns (a new encoder run: its timestamps start over).
  auto push = PushFile(SourceTs(40), node.publish, "s7");
  REQUIRE(Eventually(
      [&] {
        auto p = Playlist(node, "s7");
        return !p.entries.empty() && p.entries.back().msn > before.entries.back().msn + 2;
      },
      20s));
  auto after = Playlist(node, "s7");
  bool discontinuity = false;
  for (size_t i = 1; i < after.entries.size(); ++i) {
    CHECK(after.entries[i].msn > after.entries[i - 1].msn);  // never backwards
    discontinuity |= after.entries[i].discontinuity;
  }
  CHECK(discontinuity);
  CHECK(after.entries.front().msn >= before.entries.front().msn);
  // DASH: the publisher's return is a new Period; the first timeline's availability start
  // and Period did not move.
  auto mpd_after = Http("GET", node.http, "/s7/index.mpd").body;
  INFO(mpd_after);
  REQUIRE(CountOf(mpd_after, "<Period ") == 2);
  CHECK(MpdAttr(mpd_after, "MPD", "availabilityStartTime") == ast);
  CHECK(MpdAttr(mpd_after, "Period", "id", 0) == MpdAttr(mpd_before, "Period", "id", 0));
  CHECK(MpdAttr(mpd_after, "Period", "start", 0) == "PT0S");
  CHECK(MpdAttr(mpd_after, "Period", "id", 1) != MpdAttr(mpd_after, "Period", "id", 0));
  CHECK(MpdAttr(mpd_after, "Period", "start", 1) != "PT0S");
}

}  // namespace
}  // namespace meshwork::testing
