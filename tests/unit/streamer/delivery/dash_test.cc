// DASH MPD (S-16, S-16a) on hand-built windows.
#include "streamer/delivery/dash.h"

#include <catch2/catch.hpp>
#include <string>

#include "streamer/delivery/playlists.h"

namespace meshwork::streamer {
namespace {

constexpr int64_t kPhase = 15'570;  // keyframes 173 ms after each 2 s multiple
// The wall clock (Unix ms) at T = 0 of the fixtures' media timeline: 2026-11-29T15:00:00Z
// minus the timeline's first segment start, so program date-times are real dates.
constexpr int64_t kWallAtZero = 1'795'964'400'000 - (897'982'219LL * 2000 + kPhase / 90);

media::TrackInfo Video(int width, int height, const std::string& codec) {
  media::TrackInfo t;
  t.codec = media::Codec::kH264;
  t.codec_string = codec;
  t.width = width;
  t.height = height;
  t.frame_rate = 25;
  return t;
}

media::TrackInfo Audio() {
  media::TrackInfo t;
  t.codec = media::Codec::kAac;
  t.codec_string = "mp4a.40.2";
  t.sample_rate = 48000;
  t.channels = 2;
  return t;
}

struct WindowSpec {
  std::string name = "v1";
  int64_t first = 897'982'219;  // msn of the first segment held
  int count = 4;
  std::optional<media::TrackInfo> video = Video(1280, 720, "avc1.64001f");
  uint64_t peak_bps = 2'500'000;
  int64_t phase = kPhase;
  int64_t origin_msn = 897'982'219;  // the timeline began with this segment
  // From this msn on, a second timeline: the media timeline resumes `jump` ticks further
  // and the wall clock with it (a publisher reconnect).
  std::optional<int64_t> discontinuity_at;
  int64_t jump = 0;
  bool parts = true;  // made of 4 parts each (a packager publishing whole segments: false)
};

// Segments of 2 s starting at msn·180000 + phase, program date-times from kWallAtZero.
std::shared_ptr<const RenditionWindow> DashWindow(const WindowSpec& spec) {
  auto w = std::make_shared<RenditionWindow>();
  w->info.name = spec.name;
  if (spec.video) {
    w->info.tracks = {*spec.video, Audio()};
    w->info.cmaf_tracks = {*spec.video};
  } else {
    w->info.cmaf_tracks = {Audio()};
  }
  w->info.target_duration_ms = 2000;
  w->info.part_target_ms = 500;
  w->info.live_window = 6;
  w->info.init = std::make_shared<const std::string>("init");
  int64_t origin = spec.origin_msn * 180'000 + spec.phase;
  for (int i = 0; i < spec.count; ++i) {
    auto s = std::make_shared<Segment>();
    s->msn = spec.first + i;
    s->start = s->msn * 180'000 + spec.phase;
    if (spec.discontinuity_at && s->msn >= *spec.discontinuity_at) {
      s->start += spec.jump;
      s->discontinuity = s->msn == *spec.discontinuity_at;
      if (s->discontinuity) origin = s->start;
    }
    s->duration = 180'000;
    s->timeline_origin = origin;
    s->program_date_time_ms = kWallAtZero + s->start / 90;
    s->m4s_bytes = 3;  // the CMAF form was published
    for (int p = 0; spec.parts && p < 4; ++p) {
      auto part = std::make_shared<Part>();
      part->index = p;
      part->start = s->start + p * 45'000;
      part->duration = 45'000;
      s->parts.push_back(part);
    }
    w->segments.push_back(s);
  }
  w->peak_bitrate_bps = spec.peak_bps;
  return w;
}

// v1, v2 (video) and a1 (audio) with the same segments.
std::vector<std::shared_ptr<const RenditionWindow>> Stream(WindowSpec spec = {}) {
  WindowSpec v2 = spec, a1 = spec;
  v2.name = "v2";
  v2.video = Video(640, 360, "avc1.64001e");
  v2.peak_bps = 900'000;
  a1.name = "a1";
  a1.video.reset();
  a1.peak_bps = 128'000;
  return {DashWindow(spec), DashWindow(v2), DashWindow(a1)};
}

// The value of attribute `name` in the first element `<tag ...>` (loosely: no nesting of the
// same tag name before it); "" when absent.
std::string Attr(const std::string& xml, const std::string& tag, const std::string& name,
                 size_t nth = 0) {
  size_t pos = 0;
  for (size_t i = 0;; ++i) {
    pos = xml.find("<" + tag + " ", pos);
    if (pos == std::string::npos) return "";
    if (i == nth) break;
    ++pos;
  }
  size_t end = xml.find('>', pos);
  std::string element = xml.substr(pos, end - pos);
  size_t a = element.find(" " + name + "=\"");
  if (a == std::string::npos) return "";
  a += name.size() + 3;
  return element.substr(a, element.find('"', a) - a);
}

size_t CountIn(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("S-16 L-6 a new stream's time-shift window starts at its first listed segment") {
  // The packager dropped the timeline's first segment (its tracks were not all known yet);
  // two segments are listed, the second one's first part is out.
  WindowSpec spec;
  spec.first = spec.origin_msn + 1;
  spec.count = 2;
  auto windows = Stream(spec);
  const int64_t first_start_ms = windows[0]->segments[0]->program_date_time_ms;
  DashOptions options;
  options.now_unix_ms = first_start_ms + 4'500;
  std::string mpd = DashManifest(windows, options);
  INFO(mpd);
  CHECK(Attr(mpd, "MPD", "timeShiftBufferDepth") == "PT2.5S");
  // A player's window begins a segment before its live edge less the time-shift depth: the
  // start of the first listed segment, so it never asks for the dropped one before it.
  CHECK(options.now_unix_ms - 2'500 - 2'000 >= first_start_ms);
  // Long after the start, the whole live window.
  options.now_unix_ms = first_start_ms + 60'000;
  CHECK(Attr(DashManifest(windows, options), "MPD", "timeShiftBufferDepth") == "PT12S");
}

TEST_CASE(
    "S-16 S-16a the MPD is dynamic with $Number$ templates, UTCTiming and one media type per "
    "AdaptationSet") {
  DashOptions options;
  options.time_url = "/time";
  options.now_unix_ms = 1'795'964'445'123;
  std::string mpd = DashManifest(Stream(), options);
  INFO(mpd);

  CHECK(mpd.rfind("<?xml", 0) == 0);
  CHECK(Attr(mpd, "MPD", "xmlns") == "urn:mpeg:dash:schema:mpd:2011");
  CHECK(Attr(mpd, "MPD", "profiles") == "urn:mpeg:dash:profile:isoff-live:2011");
  CHECK(Attr(mpd, "MPD", "type") == "dynamic");
  // The wall clock where the timeline began: a real date (S-16a), not 1970.
  CHECK(Attr(mpd, "MPD", "availabilityStartTime") == "2026-11-29T15:00:00Z");
  CHECK(Attr(mpd, "MPD", "publishTime") == "2026-11-29T15:00:45.123Z");
  CHECK(Attr(mpd, "MPD", "minimumUpdatePeriod") == "PT2S");
  CHECK(Attr(mpd, "MPD", "timeShiftBufferDepth") == "PT12S");
  CHECK(Attr(mpd, "MPD", "maxSegmentDuration") == "PT2S");
  CHECK(Attr(mpd, "MPD", "minBufferTime") == "PT2S");
  CHECK_FALSE(Attr(mpd, "MPD", "suggestedPresentationDelay").empty());
  CHECK_FALSE(Attr(mpd, "Latency", "target").empty());

  CHECK(CountIn(mpd, "<Period ") == 1);
  CHECK(Attr(mpd, "Period", "start") == "PT0S");
  // S-16a: video and audio in AdaptationSets of their own (dash.js 5 refuses a
  // Representation whose codecs name both).
  CHECK(CountIn(mpd, "<AdaptationSet ") == 2);
  CHECK(Attr(mpd, "AdaptationSet", "contentType", 0) == "video");
  CHECK(Attr(mpd, "AdaptationSet", "mimeType", 0) == "video/mp4");
  CHECK(Attr(mpd, "AdaptationSet", "contentType", 1) == "audio");
  CHECK(Attr(mpd, "AdaptationSet", "mimeType", 1) == "audio/mp4");

  CHECK(Attr(mpd, "SegmentTemplate", "timescale") == "90000");
  CHECK(Attr(mpd, "SegmentTemplate", "media") == "$RepresentationID$/$Number$.m4s");
  CHECK(Attr(mpd, "SegmentTemplate", "initialization") == "$RepresentationID$/init.mp4");
  CHECK(Attr(mpd, "SegmentTemplate", "startNumber") == "897982219");
  CHECK(Attr(mpd, "SegmentTemplate", "duration") == "180000");
  CHECK(Attr(mpd, "SegmentTemplate", "presentationTimeOffset") ==
        std::to_string(897'982'219LL * 180'000 + kPhase));
  CHECK(Attr(mpd, "SegmentTemplate", "availabilityTimeOffset") == "1.5");
  CHECK(Attr(mpd, "SegmentTemplate", "availabilityTimeComplete") == "false");

  CHECK(CountIn(mpd, "<Representation ") == 3);
  CHECK(Attr(mpd, "Representation", "id", 0) == "v1");
  CHECK(Attr(mpd, "Representation", "bandwidth", 0) == "2500000");
  CHECK(Attr(mpd, "Representation", "codecs", 0) == "avc1.64001f");
  CHECK(Attr(mpd, "Representation", "width", 0) == "1280");
  CHECK(Attr(mpd, "Representation", "height", 0) == "720");
  CHECK(Attr(mpd, "Representation", "frameRate", 0) == "25");
  CHECK(Attr(mpd, "Representation", "id", 1) == "v2");
  CHECK(Attr(mpd, "Representation", "codecs", 1) == "avc1.64001e");
  CHECK(Attr(mpd, "Representation", "id", 2) == "a1");
  CHECK(Attr(mpd, "Representation", "codecs", 2) == "mp4a.40.2");
  CHECK(Attr(mpd, "Representation", "audioSamplingRate", 2) == "48000");
  CHECK(Attr(mpd, "AudioChannelConfiguration", "value") == "2");
  for (size_t i = 0; i < 3; ++i) {
    std::string codecs = Attr(mpd, "Representation", "codecs", i);
    CHECK_FALSE(
        (codecs.find("avc1") != std::string::npos && codecs.find("mp4a") != std::string::npos));
  }

  CHECK(Attr(mpd, "UTCTiming", "schemeIdUri") == "urn:mpeg:dash:utc:http-iso:2014");
  CHECK(Attr(mpd, "UTCTiming", "value") == "/time");
  CHECK(CountIn(mpd, "<MPD ") == 1);
  CHECK(CountIn(mpd, "</MPD>") == 1);
}

TEST_CASE("S-16a availabilityStartTime and the Period do not move while the window slides") {
  DashOptions options;
  options.now_unix_ms = 1'795'964'445'123;
  WindowSpec spec;
  spec.first = 897'982'219 + 3;
  std::string before = DashManifest(Stream(spec), options);
  std::string ast = Attr(before, "MPD", "availabilityStartTime");
  CHECK(ast == "2026-11-29T15:00:00Z");
  for (int step = 1; step <= 20; ++step) {
    spec.first = 897'982'219 + 3 + step;  // the window moved on by `step` segments
    std::string mpd = DashManifest(Stream(spec), options);
    INFO("step " << step << "\n" << mpd);
    CHECK(Attr(mpd, "MPD", "availabilityStartTime") == ast);
    CHECK(Attr(mpd, "Period", "id") == Attr(before, "Period", "id"));
    CHECK(Attr(mpd, "Period", "start") == "PT0S");
    CHECK(Attr(mpd, "SegmentTemplate", "startNumber") == "897982219");
    CHECK(Attr(mpd, "SegmentTemplate", "presentationTimeOffset") ==
          Attr(before, "SegmentTemplate", "presentationTimeOffset"));
  }
}

TEST_CASE("S-16a a discontinuity starts a new Period with its own presentationTimeOffset") {
  DashOptions options;
  options.now_unix_ms = 1'795'964'445'123;
  WindowSpec spec;
  spec.count = 6;
  spec.discontinuity_at = 897'982'219 + 3;
  spec.jump = 7 * 90'000 + 12'345;  // the publisher came back 7.137 s of media later
  std::string mpd = DashManifest(Stream(spec), options);
  INFO(mpd);
  REQUIRE(CountIn(mpd, "<Period ") == 2);
  CHECK(Attr(mpd, "MPD", "availabilityStartTime") == "2026-11-29T15:00:00Z");
  CHECK(Attr(mpd, "Period", "start", 0) == "PT0S");
  // The second timeline began 3 segments (6 s) plus the jump later on the wall clock.
  CHECK(Attr(mpd, "Period", "start", 1) == "PT13.137S");
  CHECK(Attr(mpd, "Period", "id", 0) != Attr(mpd, "Period", "id", 1));
  // Its numbering starts at the first segment after the jump, where its media starts.
  size_t second = mpd.find("<Period ", mpd.find("<Period ") + 1);
  std::string tail = mpd.substr(second);
  CHECK(Attr(tail, "SegmentTemplate", "startNumber") == "897982222");
  CHECK(Attr(tail, "SegmentTemplate", "presentationTimeOffset") ==
        std::to_string(897'982'222LL * 180'000 + kPhase + spec.jump));
  // Each Period has both media types.
  CHECK(CountIn(tail, "<AdaptationSet ") == 2);
}

TEST_CASE(
    "S-16 L-4 segment N is announced whole when it is, on the wall clock of its program "
    "date-time") {
  DashOptions options;
  for (int64_t phase : {0, 15'570, 90'000, 179'999}) {
    WindowSpec spec;
    spec.phase = phase;
    spec.first = 897'982'219 + 5;
    auto w = DashWindow(spec);
    std::string mpd = DashManifest({w}, options);
    INFO("phase " << phase << "\n" << mpd);
    int64_t ast = kWallAtZero + (897'982'219LL * 180'000 + phase) / 90;
    std::string expected = DashTimeBody(ast);
    if (expected.ends_with(".000Z")) expected = expected.substr(0, expected.size() - 5) + "Z";
    CHECK(Attr(mpd, "MPD", "availabilityStartTime") == expected);
    for (const auto& s : w->segments) {
      // Wall clock at which the template says N is whole: AST + (N − startNumber + 1)·d.
      int64_t announced = ast + (s->msn - 897'982'219 + 1) * 2000;
      CHECK(announced == s->program_date_time_ms + s->duration / 90);
    }
  }
}

TEST_CASE(
    "S-16 two nodes with the same segments produce the same availabilityStartTime and numbering") {
  // Each node built its own windows from its own packaging of the same source; node B
  // joined later, so its window holds fewer of the old segments and one more new one.
  auto windows_a = Stream();
  WindowSpec later;
  later.first += 2;
  later.count -= 1;
  auto windows_b = Stream(later);
  REQUIRE(windows_a.front().get() != windows_b.front().get());
  DashOptions a;
  a.now_unix_ms = 1'795'964'445'123;
  DashOptions b;
  b.now_unix_ms = 1'795'964'447'456;
  std::string mpd_a = DashManifest(windows_a, a);
  std::string mpd_b = DashManifest(windows_b, b);
  REQUIRE_FALSE(mpd_a.empty());
  REQUIRE_FALSE(mpd_b.empty());
  INFO("A:\n" << mpd_a << "\nB:\n" << mpd_b);
  CHECK(Attr(mpd_a, "MPD", "publishTime") != Attr(mpd_b, "MPD", "publishTime"));
  // What a player switching between them relies on: one timeline, one numbering.
  for (auto [element, attribute] : std::vector<std::pair<std::string, std::string>>{
           {"MPD", "availabilityStartTime"},
           {"Period", "id"},
           {"Period", "start"},
           {"SegmentTemplate", "startNumber"},
           {"SegmentTemplate", "presentationTimeOffset"},
           {"SegmentTemplate", "timescale"},
           {"SegmentTemplate", "duration"},
           {"SegmentTemplate", "media"}}) {
    INFO(element << "@" << attribute);
    CHECK(Attr(mpd_a, element, attribute) == Attr(mpd_b, element, attribute));
  }
  CHECK_FALSE(Attr(mpd_a, "MPD", "availabilityStartTime").empty());
}

TEST_CASE("S-16 segments without parts are not announced before they are whole") {
  WindowSpec spec;
  spec.parts = false;
  std::string mpd = DashManifest(Stream(spec), DashOptions{});
  INFO(mpd);
  CHECK(Attr(mpd, "SegmentTemplate", "availabilityTimeOffset").empty());
  CHECK(Attr(mpd, "SegmentTemplate", "availabilityTimeComplete").empty());
}

TEST_CASE("S-16 an audio-only stream has one audio AdaptationSet") {
  WindowSpec spec;
  spec.video.reset();
  std::string mpd = DashManifest({DashWindow(spec)}, DashOptions{});
  INFO(mpd);
  CHECK(CountIn(mpd, "<AdaptationSet ") == 1);
  CHECK(Attr(mpd, "AdaptationSet", "contentType") == "audio");
  CHECK(Attr(mpd, "Representation", "codecs") == "mp4a.40.2");
}

TEST_CASE("S-16 no MPD without a segment") {
  DashOptions options;
  CHECK(DashManifest({}, options).empty());
  auto empty = std::make_shared<RenditionWindow>();
  empty->info.name = "v1";
  empty->info.init = std::make_shared<const std::string>("init");
  CHECK(DashManifest({empty, nullptr}, options).empty());
}

TEST_CASE("S-16 attribute values are XML-escaped and the time body has milliseconds") {
  DashOptions options;
  options.time_url = "/time?a=1&b=\"2\"";
  std::string mpd = DashManifest(Stream(), options);
  CHECK(mpd.find("value=\"/time?a=1&amp;b=&quot;2&quot;\"") != std::string::npos);
  CHECK(DashTimeBody(1'795'964'400'123) == "2026-11-29T15:00:00.123Z");
  CHECK(DashTimeBody(0) == "1970-01-01T00:00:00.000Z");
}

}  // namespace meshwork::streamer
