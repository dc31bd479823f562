#include "streamer/delivery/ll_hls.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status/status_map.h"
#include "streamer/delivery/playlists.h"

namespace meshwork::streamer {
namespace {

std::string Seconds(int64_t ticks) {
  return absl::StrFormat("%.5f", static_cast<double>(ticks) / 90000.0);
}

// Lists the parts of `parts` that start at or after `from` (90 kHz).
void AppendParts(std::string& out, int64_t msn,
                 const std::vector<std::shared_ptr<const Part>>& parts, int64_t from) {
  for (const auto& p : parts) {
    if (p->start < from) continue;
    absl::StrAppend(&out, "#EXT-X-PART:DURATION=", Seconds(p->duration), ",URI=\"", msn, ".",
                    p->index, ".m4s\"", p->independent ? ",INDEPENDENT=YES" : "", "\n");
  }
}

bool Ready(const std::shared_ptr<const RenditionWindow>& w) {
  return w && !w->segments.empty() && w->info.init && !w->info.cmaf_tracks.empty();
}

}  // namespace

std::string LowLatencyMasterPlaylist(
    const std::vector<std::shared_ptr<const RenditionWindow>>& renditions, bool low_latency) {
  const char* playlist = low_latency ? "/index.ll.m3u8" : "/index.m3u8";
  // S-16a: video renditions are the variants; an audio rendition beside them is their
  // EXT-X-MEDIA audio group. Without video, the audio rendition is the variant.
  bool any_video = std::any_of(renditions.begin(), renditions.end(),
                               [](const auto& w) { return Ready(w) && w->info.cmaf_video(); });
  const RenditionWindow* audio = nullptr;
  if (any_video) {
    for (const auto& w : renditions) {
      if (Ready(w) && !w->info.cmaf_video()) {
        audio = w.get();
        break;
      }
    }
  }
  std::string out;
  for (const auto& w : renditions) {
    if (!Ready(w) || (any_video && !w->info.cmaf_video())) continue;
    if (out.empty()) {
      out = absl::StrCat("#EXTM3U\n#EXT-X-VERSION:", low_latency ? 9 : 7,
                         "\n#EXT-X-INDEPENDENT-SEGMENTS\n");
      if (audio) {
        const media::TrackInfo& a = audio->info.cmaf_tracks.front();
        absl::StrAppend(&out,
                        "#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"audio\",NAME=\"audio\",DEFAULT=YES,"
                        "AUTOSELECT=YES");
        if (a.channels > 0) absl::StrAppend(&out, ",CHANNELS=\"", a.channels, "\"");
        absl::StrAppend(&out, ",URI=\"", audio->info.name, playlist, "\"\n");
      }
    }
    const media::TrackInfo* video = nullptr;
    for (const auto& t : w->info.cmaf_tracks) {
      if (t.is_video()) {
        video = &t;
        break;
      }
    }
    uint64_t bandwidth = w->peak_bitrate_bps + (audio ? audio->peak_bitrate_bps : 0);
    absl::StrAppend(&out, "#EXT-X-STREAM-INF:BANDWIDTH=", std::max<uint64_t>(bandwidth, 1));
    std::string codecs = w->info.CmafCodecs();
    if (audio) {
      std::string audio_codecs = audio->info.CmafCodecs();
      if (!audio_codecs.empty())
        codecs = codecs.empty() ? audio_codecs : codecs + "," + audio_codecs;
    }
    if (!codecs.empty()) absl::StrAppend(&out, ",CODECS=\"", codecs, "\"");
    if (video && video->width > 0) {
      absl::StrAppend(&out, ",RESOLUTION=", video->width, "x", video->height);
    }
    if (video && video->frame_rate > 0) {
      absl::StrAppend(&out, ",FRAME-RATE=", absl::StrFormat("%.3f", video->frame_rate));
    }
    if (audio) absl::StrAppend(&out, ",AUDIO=\"audio\"");
    absl::StrAppend(&out, "\n", w->info.name, playlist, "\n");
  }
  return out;
}

std::string LowLatencyMediaPlaylist(
    const RenditionWindow& window,
    const std::vector<std::shared_ptr<const RenditionWindow>>& others, bool skip) {
  const auto& segments = window.segments;
  if (segments.empty()) return "";
  const RenditionInfo& info = window.info;
  int target = (info.target_duration_ms + 999) / 1000;
  size_t count = std::min<size_t>(segments.size(), std::max(1, info.live_window));
  size_t first = segments.size() - count;
  for (size_t i = first; i < segments.size(); ++i) {
    target = std::max<int>(target, static_cast<int>(std::lround(segments[i]->duration_seconds())));
  }
  // PART-TARGET: at least every listed part (one may run a frame over the configured target).
  int64_t longest_part = static_cast<int64_t>(info.part_target_ms) * 90;
  for (size_t i = first; i < segments.size(); ++i) {
    for (const auto& p : segments[i]->parts) longest_part = std::max(longest_part, p->duration);
  }
  for (const auto& p : window.open_parts) longest_part = std::max(longest_part, p->duration);
  double part_target = std::ceil(static_cast<double>(longest_part) / 90.0) / 1000.0;
  double skip_until = 6.0 * target;
  std::string out =
      absl::StrCat("#EXTM3U\n#EXT-X-VERSION:9\n#EXT-X-TARGETDURATION:", target,
                   "\n#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=",
                   absl::StrFormat("%.3f", 3 * part_target),
                   ",CAN-SKIP-UNTIL=", absl::StrFormat("%.1f", skip_until),
                   "\n#EXT-X-PART-INF:PART-TARGET=", absl::StrFormat("%.3f", part_target),
                   "\n#EXT-X-MEDIA-SEQUENCE:", segments[first]->msn, "\n");
  int64_t disc = window.dropped_discontinuities;
  for (size_t i = 0; i < first; ++i) disc += segments[i]->discontinuity ? 1 : 0;
  // Delta update: segments ending more than CAN-SKIP-UNTIL before the live edge are skipped.
  size_t skipped = 0;
  if (skip) {
    int64_t edge = segments.back()->start + segments.back()->duration;
    while (first + skipped < segments.size() &&
           edge - (segments[first + skipped]->start + segments[first + skipped]->duration) >
               static_cast<int64_t>(skip_until * 90000)) {
      disc += segments[first + skipped]->discontinuity ? 1 : 0;
      ++skipped;
    }
  }
  if (disc > 0) absl::StrAppend(&out, "#EXT-X-DISCONTINUITY-SEQUENCE:", disc, "\n");
  out += "#EXT-X-MAP:URI=\"init.mp4\"\n";
  if (skipped > 0) absl::StrAppend(&out, "#EXT-X-SKIP:SKIPPED-SEGMENTS=", skipped, "\n");
  // Parts are listed for the last three target durations of the playlist (S-11): from
  // three target durations before its end, the open segment's last part included.
  int64_t edge = segments.back()->start + segments.back()->duration;
  if (window.open_msn >= 0 && !window.open_parts.empty()) {
    edge = std::max(edge, window.open_parts.back()->start + window.open_parts.back()->duration);
  }
  int64_t parts_from = edge - 3LL * target * 90000;
  for (size_t i = first + skipped; i < segments.size(); ++i) {
    const Segment& s = *segments[i];
    if (s.discontinuity && i != first) out += "#EXT-X-DISCONTINUITY\n";
    absl::StrAppend(
        &out, "#EXT-X-PROGRAM-DATE-TIME:", FormatProgramDateTime(s.program_date_time_ms), "\n");
    if (s.start + s.duration > parts_from) AppendParts(out, s.msn, s.parts, parts_from);
    absl::StrAppend(&out, "#EXTINF:", Seconds(s.duration), ",\n", s.msn, ".m4s\n");
  }
  int64_t next_msn = segments.back()->msn + 1;
  int next_part = 0;
  if (window.open_msn >= 0 && !window.open_parts.empty()) {
    absl::StrAppend(&out, "#EXT-X-PROGRAM-DATE-TIME:",
                    FormatProgramDateTime(window.open_program_date_time_ms), "\n");
    AppendParts(out, window.open_msn, window.open_parts, parts_from);
    next_msn = window.open_msn;
    next_part = window.open_parts.back()->index + 1;
  }
  absl::StrAppend(&out, "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"", next_msn, ".", next_part,
                  ".m4s\"\n");
  for (const auto& other : others) {
    if (!other || other->info.name == info.name) continue;
    auto last = other->Last();
    if (!last) continue;
    // LAST-PART is that of the segment LAST-MSN; a complete segment reports its last part.
    int64_t msn = last->msn;
    int part = last->part;
    if (part < 0) {
      const Segment* s = other->Find(msn);
      part = s && !s->parts.empty() ? s->parts.back()->index : 0;
    }
    absl::StrAppend(&out, "#EXT-X-RENDITION-REPORT:URI=\"../", other->info.name,
                    "/index.ll.m3u8\",LAST-MSN=", msn, ",LAST-PART=", part, "\n");
  }
  return out;
}

}  // namespace meshwork::streamer
