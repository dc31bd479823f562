#include "streamer/delivery/playlists.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"

namespace meshwork::streamer {

std::string FormatProgramDateTime(int64_t unix_ms) { return hls::FormatProgramDateTime(unix_ms); }

hls::Variant TsVariant(const RenditionWindow& w) {
  hls::Variant v;
  const media::TrackInfo* video = nullptr;
  for (const auto& t : w.info.tracks) {
    if (t.is_video() && !video) video = &t;
    if (t.codec_string.empty()) continue;
    if (!v.codecs.empty()) v.codecs += ",";
    v.codecs += t.codec_string;
  }
  v.bandwidth = w.peak_bitrate_bps;
  if (video) {
    v.width = video->width;
    v.height = video->height;
    v.frame_rate = video->frame_rate;
  }
  v.uri = absl::StrCat(w.info.name, "/index.m3u8");
  return v;
}

std::string StreamInfLine(const RenditionWindow& w) { return hls::StreamInf(TsVariant(w)); }

std::string MasterPlaylist(const std::vector<std::shared_ptr<const RenditionWindow>>& renditions,
                           const std::string& uri_query, const hls::Steering* steering) {
  hls::Master master;
  master.uri_query = uri_query;
  if (steering) master.steering = *steering;
  for (const auto& w : renditions) {
    if (w && !w->segments.empty()) master.variants.push_back(TsVariant(*w));
  }
  return hls::Write(master);
}

std::vector<ListedSegment> ListSegments(const RenditionWindow& window, bool ts,
                                        const SegmentVersions& versions) {
  const auto& segments = window.segments;
  // The newest listable segment (a masked newest one is left out), then the window before it.
  std::vector<ListedSegment> listed;
  for (size_t i = segments.size(); i-- > 0;) {
    if (ts ? !segments[i]->ts_bytes : !segments[i]->m4s_bytes) continue;
    uint64_t version = versions ? versions(segments[i]->msn) : 1;
    if (!version && listed.empty()) continue;
    listed.push_back({i, version});
    if (listed.size() >= static_cast<size_t>(std::max(1, window.info.live_window))) break;
  }
  std::reverse(listed.begin(), listed.end());
  return listed;
}

int64_t DiscontinuitySequence(const RenditionWindow& window, size_t first) {
  // RFC 8216 §6.2.2: a segment's discontinuity number is the sequence plus the tags before
  // its URI. The first listed segment's own tag is left out of the playlist (implied), so it
  // is counted here: its number stays what it was while it was listed after another.
  int64_t sequence = window.dropped_discontinuities;
  for (size_t i = 0; i <= first && i < window.segments.size(); ++i) {
    sequence += window.segments[i]->discontinuity ? 1 : 0;
  }
  return sequence;
}

std::string MediaPlaylist(const RenditionWindow& window, const SegmentVersions& versions,
                          const std::string& uri_query) {
  const auto& segments = window.segments;
  const bool ts = window.has_ts;
  const std::vector<ListedSegment> listed = ListSegments(window, ts, versions);
  if (listed.empty()) return "";
  const size_t first = listed.front().index;
  hls::Media m;
  m.uri_query = uri_query;
  m.target_duration_s = (window.info.target_duration_ms + 999) / 1000;
  bool gaps = false;
  uint64_t base_version = 1;
  for (const auto& l : listed) {
    m.target_duration_s = std::max<int>(
        m.target_duration_s, static_cast<int>(std::lround(segments[l.index]->duration_seconds())));
    gaps |= l.version == 0;
    base_version = std::max(base_version, l.version);
  }
  m.version = gaps ? 8 : ts ? 3 : 7;
  m.media_sequence = segments[first]->msn;
  m.discontinuity_sequence = DiscontinuitySequence(window, first);
  if (!ts) m.map_uri = absl::StrCat("init.mp4?v=", base_version);
  for (const auto& l : listed) {
    const Segment& s = *segments[l.index];
    hls::SegmentLine line;
    // The first listed segment's discontinuity is implied by the discontinuity sequence.
    line.discontinuity = s.discontinuity && l.index != first;
    line.program_date_time_ms = s.program_date_time_ms;
    line.gap = l.version == 0;
    line.duration90k = s.duration;
    line.uri =
        absl::StrCat(s.msn, ts ? ".ts" : ".m4s", "?v=", l.version ? l.version : base_version);
    m.segments.push_back(std::move(line));
  }
  return hls::Write(m);
}

}  // namespace meshwork::streamer
