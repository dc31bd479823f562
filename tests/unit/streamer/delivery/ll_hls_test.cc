// LL-HLS playlists and blocking-reload rules (S-11, S-12) on hand-built windows.
#include "streamer/delivery/ll_hls.h"

#include <catch2/catch.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/status/status_map.h"
#include "tests/unit/streamer/delivery/window_parts.h"

namespace meshwork::streamer {
namespace {

// `complete` segments of 2 s (4 parts each) from msn 100, then an open segment with `open`
// parts.
std::shared_ptr<RenditionWindow> LlWindow(const std::string& name, int complete, int open) {
  auto w = std::make_shared<RenditionWindow>();
  w->info.name = name;
  w->info.live_window = 6;
  w->info.init = std::make_shared<const std::string>("init");
  for (int i = 0; i < complete; ++i) {
    auto s = std::make_shared<Segment>();
    s->msn = 100 + i;
    s->start = s->msn * 180'000;
    s->duration = 180'000;
    s->program_date_time_ms = s->start / 90;
    for (int p = 0; p < 4; ++p)
      s->parts.push_back(testing::TestPart(p, s->start + p * 45'000, p == 0));
    w->segments.push_back(s);
  }
  if (open > 0) {
    w->open_msn = 100 + complete;
    w->open_start = w->open_msn * 180'000;
    for (int p = 0; p < open; ++p)
      w->open_parts.push_back(testing::TestPart(p, w->open_start + p * 45'000, p == 0));
  }
  return w;
}

int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST_CASE("S-11 the LL-HLS media playlist: server control, parts, preload hint, reports") {
  auto v1 = LlWindow("v1", 8, 2);
  auto v2 = LlWindow("v2", 8, 1);
  std::string text = LowLatencyMediaPlaylist(*v1, {v1, v2}, false);
  CHECK(text.find("#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.500,"
                  "CAN-SKIP-UNTIL=12.0") != std::string::npos);
  CHECK(text.find("#EXT-X-PART-INF:PART-TARGET=0.500") != std::string::npos);
  CHECK(text.find("#EXT-X-MEDIA-SEQUENCE:102") != std::string::npos);  // the last 6
  CHECK(text.find("#EXT-X-MAP:URI=\"init.mp4\"") != std::string::npos);
  // Parts only for the segments that start within the last three target durations (6 s)
  // of the playlist, the open segment's parts included: the playlist ends 1 s into 108, so
  // 106 and 107 whole (105 starts 7 s before the end: none of its parts).
  CHECK(Count(text, "#EXT-X-PART:") == 2 * 4 + 2);
  CHECK(text.find("URI=\"105.3.m4s\"") == std::string::npos);
  CHECK(text.find("URI=\"106.0.m4s\",INDEPENDENT=YES") != std::string::npos);
  CHECK(text.find("#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"108.2.m4s\"") != std::string::npos);
  CHECK(text.find("#EXT-X-RENDITION-REPORT:URI=\"../v2/index.ll.m3u8\",LAST-MSN=108,LAST-PART=0") !=
        std::string::npos);
  CHECK(Count(text, "#EXT-X-RENDITION-REPORT") == 1);  // not for itself
}

TEST_CASE(
    "S-13 a segment whose last part is out before its .m4s is listed complete, with the next "
    "segment hinted") {
  // The packager publishes a segment's last part, then the segment (.m4s): a playlist made
  // between the two lists the segment as it will be listed a moment later, so that a player
  // asks for part 0 of the next segment rather than a part that never comes (404).
  auto v1 = LlWindow("v1", 8, 4);
  std::string open = LowLatencyMediaPlaylist(*v1, {v1}, false);
  CHECK(open.find("#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"108.4.m4s\"") != std::string::npos);
  CHECK(open.find("\n108.m4s") == std::string::npos);
  auto last = std::make_shared<Part>(*v1->open_parts.back());
  last->last = true;
  v1->open_parts.back() = last;
  for (bool jump : {false, true}) {
    v1->open_discontinuity = jump;
    std::string text = LowLatencyMediaPlaylist(*v1, {v1}, false);
    INFO(text);
    CHECK(text.find("#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"109.0.m4s\"") != std::string::npos);
    CHECK(text.find("108.4.m4s") == std::string::npos);
    // 108 whole: its four parts, then its EXTINF (2 s) and URI.
    const size_t extinf = text.find("#EXTINF:2.00000,\n108.m4s");
    CHECK(extinf != std::string::npos);
    CHECK(text.find("URI=\"108.3.m4s\"") < extinf);
    CHECK(text.find("#EXT-X-MEDIA-SEQUENCE:103") != std::string::npos);  // still 6 listed
    CHECK((text.find("#EXT-X-DISCONTINUITY\n") != std::string::npos) == jump);
  }
}

// A media playlist read back: each segment's duration and parts (duration, independent),
// then the open segment's parts.
struct ReadBack {
  double target = 0;
  struct Entry {
    double duration = 0;
    std::vector<std::pair<double, bool>> parts;
  };
  std::vector<Entry> segments;
  std::vector<std::pair<double, bool>> open_parts;
};

double AttrNumber(const std::string& line, const std::string& name) {
  size_t at = line.find(name + "=");
  return at == std::string::npos ? -1 : std::stod(line.substr(at + name.size() + 1));
}

ReadBack ReadPlaylist(const std::string& text) {
  ReadBack out;
  std::istringstream in(text);
  std::vector<std::pair<double, bool>> pending;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#EXT-X-TARGETDURATION:", 0) == 0) out.target = std::stod(line.substr(22));
    if (line.rfind("#EXT-X-PART:", 0) == 0) {
      pending.emplace_back(AttrNumber(line, "DURATION"),
                           line.find("INDEPENDENT=YES") != std::string::npos);
    }
    if (line.rfind("#EXTINF:", 0) == 0) {
      out.segments.push_back({std::stod(line.substr(8)), std::move(pending)});
      pending.clear();
    }
  }
  out.open_parts = std::move(pending);
  return out;
}

TEST_CASE("S-11 LL-HLS parts are listed by whole segments, none older than 3 target durations") {
  // The rule hls-parser applies (RFC 8216bis §4.4.4.9), over windows ending at every part
  // position of the open segment.
  for (int open = 0; open <= 3; ++open) {
    INFO("open parts: " << open);
    auto w = LlWindow("v1", 8, open);
    ReadBack pl = ReadPlaylist(LowLatencyMediaPlaylist(*w, {w}, false));
    REQUIRE(pl.target > 0);
    REQUIRE(pl.segments.size() == 6);
    double end = 0;
    for (const auto& s : pl.segments) end += s.duration;
    for (const auto& p : pl.open_parts) end += p.first;
    double start = 0;  // of each segment, from the playlist's first
    int with_parts = 0;
    for (size_t i = 0; i < pl.segments.size(); ++i) {
      const auto& s = pl.segments[i];
      INFO("segment " << i);
      if (!s.parts.empty()) {
        ++with_parts;
        CHECK(end - start <= 3 * pl.target + 1e-6);  // no part older than 3 target durations
        CHECK(s.parts.front().second);               // the first listed part is independent
        double sum = 0;
        for (const auto& p : s.parts) sum += p.first;
        CHECK(sum == Approx(s.duration).margin(1e-3));  // the parts add up to the EXTINF
        CHECK((i + 1 == pl.segments.size() || !pl.segments[i + 1].parts.empty()));
      }
      start += s.duration;
    }
    // Parts still cover well over PART-HOLD-BACK (3 part targets): two whole segments at least.
    CHECK(with_parts >= 2);
    CHECK(static_cast<int>(pl.open_parts.size()) == open);
  }
}

TEST_CASE("S-16a the LL-HLS master lists the audio rendition as an EXT-X-MEDIA audio group") {
  auto v1 = LlWindow("v1", 2, 0);
  v1->info.tracks = {testing::TestTrack(true), testing::TestTrack(false)};
  v1->info.cmaf_tracks = {testing::TestTrack(true)};
  v1->peak_bitrate_bps = 2'000'000;
  auto a1 = LlWindow("a1", 2, 0);
  a1->info.cmaf_tracks = {testing::TestTrack(false)};
  a1->peak_bitrate_bps = 128'000;
  std::string text = LowLatencyMasterPlaylist({a1, v1});
  INFO(text);
  CHECK(text.find("#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"audio\",NAME=\"audio\",DEFAULT=YES,"
                  "AUTOSELECT=YES,CHANNELS=\"2\",URI=\"a1/index.ll.m3u8\"\n") != std::string::npos);
  CHECK(text.find("#EXT-X-STREAM-INF:BANDWIDTH=2128000,CODECS=\"avc1.64001f,mp4a.40.2\","
                  "RESOLUTION=1280x720,FRAME-RATE=25.000,AUDIO=\"audio\"\nv1/index.ll.m3u8\n") !=
        std::string::npos);
  CHECK(Count(text, "#EXT-X-STREAM-INF") == 1);  // the audio is not a variant of its own

  // An audio-only source: its one rendition is the variant.
  auto alone = LlWindow("v1", 2, 0);
  alone->info.tracks = alone->info.cmaf_tracks = {testing::TestTrack(false)};
  std::string audio_only = LowLatencyMasterPlaylist({alone});
  CHECK(audio_only.find("#EXT-X-MEDIA") == std::string::npos);
  CHECK(audio_only.find("CODECS=\"mp4a.40.2\"\nv1/index.ll.m3u8") != std::string::npos);
}

TEST_CASE("S-12 delta updates skip what is older than CAN-SKIP-UNTIL") {
  auto w = LlWindow("v1", 12, 0);
  w->info.live_window = 12;
  std::string full = LowLatencyMediaPlaylist(*w, {w}, false);
  std::string delta = LowLatencyMediaPlaylist(*w, {w}, true);
  CHECK(full.find("EXT-X-SKIP") == std::string::npos);
  CHECK(delta.find("#EXT-X-SKIP:SKIPPED-SEGMENTS=5") != std::string::npos);
  CHECK(delta.find("\n100.m4s") == std::string::npos);
  CHECK(delta.find("\n111.m4s") != std::string::npos);
  // With nothing open, the hint is part 0 of the next segment.
  CHECK(delta.find("#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"112.0.m4s\"") != std::string::npos);
}

TEST_CASE("S-12 delivery directives are parsed strictly") {
  auto r = ParseBlockingRequest("_HLS_msn=105&_HLS_part=2&_HLS_skip=YES");
  REQUIRE(r.ok());
  CHECK(*r->msn == 105);
  CHECK(*r->part == 2);
  CHECK(r->skip);
  auto orphan = ParseBlockingRequest("_HLS_part=1");
  CHECK(orphan.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(FieldOf(orphan.status()) == "_HLS_part");
  for (const char* bad : {"_HLS_msn=", "_HLS_msn=-1", "_HLS_msn=1x", "_HLS_msn=1&_HLS_part=a",
                          "_HLS_skip=NO", "_HLS_msn=99999999999999999999"}) {
    INFO(bad);
    CHECK_FALSE(ParseBlockingRequest(bad).ok());
  }
  CHECK(ParseBlockingRequest("").ok());
  CHECK(ParseBlockingRequest("other=1&x").ok());
}

TEST_CASE("S-12 what a blocking request waits for") {
  Position last{108, 1};  // part 1 of the open segment 108
  auto target = [&](int64_t msn, std::optional<int> part) {
    BlockingRequest r;
    r.msn = msn;
    r.part = part;
    return BlockingTarget(r, last, 2000, 500);
  };
  // Satisfied already / waits.
  CHECK(target(107, std::nullopt)->ReachedBy(last));
  CHECK_FALSE(target(108, std::nullopt)->ReachedBy(last));  // the segment is not complete
  CHECK(target(108, 1)->ReachedBy(last));
  CHECK_FALSE(target(108, 2)->ReachedBy(last));
  // A part index past the last part of a segment is part 0 of the next.
  auto rollover = target(108, 4);
  REQUIRE(rollover.ok());
  CHECK(rollover->msn == 109);
  CHECK(rollover->part == 0);
  // More than two segments ahead → 400; the advance part limit → 400.
  CHECK(target(110, std::nullopt).ok());
  CHECK(FieldOf(target(111, std::nullopt).status()) == "_HLS_msn");
  CHECK(target(110, 3).ok());        // the furthest part two segments ahead
  CHECK_FALSE(target(110, 4).ok());  // rolls over to 111: three segments ahead
}

TEST_CASE("P-9 a tune-in playlist request waits for the next part only when it is due soon") {
  // 333 ms parts, held when the next part is due within half a part target (the default).
  CHECK_FALSE(TuneInHoldMs(0, 333, 50));    // just published: the edge is fresh already
  CHECK_FALSE(TuneInHoldMs(100, 333, 50));  // due in 233 ms > 166 ms: at once
  auto held = TuneInHoldMs(200, 333, 50);   // due in 133 ms: until then plus half a part
  REQUIRE(held);
  CHECK(*held == 133 + 166);
  auto late = TuneInHoldMs(5000, 333, 50);  // overdue (a stalled source): half a part at most
  REQUIRE(late);
  CHECK(*late == 166);
  // 100 % always waits, never past 1.5 part targets; 0 % never does.
  auto always = TuneInHoldMs(0, 333, 100);
  REQUIRE(always);
  CHECK(*always == 333 + 166);
  auto stepped_back = TuneInHoldMs(-20, 333, 100);  // a clock step back reads as age 0
  REQUIRE(stepped_back);
  CHECK(*stepped_back == 333 + 166);
  CHECK_FALSE(TuneInHoldMs(332, 333, 0));
  CHECK_FALSE(TuneInHoldMs(332, 0, 50));  // no part target: nothing to wait for
  // The boundary: due exactly at the share waits.
  CHECK(TuneInHoldMs(50, 100, 50));
  CHECK_FALSE(TuneInHoldMs(49, 100, 50));
}

}  // namespace
}  // namespace meshwork::streamer
