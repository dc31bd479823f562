// The playlist index of one rendition (S-5, S-9, S-10, S-16): its segments with their
// timing, the parts of each, and the open segment (the parts of an msn that has no segment
// object yet). The one store (OriginStore) keeps one per rendition, rebuilt by every publish
// into it; playlists and MPDs are rendered from it, and the bytes are read from the store's
// objects. Its index is immutable once shared (readers take it without locks); the only
// mutable part is the cache of playlists rendered from it (RenderCache, its own mutex).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/stream/defaults.h"
#include "streamer/media/frame.h"
#include "streamer/store/position.h"

namespace meshwork::streamer {

// An LL-HLS part (S-10): one fMP4 fragment of a segment.
struct Part {
  int index = 0;
  int64_t start = 0;         // 90 kHz, absolute timeline
  int64_t duration = 0;      // 90 kHz
  bool independent = false;  // starts with a keyframe
  // Its segment's last part (known to the packager that closed the segment with it): the
  // next part is part 0 of the next segment, so that is what the playlist hints.
  bool last = false;
  bool discontinuity = false;  // its segment follows a jump of the timeline (S-7)
  // The bytes (moof + mdat) as the local packager made them; the store serves parts from
  // its objects, so an index entry may leave this null.
  std::shared_ptr<const std::string> data;
  int64_t program_date_time_ms = 0;  // wall clock at its start (S-5)
  int64_t timeline_origin = 0;       // see Segment::timeline_origin
  double duration_seconds() const { return static_cast<double>(duration) / 90000.0; }
};

struct Segment {
  int64_t msn = 0;
  int64_t start = 0;     // 90 kHz on the stream's absolute timeline (S-5)
  int64_t duration = 0;  // 90 kHz
  int64_t program_date_time_ms = 0;
  // Where this segment's timeline began (90 kHz, the same scale as `start`): the same for
  // every segment of a timeline and every node of the stream, a new value after a
  // discontinuity. Its wall-clock time is program_date_time_ms − (start − origin)/90. DASH
  // reads it for availabilityStartTime and a Period per timeline (S-16a).
  int64_t timeline_origin = 0;
  bool discontinuity = false;  // the timeline jumped before this segment (S-7)
  // The MPEG-TS bytes as the local packager's segmenter made them (null for a CMAF-only
  // rendition). Only the segmenter's output carries them: the store's index leaves this null
  // and serves the bytes from its objects; ts_bytes tells whether the form exists there.
  std::shared_ptr<const std::string> ts;
  // fMP4 (CMAF) form: its parts, whose concatenation is the segment (S-10, S-16).
  std::vector<std::shared_ptr<const Part>> parts;
  // Sizes of the two forms as published (0: that form is absent).
  uint64_t ts_bytes = 0;
  uint64_t m4s_bytes = 0;
  double duration_seconds() const { return static_cast<double>(duration) / 90000.0; }
};

// What playlists need to know about a rendition besides its segments.
struct RenditionInfo {
  std::string name;  // "v1", "v2", … for video (or an audio-only source), "a1" for audio
  // The tracks of the MPEG-TS form, video first, then audio (HLS-TS keeps audio muxed with
  // each video rendition); empty for a rendition that exists only as CMAF ("a1").
  std::vector<media::TrackInfo> tracks;
  // The tracks of the fMP4 (CMAF) form: one media type per rendition (S-16a) — the video
  // track of a video rendition, the audio track of "a1" or of an audio-only source.
  std::vector<media::TrackInfo> cmaf_tracks;
  int target_duration_ms = stream_defaults::kSegmentMs;  // the configured segment duration
  int part_target_ms = stream_defaults::kPartMs;
  int live_window = stream_defaults::kLiveWindow;
  std::shared_ptr<const std::string> init;  // init.mp4 of the fMP4 form

  // The RFC 6381 codecs of the CMAF form, comma-separated ("" when unknown).
  std::string CmafCodecs() const {
    std::string codecs;
    for (const auto& t : cmaf_tracks) {
      if (t.codec_string.empty()) continue;
      if (!codecs.empty()) codecs += ",";
      codecs += t.codec_string;
    }
    return codecs;
  }

  // True when the CMAF form carries video (false for "a1" and audio-only sources).
  bool cmaf_video() const {
    for (const auto& t : cmaf_tracks) {
      if (t.is_video()) return true;
    }
    return false;
  }
};

// One rendition's published state, immutable once shared.
struct RenditionWindow {
  RenditionInfo info;
  std::deque<std::shared_ptr<const Segment>> segments;  // oldest first, msn increasing
  // Discontinuities of segments no longer held (for EXT-X-DISCONTINUITY-SEQUENCE).
  int64_t dropped_discontinuities = 0;
  uint64_t peak_bitrate_bps = 0;  // highest segment bitrate in the retained window
  int64_t last_publish_unix_ms = 0;
  // The segment being built: its msn, start and the parts completed so far (LL-HLS lists
  // them, DASH streams them). msn < 0 when none is open.
  int64_t open_msn = -1;
  int64_t open_start = 0;
  int64_t open_program_date_time_ms = 0;
  bool open_discontinuity = false;  // the open segment follows a jump of the timeline
  std::vector<std::shared_ptr<const Part>> open_parts;
  // Whether the rendition was published as MPEG-TS (HLS-TS playlists list `.ts`) and as
  // CMAF (init.mp4 + `.m4s`, LL-HLS and DASH).
  bool has_ts = false;
  bool has_cmaf = false;
  // The timescale of a packager's CMAF track (from its init.mp4), to place its fragments.
  uint32_t cmaf_timescale = 0;

  const Segment* Find(int64_t msn) const;
  // A part of a complete or the open segment; null when not (yet) held.
  const Part* FindPart(int64_t msn, int part) const;
  // The newest published position: the open segment's last part, else the last complete
  // segment (part −1). nullopt when nothing is published.
  std::optional<Position> Last() const;

  // Playlists rendered from this window, shared by every request it answers (P-4: a publish
  // that releases thousands of held requests renders once). Freed with the window.
  // Shared strings: a response sends them as its body without copying (SendBuffers).
  struct Rendered {
    std::shared_ptr<const std::string> plain;
    // Gzip of `plain`, made at the first request that accepts it (P-7: a playlist nobody
    // asks compressed is never compressed) under `gzip_once`; read only after that call.
    mutable std::once_flag gzip_once;
    mutable std::shared_ptr<const std::string> gzip;
  };
  // The one mutable member, behind its own mutex (any reader thread may fill it). A copy of
  // the window starts with an empty cache: the rendered text belongs to the original's index.
  struct RenderCache {
    RenderCache() = default;
    RenderCache(const RenderCache&) {}
    RenderCache& operator=(const RenderCache&) = delete;
    // The text rendered under `key`, or null.
    std::shared_ptr<const Rendered> Find(const std::string& key) const;
    // Keeps `rendered` under `key` unless another thread kept one first; returns the kept one.
    std::shared_ptr<const Rendered> Keep(const std::string& key,
                                         std::shared_ptr<const Rendered> rendered) const;

   private:
    mutable absl::Mutex mu;
    mutable std::map<std::string, std::shared_ptr<const Rendered>> entries ABSL_GUARDED_BY(mu);
  };
  RenderCache cache;

  RenditionWindow() = default;
  RenditionWindow(const RenditionWindow&) = default;  // every index field; an empty cache
  RenditionWindow& operator=(const RenditionWindow&) = delete;
};

}  // namespace meshwork::streamer
