#include "streamer/delivery/ll_hls.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/status/status_map.h"
#include "streamer/delivery/playlists.h"

namespace meshwork::streamer {
namespace {

// The parts of one segment, as playlist lines.
std::vector<hls::PartLine> Parts(int64_t msn, const std::vector<std::shared_ptr<const Part>>& parts,
                                 uint64_t version, bool versioned) {
  std::vector<hls::PartLine> out;
  for (const auto& p : parts) {
    hls::PartLine line;
    line.duration90k = p->duration;
    line.uri = absl::StrCat(msn, ".", p->index, ".m4s");
    if (versioned) absl::StrAppend(&line.uri, "?v=", std::max<uint64_t>(version, 1));
    line.independent = p->independent;
    line.gap = versioned && version == 0;
    out.push_back(std::move(line));
  }
  return out;
}

bool Ready(const std::shared_ptr<const RenditionWindow>& w) {
  return w && !w->segments.empty() && w->info.init && !w->info.cmaf_tracks.empty();
}

}  // namespace

hls::Variant CmafVariant(const RenditionWindow& w) {
  hls::Variant v;
  v.bandwidth = w.peak_bitrate_bps;
  v.codecs = w.info.CmafCodecs();
  for (const auto& t : w.info.cmaf_tracks) {
    if (!t.is_video()) continue;
    v.width = t.width;
    v.height = t.height;
    v.frame_rate = t.frame_rate;
    break;
  }
  return v;
}

std::string CmafMaster(const std::vector<CmafRendition>& renditions, int version,
                       const std::string& uri_query, const hls::Steering* steering) {
  // S-16a: video renditions are the variants; an audio rendition beside them is their
  // EXT-X-MEDIA audio group. Without video, the audio rendition is the variant.
  const bool any_video = std::any_of(renditions.begin(), renditions.end(),
                                     [](const CmafRendition& r) { return r.video; });
  const CmafRendition* audio = nullptr;
  if (any_video) {
    for (const auto& r : renditions) {
      if (!r.video) {
        audio = &r;
        break;
      }
    }
  }
  hls::Master master;
  master.version = version;
  master.uri_query = uri_query;
  if (steering) master.steering = *steering;
  if (audio) master.audio = hls::AudioRendition{audio->channels, audio->uri};
  for (const auto& r : renditions) {
    if (any_video && !r.video) continue;
    hls::Variant v = r.variant;
    v.uri = r.uri;
    if (audio) {
      v.bandwidth += audio->variant.bandwidth;
      if (!audio->variant.codecs.empty()) {
        v.codecs = v.codecs.empty() ? audio->variant.codecs
                                    : absl::StrCat(v.codecs, ",", audio->variant.codecs);
      }
      v.audio_group = true;
    }
    master.variants.push_back(std::move(v));
  }
  return hls::Write(master);
}

std::string LowLatencyMasterPlaylist(
    const std::vector<std::shared_ptr<const RenditionWindow>>& renditions, bool low_latency,
    const std::string& uri_query, const hls::Steering* steering) {
  const char* playlist = low_latency ? "/index.ll.m3u8" : "/index.m3u8";
  std::vector<CmafRendition> listed;
  for (const auto& w : renditions) {
    if (!Ready(w)) continue;
    CmafRendition r;
    r.variant = CmafVariant(*w);
    r.video = w->info.cmaf_video();
    for (const auto& t : w->info.cmaf_tracks) {
      if (!t.is_video()) {
        r.channels = t.channels;
        break;
      }
    }
    r.uri = absl::StrCat(w->info.name, playlist);
    listed.push_back(std::move(r));
  }
  return CmafMaster(listed, low_latency ? 9 : 7, uri_query, steering);
}

std::string LowLatencyMediaPlaylist(
    const RenditionWindow& window,
    const std::vector<std::shared_ptr<const RenditionWindow>>& others, bool skip,
    const SegmentVersions& versions, const std::string& uri_query) {
  if (!window.open_parts.empty() && window.open_parts.back()->last) {
    // The segment's last part is out and its .m4s a moment behind: listed as the complete
    // segment it is (EXTINF, its parts), as it will be once the .m4s is published, so that a
    // player asks next for part 0 of the next segment — not for a part after the last, which
    // never comes (a 404 Shaka takes as fatal), nor, as a hint of the next segment beside an
    // open one would have hls.js do, for nothing while it waits to make sense of the two.
    RenditionWindow closed = window;
    auto s = std::make_shared<Segment>();
    const Part& last = *window.open_parts.back();
    s->msn = window.open_msn;
    s->start = window.open_start;
    s->duration = std::max<int64_t>(last.start + last.duration - window.open_start, 1);
    s->program_date_time_ms = window.open_program_date_time_ms;
    s->timeline_origin = last.timeline_origin;
    s->discontinuity = window.open_discontinuity;
    s->parts = window.open_parts;
    if (closed.segments.empty() || closed.segments.back()->msn < s->msn) {
      closed.segments.push_back(std::move(s));
    }
    closed.open_msn = -1;
    closed.open_parts.clear();
    return LowLatencyMediaPlaylist(closed, others, skip, versions, uri_query);
  }
  const auto& segments = window.segments;
  if (segments.empty()) return "";
  const RenditionInfo& info = window.info;
  hls::Media m;
  m.version = 9;
  m.extinf_decimals = 5;
  m.uri_query = uri_query;
  int target = (info.target_duration_ms + 999) / 1000;
  size_t count = std::min<size_t>(segments.size(), std::max(1, info.live_window));
  size_t first = segments.size() - count;
  for (size_t i = first; i < segments.size(); ++i) {
    target = std::max<int>(target, static_cast<int>(std::lround(segments[i]->duration_seconds())));
  }
  m.target_duration_s = target;
  // PART-TARGET: at least every listed part (one may run a frame over the configured target),
  // of every rendition of the stream: S-11 wants PART-HOLD-BACK the same in all of them, and
  // a1's parts, cut at whole AAC frames, run longer than the video's.
  int64_t longest_part = static_cast<int64_t>(info.part_target_ms) * 90;
  auto longest_of = [&longest_part](const RenditionWindow& w) {
    const auto& listed = w.segments;
    size_t n = std::min<size_t>(listed.size(), std::max(1, w.info.live_window));
    for (size_t i = listed.size() - n; i < listed.size(); ++i) {
      for (const auto& p : listed[i]->parts) longest_part = std::max(longest_part, p->duration);
    }
    for (const auto& p : w.open_parts) longest_part = std::max(longest_part, p->duration);
  };
  longest_of(window);
  for (const auto& other : others) {
    if (other && other.get() != &window) longest_of(*other);
  }
  const double part_target = std::ceil(static_cast<double>(longest_part) / 90.0) / 1000.0;
  const double skip_until = 6.0 * target;
  m.server_control = hls::ServerControl{3 * part_target, skip_until};
  m.part_target_s = part_target;
  m.media_sequence = segments[first]->msn;
  int64_t disc = DiscontinuitySequence(window, first);
  // Delta update: segments ending more than CAN-SKIP-UNTIL before the live edge are skipped.
  size_t skipped = 0;
  if (skip) {
    int64_t edge = segments.back()->start + segments.back()->duration;
    while (first + skipped < segments.size() &&
           edge - (segments[first + skipped]->start + segments[first + skipped]->duration) >
               static_cast<int64_t>(skip_until * 90000)) {
      // (`first`'s own is counted already.)
      if (skipped > 0) disc += segments[first + skipped]->discontinuity ? 1 : 0;
      ++skipped;
    }
  }
  m.discontinuity_sequence = disc;
  m.map_uri = "init.mp4";
  m.skipped_segments = static_cast<int64_t>(skipped);
  // Parts are listed for the segments within the last three target durations of the
  // playlist (S-11, RFC 8216bis §4.4.4.9: none older), the open segment's last part
  // included — whole segments only, so a segment's listed parts start with its independent
  // one and add up to its EXTINF.
  int64_t edge = segments.back()->start + segments.back()->duration;
  if (window.open_msn >= 0 && !window.open_parts.empty()) {
    edge = std::max(edge, window.open_parts.back()->start + window.open_parts.back()->duration);
  }
  const int64_t parts_from = edge - 3LL * target * 90000;
  const bool versioned = static_cast<bool>(versions);
  for (size_t i = first + skipped; i < segments.size(); ++i) {
    const Segment& s = *segments[i];
    const uint64_t version = versioned ? versions(s.msn) : 1;
    hls::SegmentLine line;
    line.discontinuity = s.discontinuity && i != first;
    line.program_date_time_ms = s.program_date_time_ms;
    line.gap = version == 0;  // L-13: masked
    if (s.start >= parts_from) line.parts = Parts(s.msn, s.parts, version, versioned);
    line.duration90k = s.duration;
    line.uri = absl::StrCat(s.msn, ".m4s");
    if (versioned) absl::StrAppend(&line.uri, "?v=", std::max<uint64_t>(version, 1));
    m.segments.push_back(std::move(line));
  }
  int64_t next_msn = segments.back()->msn + 1;
  int next_part = 0;
  uint64_t hint_version = versioned ? versions(segments.back()->msn) : 1;
  if (window.open_msn >= 0 && !window.open_parts.empty()) {
    const uint64_t version = versioned ? versions(window.open_msn) : 1;
    m.open = hls::OpenSegment{window.open_program_date_time_ms,
                              Parts(window.open_msn, window.open_parts, version, versioned)};
    next_msn = window.open_msn;
    next_part = window.open_parts.back()->index + 1;
    hint_version = version;
  }
  // The hinted part's URI is the one it will be listed under (a player matches the two).
  std::string hint = absl::StrCat(next_msn, ".", next_part, ".m4s");
  if (versioned) absl::StrAppend(&hint, "?v=", std::max<uint64_t>(hint_version, 1));
  m.preload_hint_uri = std::move(hint);
  for (const auto& other : others) {
    if (!other || other->info.name == info.name) continue;
    auto last = other->Last();
    if (!last) continue;
    // LAST-PART is that of the segment LAST-MSN; a complete segment reports its last part.
    int part = last->part;
    if (part < 0) {
      const Segment* s = other->Find(last->msn);
      part = s && !s->parts.empty() ? s->parts.back()->index : 0;
    }
    m.rendition_reports.push_back(
        {absl::StrCat("../", other->info.name, "/index.ll.m3u8"), last->msn, part});
  }
  return hls::Write(m);
}

}  // namespace meshwork::streamer
