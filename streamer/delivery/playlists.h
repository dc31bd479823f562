// HLS playlists with MPEG-TS segments (S-8, S-9), built from the store's immutable windows.
// Pure functions: the same windows give the same text.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "streamer/store/segment_store.h"

namespace meshwork::streamer {

// A rendition's variant line, without the newline:
// "#EXT-X-STREAM-INF:BANDWIDTH=<peak bps>[,CODECS="…"][,RESOLUTION=WxH][,FRAME-RATE=f]".
// The same window always gives the same bytes (backup variants copy it, O-6).
std::string StreamInfLine(const RenditionWindow& window);

// The master playlist: one variant per rendition with BANDWIDTH (peak measured bitrate),
// CODECS, RESOLUTION and FRAME-RATE; variant URIs are relative ("v1/index.m3u8").
// Renditions without a segment yet are left out; empty when none has one.
std::string MasterPlaylist(const std::vector<std::shared_ptr<const RenditionWindow>>& renditions);

// The media playlist of the live window: the last `info.live_window` segments,
// EXT-X-TARGETDURATION ≥ every listed segment's rounded duration, EXT-X-MEDIA-SEQUENCE and
// EXT-X-DISCONTINUITY-SEQUENCE consistent with the window, EXT-X-PROGRAM-DATE-TIME on every
// segment, EXT-X-DISCONTINUITY where the timeline jumped. Empty when there is no segment.
std::string MediaPlaylist(const RenditionWindow& window);

// "2026-11-29T12:00:00.123Z"
std::string FormatProgramDateTime(int64_t unix_ms);

}  // namespace meshwork::streamer
