#include "streamer/delivery/dash.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "streamer/delivery/mpd_text.h"
#include "streamer/delivery/playlists.h"

namespace meshwork::streamer {
namespace {

using mpd::DateTime;
using mpd::DecimalSeconds;
using mpd::Duration;
using mpd::XmlEscape;

constexpr int64_t kTimescale = 90000;  // the SegmentTemplate timescale (video's, S-5)

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

const media::TrackInfo* FirstTrack(const RenditionInfo& info, bool video) {
  for (const auto& t : info.cmaf_tracks) {
    if (video ? t.is_video() : t.is_audio()) return &t;
  }
  return nullptr;
}

// One timeline (S-5) as a Period: its anchor point on the media timeline (90 kHz, the id),
// the number of the first segment at or after it, where that number starts on the media
// timeline (the presentationTimeOffset: the anchor point moved on to the keyframes' phase,
// never before it) and the wall clock there. All four are the same for every segment of the
// timeline that keeps the phase, and on every node that shares the anchor.
struct Timeline {
  int64_t origin = 0;
  int64_t start_number = 0;
  int64_t pto = 0;
  int64_t wall_ms = 0;
};

Timeline TimelineOf(const Segment& s, int64_t segment_ticks) {
  Timeline t;
  t.origin = s.timeline_origin;
  t.start_number = s.msn - FloorDiv(s.start - s.timeline_origin, segment_ticks);
  t.pto = s.start - (s.msn - t.start_number) * segment_ticks;
  t.wall_ms = s.program_date_time_ms - FloorDiv(s.start - t.pto, 90);
  return t;
}

}  // namespace

// Timeline and Periods. Every segment knows where its timeline began (S-5: `origin`, the
// same on every node) and its program date-time, so the wall clock at the origin is fixed
// for the life of the timeline. The MPD has one Period per timeline in the window (a
// discontinuity — a publisher reconnect, an input switch — starts a new one, S-16a):
//
//   availabilityStartTime = the wall clock at the start of the oldest listed timeline,
//   Period@start          = its own start's wall clock − availabilityStartTime,
//   startNumber           = the msn of the first segment at or after its anchor point,
//   presentationTimeOffset = where that number starts on the media timeline,
//
// so segment N of a period is presented at (N − startNumber)·d on the period's timeline and
// is whole at availabilityStartTime + Period@start + (N − startNumber + 1)·d: L-4's due time.
// None of these move while a timeline lasts, on any node that shares its anchor.
std::string DashManifest(const std::vector<std::shared_ptr<const RenditionWindow>>& renditions,
                         const DashOptions& options) {
  std::vector<const RenditionWindow*> video, audio;
  for (const auto& w : renditions) {
    if (!w || w->segments.empty() || !w->info.init || w->info.cmaf_tracks.empty()) continue;
    (w->info.cmaf_video() ? video : audio).push_back(w.get());
  }
  if (video.empty() && audio.empty()) return "";
  const RenditionWindow& leader = video.empty() ? *audio.front() : *video.front();

  const int64_t segment_ms = std::max(1, leader.info.target_duration_ms);
  const int64_t segment_ticks = segment_ms * 90;
  const int64_t part_ms = leader.info.part_target_ms > 0
                              ? std::min<int64_t>(leader.info.part_target_ms, segment_ms)
                              : segment_ms;
  const int live_window = std::max(1, leader.info.live_window);

  // The timelines of the leader's listed segments, oldest first.
  std::vector<Timeline> timelines;
  const auto& segments = leader.segments;
  size_t first = segments.size() - std::min<size_t>(segments.size(), live_window);
  for (size_t i = first; i < segments.size(); ++i) {
    if (timelines.empty() || timelines.back().origin != segments[i]->timeline_origin) {
      timelines.push_back(TimelineOf(*segments[i], segment_ticks));
    }
  }
  const int64_t availability_start_ms = timelines.front().wall_ms;

  int64_t longest_ms = segment_ms;
  int64_t longest_part = part_ms * 90;
  bool has_parts = false;  // only a rendition made of parts can announce segments early
  for (const auto* list : {&video, &audio}) {
    for (const RenditionWindow* w : *list) {
      for (const auto& s : w->segments) {
        longest_ms = std::max(longest_ms, CeilDiv(s->duration, 90));
        for (const auto& p : s->parts) longest_part = std::max(longest_part, p->duration);
        has_parts |= !s->parts.empty();
      }
      for (const auto& p : w->open_parts) longest_part = std::max(longest_part, p->duration);
      has_parts |= !w->open_parts.empty();
    }
  }
  // A request for the segment in progress is answered (held, or streamed) once its first part
  // exists: one (longest) part after its start.
  const int64_t first_part_ms =
      has_parts ? std::min(segment_ms, CeilDiv(longest_part, 90)) : segment_ms;
  // Until the in-progress segment is sent as its CMAF chunks arrive, a segment is whole
  // only at its end: aim one segment plus a part behind the edge (three parts at least).
  const int64_t latency_ms = std::max(3 * part_ms, segment_ms + part_ms);

  // The time-shift window ends where the oldest listed segment begins, less the longest
  // segment (players put its start a segment before their live edge): a player never picks a
  // segment this node cannot serve — a new stream's first segment, which the packager drops
  // while its tracks are not all known, would be a 410 for a player starting in its first
  // seconds. At least a segment, at most the live window.
  const int64_t oldest_wall_ms = segments[first]->program_date_time_ms;
  const int64_t shift_ms = std::clamp<int64_t>(options.now_unix_ms - oldest_wall_ms - longest_ms,
                                               segment_ms, live_window * segment_ms);

  // a viewer's query follows both templates (XML-escaped, as any attribute).
  const std::string query = options.uri_query.empty() ? "" : XmlEscape("?" + options.uri_query);
  auto segment_template = [&](const Timeline& t) {
    std::string out =
        absl::StrCat("<SegmentTemplate timescale=\"", kTimescale,
                     "\" initialization=\"$RepresentationID$/init.mp4", query,
                     "\" media=\"$RepresentationID$/$Number$.m4s", query, "\" startNumber=\"",
                     t.start_number, "\" duration=\"", segment_ticks,
                     "\" presentationTimeOffset=\"", std::max<int64_t>(0, t.pto), "\"");
    if (first_part_ms < segment_ms) {
      absl::StrAppend(&out, " availabilityTimeOffset=\"",
                      DecimalSeconds(segment_ms - first_part_ms),
                      "\" availabilityTimeComplete=\"false\"");
    }
    return out + "/>\n";
  };

  auto representation = [&](const RenditionWindow& w) {
    const media::TrackInfo* track = FirstTrack(w.info, true);
    if (!track) track = FirstTrack(w.info, false);
    return mpd::Representation("        ", w.info.name, w.peak_bitrate_bps, w.info.CmafCodecs(),
                               track, "");
  };

  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  absl::StrAppend(
      &out, "<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\" ",
      options.pathways.empty() ? "" : "xmlns:dvb=\"urn:dvb:dash:dash-extensions:2014-1\" ",
      "profiles=\"urn:mpeg:dash:profile:isoff-live:2011\" type=\"dynamic\" "
      "availabilityStartTime=\"",
      DateTime(availability_start_ms), "\" publishTime=\"", DateTime(options.now_unix_ms),
      "\" minimumUpdatePeriod=\"", Duration(segment_ms), "\" timeShiftBufferDepth=\"",
      Duration(shift_ms), "\" suggestedPresentationDelay=\"", Duration(latency_ms),
      "\" maxSegmentDuration=\"", Duration(longest_ms), "\" minBufferTime=\"", Duration(segment_ms),
      "\">\n");
  for (size_t i = 0; i < options.pathways.size(); ++i) {
    const hls::Pathway& p = options.pathways[i];
    absl::StrAppend(&out, "  <BaseURL serviceLocation=\"", XmlEscape(p.id), "\" dvb:priority=\"",
                    i + 1, "\" dvb:weight=\"1\">", XmlEscape(p.base.empty() ? "./" : p.base),
                    "</BaseURL>\n");
  }
  // The MPD itself at each pathway, so that its reloads follow the steering (or, without it,
  // outlive this node): dash.js picks a Location as it picks a BaseURL.
  for (const hls::Pathway& p : options.pathways) {
    if (p.base.empty()) continue;
    absl::StrAppend(&out, "  <Location serviceLocation=\"", XmlEscape(p.id), "\">",
                    XmlEscape(hls::WithQuery(p.base + "index.mpd", options.uri_query)),
                    "</Location>\n");
  }
  if (!options.steering_uri.empty() && !options.pathways.empty()) {
    absl::StrAppend(&out, "  <ContentSteering defaultServiceLocation=\"",
                    XmlEscape(options.pathways.front().id), "\" queryBeforeStart=\"false\">",
                    XmlEscape(options.steering_uri), "</ContentSteering>\n");
  }
  absl::StrAppend(&out, "  <ServiceDescription id=\"0\">\n    <Latency target=\"", latency_ms,
                  "\" min=\"", std::max<int64_t>(part_ms, latency_ms - segment_ms / 2), "\" max=\"",
                  latency_ms + 2 * segment_ms,
                  "\"/>\n    <PlaybackRate min=\"0.96\" max=\"1.04\"/>\n  </ServiceDescription>\n");
  for (const Timeline& t : timelines) {
    // A Period's id names its timeline, so successive MPDs (and nodes) agree on it.
    absl::StrAppend(&out, "  <Period id=\"t", t.origin, "\" start=\"",
                    Duration(t.wall_ms - availability_start_ms), "\">\n");
    int set_id = 0;
    for (const auto* list : {&video, &audio}) {
      if (list->empty()) continue;
      bool is_video = list == &video;
      absl::StrAppend(
          &out, "    <AdaptationSet id=\"", set_id++, "\" contentType=\"",
          is_video ? "video" : "audio", "\" mimeType=\"", is_video ? "video/mp4" : "audio/mp4",
          "\" segmentAlignment=\"true\" startWithSAP=\"1\">\n      ", segment_template(t));
      for (const RenditionWindow* w : *list) out += representation(*w);
      out += "    </AdaptationSet>\n";
    }
    out += "  </Period>\n";
  }
  absl::StrAppend(&out, "  <UTCTiming schemeIdUri=\"urn:mpeg:dash:utc:http-iso:2014\" value=\"",
                  XmlEscape(options.time_url), "\"/>\n</MPD>\n");
  return out;
}

std::string DashTimeBody(int64_t now_unix_ms) { return FormatProgramDateTime(now_unix_ms); }

}  // namespace meshwork::streamer
