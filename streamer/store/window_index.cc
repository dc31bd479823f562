#include "streamer/store/window_index.h"

#include <algorithm>
#include <string>

#include "streamer/media/mp4_probe.h"

namespace meshwork::streamer::store_internal {
namespace {

int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

uint64_t SegmentBitrate(const Segment& s) {
  uint64_t bytes = s.ts_bytes ? s.ts_bytes : s.m4s_bytes;
  if (s.duration <= 0) return 0;
  return static_cast<uint64_t>(static_cast<double>(bytes) * 8 * 90000 /
                               static_cast<double>(s.duration));
}

}  // namespace

// The timing of an object that came without any (a packager's): from the template, on a
// media timeline where msn N starts at N·segment duration.
MediaTiming TemplateTiming(const Template& t, ObjectKey key) {
  MediaTiming m;
  int64_t wall = t.base() + key.msn * t.segment_ms;
  m.start = key.msn * t.segment_ms * 90;
  m.duration = int64_t{t.segment_ms} * 90;
  if (key.kind == ObjectKey::kPart && t.part_ms > 0) {
    m.start += int64_t{key.part} * t.part_ms * 90;
    m.duration = int64_t{t.part_ms} * 90;
    wall += int64_t{key.part} * t.part_ms;
  }
  m.program_date_time_ms = wall;
  m.timeline_origin = 0;
  m.independent = key.part == 0;
  return m;
}

// The availability start that makes the template's due times those of a locally packaged
// timeline: the wall clock at its origin less the number its first segment had.
int64_t LocalAvailabilityStart(const MediaTiming& t, int64_t msn, int segment_ms) {
  int64_t ticks = int64_t{segment_ms} * 90;
  int64_t wall_at_origin = t.program_date_time_ms - FloorDiv(t.start - t.timeline_origin, 90);
  int64_t start_number = msn - FloorDiv(t.start - t.timeline_origin + ticks / 2, ticks);
  return wall_at_origin - start_number * segment_ms;
}

// Rebuilds a rendition's playlist index after `candidate` was published as `key`.
void UpdateWindow(OriginRendition& r, const OriginPolicy& policy, ObjectKey key,
                  const Candidate& candidate, const RenditionInfo* info, int64_t now_ms) {
  auto w =
      r.window ? std::make_shared<RenditionWindow>(*r.window) : std::make_shared<RenditionWindow>();
  if (info) {
    auto init = w->info.init;
    w->info = *info;
    if (!w->info.init) w->info.init = init;
  } else {
    w->info.name = r.name;
    w->info.target_duration_ms = policy.tmpl.segment_ms;
    w->info.part_target_ms = policy.tmpl.part_ms;
    w->info.live_window = policy.live_window;
  }
  w->last_publish_unix_ms = now_ms;
  MediaTiming t = candidate.timing ? *candidate.timing : TemplateTiming(policy.tmpl, key);
  if (!candidate.timing && w->cmaf_timescale > 0 && !candidate.chunks.empty() &&
      (key.kind == ObjectKey::kM4s || key.kind == ObjectKey::kPart)) {
    // A packager's fragment says where it starts on its track's timeline (tfdt): DASH numbers
    // and offsets its segments by that (S-16).
    // A time past 2^50 at 90 kHz (~400 years) is no stream's: the template's timing stays
    // playlists and MPDs add to it and must not overflow).
    if (auto f = media::ProbeFragmentStart(*candidate.chunks.front())) {
      const long double start =
          static_cast<long double>(f->base_media_decode_time) * 90000.0L / w->cmaf_timescale;
      if (start <= static_cast<long double>(int64_t{1} << 50))
        t.start = static_cast<int64_t>(start);
    }
  }
  switch (key.kind) {
    case ObjectKey::kInit:
      w->has_cmaf = true;
      if (candidate.chunks.size() == 1) {
        w->info.init = candidate.chunks.front();
      } else {
        std::string body;
        for (const auto& c : candidate.chunks) body += *c;
        w->info.init = std::make_shared<const std::string>(std::move(body));
      }
      if (!info) {
        // A packager's init: its tracks name the rendition's media type and codecs (S-16a).
        w->info.cmaf_tracks.clear();
        w->cmaf_timescale = 0;
        for (const auto& track : media::ProbeInitSegment(*w->info.init)) {
          w->info.cmaf_tracks.push_back(track.info);
          if (!w->cmaf_timescale) w->cmaf_timescale = track.timescale;
        }
      }
      break;
    case ObjectKey::kPart: {
      w->has_cmaf = true;
      if (!w->segments.empty() && key.msn <= w->segments.back()->msn) break;  // late
      if (w->open_msn > key.msn) break;                                       // stale
      if (w->open_msn != key.msn) {
        w->open_msn = key.msn;
        w->open_start = t.start;
        w->open_program_date_time_ms = t.program_date_time_ms;
        w->open_discontinuity = t.discontinuity;
        w->open_parts.clear();
      }
      auto part = std::make_shared<Part>();
      part->index = key.part;
      part->start = t.start;
      part->duration = t.duration;
      part->independent = t.independent;
      part->last = t.last_part;
      part->discontinuity = t.discontinuity;
      auto at = std::lower_bound(w->open_parts.begin(), w->open_parts.end(), key.part,
                                 [](const auto& p, int index) { return p->index < index; });
      if (at != w->open_parts.end() && (*at)->index == key.part) {
        *at = std::move(part);
      } else {
        w->open_parts.insert(at, std::move(part));
      }
      break;
    }
    case ObjectKey::kTs:
    case ObjectKey::kM4s: {
      (key.kind == ObjectKey::kTs ? w->has_ts : w->has_cmaf) = true;
      auto at = std::lower_bound(w->segments.begin(), w->segments.end(), key.msn,
                                 [](const auto& s, int64_t msn) { return s->msn < msn; });
      std::shared_ptr<Segment> s;
      if (at != w->segments.end() && (*at)->msn == key.msn) {
        s = std::make_shared<Segment>(**at);
      } else {
        s = std::make_shared<Segment>();
        s->msn = key.msn;
        s->start = t.start;
        s->duration = t.duration;
        s->program_date_time_ms = t.program_date_time_ms;
        s->timeline_origin = t.timeline_origin;
        s->discontinuity = t.discontinuity;
      }
      (key.kind == ObjectKey::kTs ? s->ts_bytes : s->m4s_bytes) = candidate.size;
      if (w->open_msn == key.msn) s->parts = std::move(w->open_parts);
      if (w->open_msn <= key.msn) {
        w->open_msn = -1;
        w->open_parts.clear();
      }
      if (at != w->segments.end() && (*at)->msn == key.msn) {
        *at = std::move(s);
      } else {
        w->segments.insert(at, std::move(s));
      }
      w->peak_bitrate_bps = 0;
      for (const auto& seg : w->segments) {
        w->peak_bitrate_bps = std::max(w->peak_bitrate_bps, SegmentBitrate(*seg));
      }
      break;
    }
  }
  r.window = std::move(w);
}

// Whether `key` is the object a rendition will publish next, given its last position.
bool IsNextObject(const RenditionWindow& w, ObjectKey key) {
  auto last = w.Last();
  if (!last || key.kind == ObjectKey::kInit) return false;
  if (key.kind == ObjectKey::kPart) {
    return (last->part >= 0 && key.msn == last->msn && key.part == last->part + 1) ||
           (key.msn == last->msn + 1 && key.part == 0);
  }
  return key.msn == (last->part >= 0 ? last->msn : last->msn + 1);
}

// Drops from the index what the store no longer holds.
void TrimWindow(OriginRendition& r) {
  if (!r.window || r.window->segments.empty() || r.meta.first_msn < 0 ||
      r.window->segments.front()->msn >= r.meta.first_msn) {
    return;
  }
  auto w = std::make_shared<RenditionWindow>(*r.window);
  while (!w->segments.empty() && w->segments.front()->msn < r.meta.first_msn) {
    if (w->segments.front()->discontinuity) ++w->dropped_discontinuities;
    w->segments.pop_front();
  }
  r.window = std::move(w);
}

}  // namespace meshwork::streamer::store_internal
