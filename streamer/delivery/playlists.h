// HLS playlists with MPEG-TS segments (S-8, S-9), built from the store's immutable windows.
// Pure functions: the same windows give the same text.
//
// Every stream's playlists come from here, whatever made its segments (the local packager or
// packagers publishing to the node).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "streamer/store/rendition_window.h"

namespace meshwork::streamer {

// A rendition's variant line, without the newline:
// "#EXT-X-STREAM-INF:BANDWIDTH=<peak bps>[,CODECS="…"][,RESOLUTION=WxH][,FRAME-RATE=f]".
// The same window always gives the same bytes (backup variants copy it, O-6).
std::string StreamInfLine(const RenditionWindow& window);

// The master playlist: one variant per rendition with BANDWIDTH (peak measured bitrate),
// CODECS, RESOLUTION and FRAME-RATE where known; variant URIs are relative
// ("v1/index.m3u8"). Renditions without a segment yet are left out; empty when none has one.
std::string MasterPlaylist(const std::vector<std::shared_ptr<const RenditionWindow>>& renditions);

// The version a segment is served under (L-14, `?v=N` in its URI), 0 when no candidate of
// it may be served (masked, L-13).
using SegmentVersions = std::function<uint64_t(int64_t msn)>;

// The media playlist of the live window: the last `info.live_window` segments (a masked
// newest one left out, a masked one inside kept as EXT-X-GAP so msns stay consecutive),
// EXT-X-TARGETDURATION ≥ every listed segment's rounded duration, EXT-X-MEDIA-SEQUENCE and
// EXT-X-DISCONTINUITY-SEQUENCE consistent with the window, EXT-X-PROGRAM-DATE-TIME on every
// segment, EXT-X-DISCONTINUITY where the timeline jumped. MPEG-TS segments when the
// rendition has them, else its CMAF form (EXT-X-MAP + `.m4s`). Empty when there is no
// segment to list.
std::string MediaPlaylist(const RenditionWindow& window, const SegmentVersions& versions);

// "2026-11-29T12:00:00.123Z"
std::string FormatProgramDateTime(int64_t unix_ms);

}  // namespace meshwork::streamer
