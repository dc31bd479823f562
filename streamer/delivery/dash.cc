#include "streamer/delivery/dash.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "streamer/delivery/playlists.h"

namespace meshwork::streamer {
namespace {

constexpr int64_t kTimescale = 90000;  // the SegmentTemplate timescale (video's, S-5)

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

std::string XmlEscape(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (char c : in) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// xs:duration from milliseconds: "PT2S", "PT1.5S", "PT0.04S".
std::string Duration(int64_t ms) {
  ms = std::max<int64_t>(ms, 0);
  std::string out = absl::StrCat("PT", ms / 1000);
  if (int64_t frac = ms % 1000; frac != 0) {
    std::string digits = absl::StrFormat("%03d", frac);
    while (digits.back() == '0') digits.pop_back();
    absl::StrAppend(&out, ".", digits);
  }
  return out + "S";
}

// Seconds with at most three decimals, trailing zeros trimmed ("1.5", "2").
std::string DecimalSeconds(int64_t ms) {
  std::string d = Duration(ms);
  return d.substr(2, d.size() - 3);
}

// xs:dateTime in UTC; milliseconds only when not whole seconds.
std::string DateTime(int64_t unix_ms) {
  std::string s = FormatProgramDateTime(unix_ms);
  if (s.size() > 5 && s.compare(s.size() - 5, 5, ".000Z") == 0) s.replace(s.size() - 5, 5, "Z");
  return s;
}

// FrameRateType: an integer, or "N/1001" for the NTSC rates, else a ratio over 1000.
std::string FrameRate(double fps) {
  int64_t whole = std::llround(fps);
  if (std::abs(fps - static_cast<double>(whole)) < 0.001) return absl::StrCat(whole);
  int64_t ntsc = std::llround(fps * 1.001);
  if (std::abs(fps - static_cast<double>(ntsc) * 1000.0 / 1001.0) < 0.001) {
    return absl::StrCat(ntsc * 1000, "/1001");
  }
  return absl::StrCat(std::llround(fps * 1000), "/1000");
}

const media::TrackInfo* FirstTrack(const RenditionInfo& info, bool video) {
  for (const auto& t : info.tracks) {
    if (video ? t.is_video() : t.is_audio()) return &t;
  }
  return nullptr;
}

// The end (90 kHz) of the newest media the window holds: the last part of the open segment,
// else the last complete segment.
int64_t MediaEnd(const RenditionWindow& w) {
  int64_t end = w.segments.back()->start + w.segments.back()->duration;
  if (w.open_msn >= 0 && !w.open_parts.empty()) {
    const Part& p = *w.open_parts.back();
    end = std::max(end, p.start + p.duration);
  }
  return end;
}

// Wall-clock ms (rounded up) of media-timeline point `t` by `anchor`.
int64_t CeilWall(const TimelineAnchor& anchor, int64_t t) {
  return CeilDiv(anchor.wall_ms * 90 + (t - anchor.t90k), 90);
}

}  // namespace

AnchoredNumbering AnchorNumbering(const TimelineAnchor& anchor, int64_t phase_ticks,
                                  int64_t segment_ticks) {
  AnchoredNumbering n;
  segment_ticks = std::max<int64_t>(segment_ticks, 1);
  n.start_number = std::max<int64_t>(0, CeilDiv(anchor.t90k - phase_ticks, segment_ticks));
  n.presentation_time_offset = n.start_number * segment_ticks + phase_ticks;
  n.availability_start_ms = CeilWall(anchor, n.presentation_time_offset);
  return n;
}

// Timeline. Segment msn N of a rendition starts at the first keyframe at or after multiple
// N + o of the segment duration d on the absolute 90 kHz timeline T (S-5): o is 0 until the
// numbering had to close up (a gap, a GOP longer than d), and the keyframe comes a phase
// φ ∈ [0, d) after the multiple (constant for a GOP that divides d). T/90 follows the wall
// clock at a constant distance Δ that the timeline does not know: the 33-bit PTS is only
// extended by whole wraps, so Δ is up to ±13 h for a source whose PTS is not wall-clock
// based. A dynamic MPD needs wall clock = availabilityStartTime + presentation time, so:
//
//   presentationTimeOffset = start(newest) − msn(newest)·d = (o·d + φ) in 90 kHz,
//   one Period at PT0S, startNumber 0, duration d,
//
// so that number N starts at N·d + PTO on the media timeline, its presentation time is N·d
// (MSE times follow the msn, across gaps), and
//
//   availabilityStartTime = epoch + PTO/90 + Δ, rounded up to whole part targets,
//
// where Δ is measured as the newest publish time minus the newest media end: segment N is
// then whole at AST + (N+1)·d (L-4's due(msn) with availability_start = AST) and never
// announced early, and nodes (and successive MPDs) agree unless their measurements straddle
// a multiple of the part target. For a source with wall-clock PTS and keyframes on the
// multiples this is the epoch.
//
// With a timeline anchor (S-5, S-16a; every segment the local packager makes carries the
// stream's), Δ is known exactly and the same on every node: wall(T) = anchor.wall_ms +
// (T − anchor.t90k)/90. Numbering then starts at S, the first number whose segment starts at
// or after the anchor point (AnchorNumbering), so that availabilityStartTime is a real date
// (the timeline's start):
//
//   startNumber = S, presentationTimeOffset = S·d + PTO, AST = wall(S·d + PTO) rounded up to
//   whole part targets,
//
// and number N ≥ S starts at (N − S)·d + S·d + PTO = N·d + PTO on the media timeline, as
// above, and is whole at AST + (N − S + 1)·d. AST is a function of the anchor and the
// numbering's phase only: it stays put for the life of the timeline.
std::string DashManifest(const std::vector<std::shared_ptr<const RenditionWindow>>& renditions,
                         const DashOptions& options) {
  std::vector<const RenditionWindow*> windows;
  for (const auto& w : renditions) {
    if (w && !w->segments.empty() && w->info.init) windows.push_back(w.get());
  }
  if (windows.empty()) return "";

  const RenditionWindow& first = *windows.front();
  const int64_t segment_ms = std::max(1, first.info.target_duration_ms);
  const int64_t segment_ticks = segment_ms * 90;
  const int64_t part_ms = first.info.part_target_ms > 0
                              ? std::min<int64_t>(first.info.part_target_ms, segment_ms)
                              : segment_ms;
  const int live_window = std::max(1, first.info.live_window);

  // S-5: the stream's anchor, as the newest segment of the first rendition carries it.
  const TimelineAnchor anchor = first.segments.back()->anchor;
  const bool anchored = anchor.wall_ms != 0;
  int64_t start_number = 0;

  // Per rendition: PTO from its newest segment, and the wall clock at which its PTO is due
  // (PTO/90 + Δ; the latest wins so no rendition is announced early).
  std::vector<int64_t> pto;
  std::optional<int64_t> availability_start;
  int64_t longest_ms = segment_ms;
  int64_t longest_part = part_ms * 90;
  for (const RenditionWindow* w : windows) {
    const Segment& newest = *w->segments.back();
    pto.push_back(std::max<int64_t>(0, newest.start - newest.msn * segment_ticks));
    if (anchored) {
      // One start number for all renditions (that of the first), each its own phase.
      if (pto.size() == 1)
        start_number = AnchorNumbering(anchor, pto[0], segment_ticks).start_number;
      pto.back() += start_number * segment_ticks;
      int64_t start = CeilWall(anchor, pto.back());
      availability_start = std::max(availability_start.value_or(start), start);
    }
    int64_t delta = 0;  // unknown: take the timeline as wall clock
    if (w->last_publish_unix_ms > 0) {
      delta = w->last_publish_unix_ms - FloorDiv(MediaEnd(*w), 90);
    }
    if (!anchored) {
      int64_t start = CeilDiv(pto.back(), 90) + delta;
      availability_start = std::max(availability_start.value_or(start), start);
    }
    for (const auto& s : w->segments) {
      longest_ms = std::max(longest_ms, CeilDiv(s->duration, 90));
      for (const auto& p : s->parts) longest_part = std::max(longest_part, p->duration);
    }
    for (const auto& p : w->open_parts) longest_part = std::max(longest_part, p->duration);
  }
  const int64_t quantum = std::clamp<int64_t>(part_ms, 100, segment_ms);
  const int64_t availability_start_ms = CeilDiv(*availability_start, quantum) * quantum;
  const bool shared_pto =
      std::all_of(pto.begin(), pto.end(), [&](int64_t p) { return p == pto[0]; });
  // A request for the segment in progress is answered (held, or streamed) once its first part
  // exists: one (longest) part after its start.
  const int64_t first_part_ms = std::min(segment_ms, CeilDiv(longest_part, 90));

  // Until the in-progress segment is sent as its CMAF chunks arrive, a segment is whole
  // only at its end: aim one segment plus a part behind the edge (three parts at least).
  const int64_t latency_ms = std::max(3 * part_ms, segment_ms + part_ms);

  bool any_video = false;
  for (const RenditionWindow* w : windows) any_video |= FirstTrack(w->info, true) != nullptr;

  auto segment_template = [&](int64_t offset) {
    std::string t = absl::StrCat("<SegmentTemplate timescale=\"", kTimescale,
                                 "\" initialization=\"$RepresentationID$/init.mp4\" "
                                 "media=\"$RepresentationID$/$Number$.m4s\" startNumber=\"",
                                 start_number, "\" duration=\"", segment_ticks,
                                 "\" presentationTimeOffset=\"", offset, "\"");
    if (first_part_ms < segment_ms) {
      absl::StrAppend(&t, " availabilityTimeOffset=\"", DecimalSeconds(segment_ms - first_part_ms),
                      "\" availabilityTimeComplete=\"false\"");
    }
    return t + "/>\n";
  };

  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  absl::StrAppend(&out,
                  "<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\" "
                  "profiles=\"urn:mpeg:dash:profile:isoff-live:2011\" type=\"dynamic\" "
                  "availabilityStartTime=\"",
                  DateTime(availability_start_ms), "\" publishTime=\"",
                  DateTime(options.now_unix_ms), "\" minimumUpdatePeriod=\"", Duration(segment_ms),
                  "\" timeShiftBufferDepth=\"", Duration(live_window * segment_ms),
                  "\" suggestedPresentationDelay=\"", Duration(latency_ms),
                  "\" maxSegmentDuration=\"", Duration(longest_ms), "\" minBufferTime=\"",
                  Duration(segment_ms), "\">\n");
  absl::StrAppend(&out, "  <ServiceDescription id=\"0\">\n    <Latency target=\"", latency_ms,
                  "\" min=\"", std::max<int64_t>(part_ms, latency_ms - segment_ms / 2), "\" max=\"",
                  latency_ms + 2 * segment_ms,
                  "\"/>\n    <PlaybackRate min=\"0.96\" max=\"1.04\"/>\n  </ServiceDescription>\n");
  absl::StrAppend(&out, "  <Period id=\"p0\" start=\"PT0S\">\n");
  absl::StrAppend(&out, "    <AdaptationSet id=\"0\" contentType=\"", any_video ? "video" : "audio",
                  "\" mimeType=\"", any_video ? "video/mp4" : "audio/mp4",
                  "\" segmentAlignment=\"true\" startWithSAP=\"1\">\n");
  if (shared_pto) absl::StrAppend(&out, "      ", segment_template(pto[0]));
  for (size_t i = 0; i < windows.size(); ++i) {
    const RenditionInfo& info = windows[i]->info;
    const media::TrackInfo* video = FirstTrack(info, true);
    const media::TrackInfo* audio = FirstTrack(info, false);
    std::string codecs;
    for (const auto& t : info.tracks) {
      if (t.codec_string.empty()) continue;
      if (!codecs.empty()) codecs += ",";
      codecs += t.codec_string;
    }
    absl::StrAppend(&out, "      <Representation id=\"", XmlEscape(info.name), "\" bandwidth=\"",
                    std::max<uint64_t>(windows[i]->peak_bitrate_bps, 1), "\"");
    if (!codecs.empty()) absl::StrAppend(&out, " codecs=\"", XmlEscape(codecs), "\"");
    if (video && video->width > 0 && video->height > 0) {
      absl::StrAppend(&out, " width=\"", video->width, "\" height=\"", video->height, "\"");
    }
    if (video && video->frame_rate > 0) {
      absl::StrAppend(&out, " frameRate=\"", FrameRate(video->frame_rate), "\"");
    }
    if (audio && audio->sample_rate > 0) {
      absl::StrAppend(&out, " audioSamplingRate=\"", audio->sample_rate, "\"");
    }
    std::string children;
    if (!shared_pto) absl::StrAppend(&children, "        ", segment_template(pto[i]));
    if (audio && audio->channels > 0) {
      absl::StrAppend(&children,
                      "        <AudioChannelConfiguration "
                      "schemeIdUri=\"urn:mpeg:dash:23003:3:audio_channel_configuration:2011\" "
                      "value=\"",
                      audio->channels, "\"/>\n");
    }
    if (children.empty()) {
      out += "/>\n";
    } else {
      absl::StrAppend(&out, ">\n", children, "      </Representation>\n");
    }
  }
  out += "    </AdaptationSet>\n  </Period>\n";
  absl::StrAppend(&out, "  <UTCTiming schemeIdUri=\"urn:mpeg:dash:utc:http-iso:2014\" value=\"",
                  XmlEscape(options.time_url), "\"/>\n</MPD>\n");
  return out;
}

std::string DashTimeBody(int64_t now_unix_ms) { return FormatProgramDateTime(now_unix_ms); }

}  // namespace meshwork::streamer
