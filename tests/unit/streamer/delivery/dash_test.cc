// DASH MPD (S-16) on hand-built windows.
#include "streamer/delivery/dash.h"

#include <catch2/catch.hpp>
#include <string>

#include "streamer/delivery/playlists.h"

namespace meshwork::streamer {
namespace {

constexpr int64_t kOffset = 15'570;  // keyframes 173 ms after each 2 s multiple

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

// Segments msn first..first+count-1 of 2 s, starting at msn·180000 + phase, the newest
// published at wall-clock `delta_ms` after its end (0: no publish time).
std::shared_ptr<const RenditionWindow> Window(const std::string& name, int64_t first, int count,
                                              media::TrackInfo video, int64_t delta_ms,
                                              uint64_t peak_bps, int64_t phase = kOffset) {
  auto w = std::make_shared<RenditionWindow>();
  w->info.name = name;
  w->info.tracks = {std::move(video), Audio()};
  w->info.target_duration_ms = 2000;
  w->info.part_target_ms = 500;
  w->info.live_window = 6;
  w->info.init = std::make_shared<const std::string>("init");
  for (int i = 0; i < count; ++i) {
    auto s = std::make_shared<Segment>();
    s->msn = first + i;
    s->start = s->msn * 180'000 + phase;
    s->duration = 180'000;
    s->program_date_time_ms = s->start / 90;
    s->m4s = std::make_shared<const std::string>("m4s");
    w->segments.push_back(s);
  }
  w->peak_bitrate_bps = peak_bps;
  if (delta_ms != 0) {
    const Segment& last = *w->segments.back();
    w->last_publish_unix_ms = (last.start + last.duration) / 90 + delta_ms;
  }
  return w;
}

std::vector<std::shared_ptr<const RenditionWindow>> TwoRenditions(int64_t first, int count,
                                                                  int64_t delta_ms) {
  return {Window("v1", first, count, Video(1280, 720, "avc1.64001f"), delta_ms, 2'500'000),
          Window("v2", first, count, Video(640, 360, "avc1.64001e"), delta_ms, 900'000)};
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

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("S-16 the MPD is dynamic with $Number$ templates and UTCTiming") {
  DashOptions options;
  options.time_url = "/time";
  options.now_unix_ms = 1'795'964'445'123;
  // A source whose timestamps are wall-clock based: published 40 ms after the media ends.
  std::string mpd = DashManifest(TwoRenditions(897'982'219, 4, 40), options);
  INFO(mpd);

  CHECK(mpd.rfind("<?xml", 0) == 0);
  CHECK(Attr(mpd, "MPD", "xmlns") == "urn:mpeg:dash:schema:mpd:2011");
  CHECK(Attr(mpd, "MPD", "profiles") == "urn:mpeg:dash:profile:isoff-live:2011");
  CHECK(Attr(mpd, "MPD", "type") == "dynamic");
  // Keyframes 173 ms after the multiples, published 40 ms after the media ends: segment N is
  // whole at wall clock (N+1)·2 s + 213 ms, announced at the next part target.
  CHECK(Attr(mpd, "MPD", "availabilityStartTime") == "1970-01-01T00:00:00.500Z");
  CHECK(Attr(mpd, "MPD", "publishTime") == "2026-11-29T15:00:45.123Z");
  CHECK(Attr(mpd, "MPD", "minimumUpdatePeriod") == "PT2S");
  CHECK(Attr(mpd, "MPD", "timeShiftBufferDepth") == "PT12S");
  CHECK(Attr(mpd, "MPD", "maxSegmentDuration") == "PT2S");
  CHECK(Attr(mpd, "MPD", "minBufferTime") == "PT2S");
  CHECK_FALSE(Attr(mpd, "MPD", "suggestedPresentationDelay").empty());
  CHECK_FALSE(Attr(mpd, "Latency", "target").empty());

  CHECK(Count(mpd, "<Period ") == 1);
  CHECK(Attr(mpd, "Period", "start") == "PT0S");
  CHECK(Count(mpd, "<AdaptationSet ") == 1);
  CHECK(Attr(mpd, "AdaptationSet", "mimeType") == "video/mp4");

  CHECK(Attr(mpd, "SegmentTemplate", "timescale") == "90000");
  CHECK(Attr(mpd, "SegmentTemplate", "media") == "$RepresentationID$/$Number$.m4s");
  CHECK(Attr(mpd, "SegmentTemplate", "initialization") == "$RepresentationID$/init.mp4");
  CHECK(Attr(mpd, "SegmentTemplate", "startNumber") == "0");
  CHECK(Attr(mpd, "SegmentTemplate", "duration") == "180000");
  CHECK(Attr(mpd, "SegmentTemplate", "presentationTimeOffset") == "15570");
  CHECK(Attr(mpd, "SegmentTemplate", "availabilityTimeOffset") == "1.5");
  CHECK(Attr(mpd, "SegmentTemplate", "availabilityTimeComplete") == "false");

  CHECK(Count(mpd, "<Representation ") == 2);
  CHECK(Attr(mpd, "Representation", "id", 0) == "v1");
  CHECK(Attr(mpd, "Representation", "bandwidth", 0) == "2500000");
  CHECK(Attr(mpd, "Representation", "codecs", 0) == "avc1.64001f,mp4a.40.2");
  CHECK(Attr(mpd, "Representation", "width", 0) == "1280");
  CHECK(Attr(mpd, "Representation", "height", 0) == "720");
  CHECK(Attr(mpd, "Representation", "frameRate", 0) == "25");
  CHECK(Attr(mpd, "Representation", "id", 1) == "v2");
  CHECK(Attr(mpd, "Representation", "bandwidth", 1) == "900000");
  CHECK(Attr(mpd, "Representation", "codecs", 1) == "avc1.64001e,mp4a.40.2");
  CHECK(Attr(mpd, "AudioChannelConfiguration", "value") == "2");

  CHECK(Attr(mpd, "UTCTiming", "schemeIdUri") == "urn:mpeg:dash:utc:http-iso:2014");
  CHECK(Attr(mpd, "UTCTiming", "value") == "/time");
  CHECK(Count(mpd, "<MPD ") == 1);
  CHECK(Count(mpd, "</MPD>") == 1);
}

TEST_CASE("S-16 the availability start follows the media timeline's distance to the wall clock") {
  DashOptions options;
  options.now_unix_ms = 1'795'964'445'123;
  SECTION("timestamps behind the wall clock (PTS not wall-clock based)") {
    // Published 326.2 s after the media ends: AST rounds up to the next 0.5 s.
    std::string mpd = DashManifest(TwoRenditions(897'982'219, 4, 326'200), options);
    CHECK(Attr(mpd, "MPD", "availabilityStartTime") == "1970-01-01T00:05:26.500Z");
  }
  SECTION("timestamps ahead of the wall clock") {
    std::string mpd = DashManifest(TwoRenditions(897'982'219, 4, -3'600'000 + 10), options);
    CHECK(Attr(mpd, "MPD", "availabilityStartTime") == "1969-12-31T23:00:00.500Z");
  }
  SECTION("no publish time known: the timeline is taken as the wall clock") {
    std::string mpd = DashManifest(TwoRenditions(897'982'219, 4, 0), options);
    CHECK(Attr(mpd, "MPD", "availabilityStartTime") == "1970-01-01T00:00:00.500Z");
    auto aligned = Window("v1", 897'982'219, 4, Video(640, 360, "avc1.64001e"), 0, 1'000'000, 0);
    mpd = DashManifest({aligned}, options);
    CHECK(Attr(mpd, "MPD", "availabilityStartTime") == "1970-01-01T00:00:00Z");
    CHECK(Attr(mpd, "SegmentTemplate", "presentationTimeOffset") == "0");
  }
  SECTION("numbering closed up after a gap: PTO and AST move by the skipped multiples") {
    auto w = std::make_shared<RenditionWindow>(
        *Window("v1", 1000, 3, Video(640, 360, "avc1.64001e"), 0, 1'000'000));
    // Segment 1003 starts at multiple 1010 (7 multiples skipped).
    auto s = std::make_shared<Segment>(*w->segments.back());
    s->msn = 1003;
    s->start = 1010 * 180'000 + kOffset;
    s->discontinuity = true;
    w->segments.push_back(s);
    std::string mpd = DashManifest({w}, options);
    CHECK(Attr(mpd, "SegmentTemplate", "presentationTimeOffset") == "1275570");
    CHECK(Attr(mpd, "SegmentTemplate", "startNumber") == "0");
    CHECK(Attr(mpd, "MPD", "availabilityStartTime") == "1970-01-01T00:00:14.500Z");
  }
}

// Milliseconds of a "1970-01-01THH:MM:SS[.mmm]Z" value.
int64_t FirstDayMs(const std::string& t) {
  REQUIRE(t.rfind("1970-01-01T", 0) == 0);
  int64_t ms = (std::stoll(t.substr(11, 2)) * 3600 + std::stoll(t.substr(14, 2)) * 60 +
                std::stoll(t.substr(17, 2))) *
               1000;
  if (t[19] == '.') ms += std::stoll(t.substr(20, 3));
  return ms;
}

TEST_CASE("S-16 segment N is announced whole no earlier than it is, and at most a part later") {
  DashOptions options;
  for (int64_t phase : {0, 15'570, 90'000, 179'999}) {
    for (int64_t delta : {1, 40, 499, 500, 501, 326'200, 3'600'000}) {
      auto w =
          Window("v1", 897'982'219, 4, Video(640, 360, "avc1.64001e"), delta, 1'000'000, phase);
      std::string mpd = DashManifest({w}, options);
      INFO("phase " << phase << " delta " << delta << "\n" << mpd);
      const Segment& newest = *w->segments.back();
      int64_t whole_at = (newest.start + newest.duration) / 90 + delta;  // wall clock, ms
      int64_t ast = FirstDayMs(Attr(mpd, "MPD", "availabilityStartTime"));
      int64_t announced = ast + (newest.msn + 1) * 2000;  // AST + (N - startNumber + 1)·d
      CHECK(announced >= whole_at);
      CHECK(announced <= whole_at + 500);  // (sub-millisecond rounding)
      // Number N starts where the segment does on the media timeline.
      int64_t pto = std::stoll(Attr(mpd, "SegmentTemplate", "presentationTimeOffset"));
      CHECK(newest.msn * 180'000 + pto == newest.start);
    }
  }
}

TEST_CASE(
    "S-16 two nodes with the same segments produce the same availabilityStartTime and numbering") {
  auto windows = TwoRenditions(897'982'219, 4, 326'210);
  DashOptions a;
  a.now_unix_ms = 1'795'964'445'123;
  DashOptions b;
  b.now_unix_ms = 1'795'964'447'456;
  std::string mpd_a = DashManifest(windows, a);
  std::string mpd_b = DashManifest(windows, b);
  REQUIRE_FALSE(mpd_a.empty());
  CHECK(Attr(mpd_a, "MPD", "publishTime") != Attr(mpd_b, "MPD", "publishTime"));
  std::string pa = Attr(mpd_a, "MPD", "publishTime");
  std::string pb = Attr(mpd_b, "MPD", "publishTime");
  mpd_a.replace(mpd_a.find(pa), pa.size(), "X");
  mpd_b.replace(mpd_b.find(pb), pb.size(), "X");
  CHECK(mpd_a == mpd_b);

  // A node that received the same segments a little later (different publish times within
  // the same part target) announces the same availability start and numbering.
  auto later = TwoRenditions(897'982'219, 4, 326'260);
  std::string mpd_c = DashManifest(later, a);
  CHECK(Attr(mpd_c, "MPD", "availabilityStartTime") == Attr(mpd_a, "MPD", "availabilityStartTime"));
  CHECK(Attr(mpd_c, "SegmentTemplate", "startNumber") ==
        Attr(mpd_a, "SegmentTemplate", "startNumber"));
  CHECK(Attr(mpd_c, "SegmentTemplate", "presentationTimeOffset") ==
        Attr(mpd_a, "SegmentTemplate", "presentationTimeOffset"));
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
  std::string mpd = DashManifest(TwoRenditions(10, 2, 0), options);
  CHECK(mpd.find("value=\"/time?a=1&amp;b=&quot;2&quot;\"") != std::string::npos);
  CHECK(DashTimeBody(1'795'964'400'123) == "2026-11-29T15:00:00.123Z");
  CHECK(DashTimeBody(0) == "1970-01-01T00:00:00.000Z");
}

}  // namespace meshwork::streamer

namespace meshwork::streamer {
namespace {

// xs:dateTime as the MPD writes it (milliseconds only when not whole seconds).
std::string DateTime(int64_t unix_ms) {
  std::string s = FormatProgramDateTime(unix_ms);
  if (s.size() > 5 && s.compare(s.size() - 5, 5, ".000Z") == 0) s.replace(s.size() - 5, 5, "Z");
  return s;
}

// `w` with every segment dated by `anchor` (as the segmenter does).
std::shared_ptr<const RenditionWindow> Anchored(std::shared_ptr<const RenditionWindow> w,
                                                TimelineAnchor anchor) {
  auto copy = std::make_shared<RenditionWindow>(*w);
  for (auto& s : copy->segments) {
    auto dated = std::make_shared<Segment>(*s);
    dated->anchor = anchor;
    dated->program_date_time_ms = anchor.WallAt(dated->start);
    s = dated;
  }
  return copy;
}

}  // namespace

TEST_CASE("S-16a AnchorNumbering starts at the anchor's segment with the anchor's date") {
  // The anchor point is the start of msn 1000 (phase 15 570): that number, that date.
  TimelineAnchor on{1000 * 180'000 + kOffset, 1'795'964'000'000};
  auto n = AnchorNumbering(on, kOffset, 180'000);
  CHECK(n.start_number == 1000);
  CHECK(n.presentation_time_offset == on.t90k);
  CHECK(n.availability_start_ms == on.wall_ms);
  // One tick later: the next number, a segment duration later.
  TimelineAnchor after{on.t90k + 1, on.wall_ms};
  n = AnchorNumbering(after, kOffset, 180'000);
  CHECK(n.start_number == 1001);
  CHECK(n.availability_start_ms == on.wall_ms + 2000);  // (rounded up from 1999.99 ms)
}

TEST_CASE("S-16a availabilityStartTime is a real date from the anchor, stable for the timeline") {
  const int64_t first = 897'982'219;
  // The timeline started 7 segments before the window's first, 1234 ms into a segment.
  const TimelineAnchor anchor{(first - 7) * 180'000 + kOffset + 111'060, 1'795'964'000'000};
  DashOptions options;
  options.now_unix_ms = anchor.wall_ms + 30'000;
  auto make = [&](int64_t from, int count, int64_t delta) {
    auto w = Window("v1", from, count, Video(640, 360, "avc1.64001e"), delta, 1'000'000);
    return Anchored(w, anchor);
  };
  auto w = make(first, 4, 326'200);
  std::string mpd = DashManifest({w}, options);
  INFO(mpd);
  const AnchoredNumbering n = AnchorNumbering(anchor, kOffset, 180'000);
  CHECK(n.start_number == first - 6);
  const std::string ast = Attr(mpd, "MPD", "availabilityStartTime");
  CHECK(ast.rfind("2026-11-29T", 0) == 0);  // a real date: the anchor's
  CHECK(Attr(mpd, "SegmentTemplate", "startNumber") == std::to_string(n.start_number));
  CHECK(Attr(mpd, "SegmentTemplate", "presentationTimeOffset") ==
        std::to_string(n.presentation_time_offset));
  // Number N starts where segment N does on the media timeline.
  const Segment& newest = *w->segments.back();
  CHECK((newest.msn - n.start_number) * 180'000 + n.presentation_time_offset == newest.start);
  // Announced whole no earlier than the anchor dates its end, at most a part later.
  const int64_t ast_ms = n.availability_start_ms + (500 - n.availability_start_ms % 500) % 500;
  CHECK(ast == DateTime(ast_ms));
  int64_t whole_at = anchor.WallAt(newest.start + newest.duration);
  int64_t announced = ast_ms + (newest.msn - n.start_number + 1) * 2000;
  CHECK(announced >= whole_at);
  CHECK(announced <= whole_at + 501);

  // Later MPDs of the same timeline (window moved, other publish delays, another node) agree.
  for (auto [from, delta] : {std::pair<int64_t, int64_t>{first + 3, 40}, {first + 9, 1'250}}) {
    std::string later = DashManifest({make(from, 6, delta)}, options);
    CHECK(Attr(later, "MPD", "availabilityStartTime") == ast);
    CHECK(Attr(later, "SegmentTemplate", "startNumber") == std::to_string(n.start_number));
    CHECK(Attr(later, "SegmentTemplate", "presentationTimeOffset") ==
          std::to_string(n.presentation_time_offset));
  }
}

}  // namespace meshwork::streamer
