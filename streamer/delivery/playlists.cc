#include "streamer/delivery/playlists.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace meshwork::streamer {

std::string FormatProgramDateTime(int64_t unix_ms) {
  int64_t secs = unix_ms >= 0 ? unix_ms / 1000 : -((-unix_ms + 999) / 1000);
  int ms = static_cast<int>(unix_ms - secs * 1000);
  std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm;
  gmtime_r(&t, &tm);
  return absl::StrFormat("%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                         tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

std::string StreamInfLine(const RenditionWindow& w) {
  std::string codecs;
  const media::TrackInfo* video = nullptr;
  for (const auto& t : w.info.tracks) {
    if (t.is_video() && !video) video = &t;
    if (t.codec_string.empty()) continue;
    if (!codecs.empty()) codecs += ",";
    codecs += t.codec_string;
  }
  uint64_t bandwidth = std::max<uint64_t>(w.peak_bitrate_bps, 1);
  std::string line = absl::StrCat("#EXT-X-STREAM-INF:BANDWIDTH=", bandwidth);
  if (!codecs.empty()) absl::StrAppend(&line, ",CODECS=\"", codecs, "\"");
  if (video && video->width > 0 && video->height > 0) {
    absl::StrAppend(&line, ",RESOLUTION=", video->width, "x", video->height);
  }
  if (video && video->frame_rate > 0) {
    absl::StrAppend(&line, ",FRAME-RATE=", absl::StrFormat("%.3f", video->frame_rate));
  }
  return line;
}

std::string MasterPlaylist(const std::vector<std::shared_ptr<const RenditionWindow>>& renditions) {
  std::string out;
  for (const auto& w : renditions) {
    if (!w || w->segments.empty()) continue;
    if (out.empty()) out = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-INDEPENDENT-SEGMENTS\n";
    absl::StrAppend(&out, StreamInfLine(*w), "\n", w->info.name, "/index.m3u8\n");
  }
  return out;
}

std::string MediaPlaylist(const RenditionWindow& window, const SegmentVersions& versions) {
  const auto& segments = window.segments;
  const bool ts = window.has_ts;
  // The newest listable segment (a masked newest one is left out), then the window before it.
  std::vector<std::pair<size_t, uint64_t>> listed;  // index in `segments`, version (0: gap)
  for (size_t i = segments.size(); i-- > 0;) {
    if (ts ? !segments[i]->ts_bytes : !segments[i]->m4s_bytes) continue;
    uint64_t version = versions ? versions(segments[i]->msn) : 1;
    if (!version && listed.empty()) continue;
    listed.emplace_back(i, version);
    if (listed.size() >= static_cast<size_t>(std::max(1, window.info.live_window))) break;
  }
  if (listed.empty()) return "";
  std::reverse(listed.begin(), listed.end());
  const size_t first = listed.front().first;
  int target = (window.info.target_duration_ms + 999) / 1000;
  int64_t discontinuity_sequence = window.dropped_discontinuities;
  for (size_t i = 0; i < first; ++i) discontinuity_sequence += segments[i]->discontinuity ? 1 : 0;
  bool gaps = false;
  for (const auto& [i, version] : listed) {
    target = std::max<int>(target, static_cast<int>(std::lround(segments[i]->duration_seconds())));
    gaps |= version == 0;
  }
  std::string out = absl::StrCat("#EXTM3U\n#EXT-X-VERSION:",
                                 gaps ? 8
                                 : ts ? 3
                                      : 7,
                                 "\n#EXT-X-TARGETDURATION:", target,
                                 "\n#EXT-X-MEDIA-SEQUENCE:", segments[first]->msn, "\n");
  if (discontinuity_sequence > 0) {
    absl::StrAppend(&out, "#EXT-X-DISCONTINUITY-SEQUENCE:", discontinuity_sequence, "\n");
  }
  uint64_t base_version = 1;
  for (const auto& [i, version] : listed) base_version = std::max(base_version, version);
  if (!ts) absl::StrAppend(&out, "#EXT-X-MAP:URI=\"init.mp4?v=", base_version, "\"\n");
  for (const auto& [i, version] : listed) {
    const Segment& s = *segments[i];
    // The first listed segment's discontinuity is implied by the discontinuity sequence.
    if (s.discontinuity && i != first) out += "#EXT-X-DISCONTINUITY\n";
    absl::StrAppend(&out,
                    "#EXT-X-PROGRAM-DATE-TIME:", FormatProgramDateTime(s.program_date_time_ms),
                    "\n", version ? "" : "#EXT-X-GAP\n",
                    "#EXTINF:", absl::StrFormat("%.3f", s.duration_seconds()), ",\n");
    absl::StrAppend(&out, s.msn, ts ? ".ts" : ".m4s", "?v=", version ? version : base_version,
                    "\n");
  }
  return out;
}

}  // namespace meshwork::streamer
