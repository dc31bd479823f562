// HLS playlists of the live window (S-8, S-9): the master of the MPEG-TS renditions and the
// media playlists, described from the store's immutable windows and printed by the one
// playlist writer (hls_writer.h). Pure functions: the same windows give the same text.
//
// Every stream's playlists come from here, whatever made its segments (the local packager or
// packagers publishing to the node). The LL-HLS forms (ll_hls.h) and the archive's share the
// listing rules below (masks, versions, discontinuity sequence).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "streamer/playlist/hls_writer.h"
#include "streamer/store/rendition_window.h"

namespace meshwork::streamer {

// A rendition's MPEG-TS variant: BANDWIDTH (peak measured bitrate), CODECS of its tracks,
// RESOLUTION and FRAME-RATE where known, URI "{rendition}/index.m3u8".
hls::Variant TsVariant(const RenditionWindow& window);
// Its EXT-X-STREAM-INF line without the newline. The same window always gives the same bytes
// (backup variants copy it, O-6).
std::string StreamInfLine(const RenditionWindow& window);

// The master playlist: one variant per rendition with a segment; empty when none has one.
// `uri_query` follows every URI (hls::WithQuery); `steering` (CS-1): the pathways every
// variant is listed for, null: none.
std::string MasterPlaylist(const std::vector<std::shared_ptr<const RenditionWindow>>& renditions,
                           const std::string& uri_query = "",
                           const hls::Steering* steering = nullptr);

// The version a segment is served under (L-14, `?v=N` in its URI), 0 when no candidate of
// it may be served (masked, L-13). Null: every segment at version 1.
using SegmentVersions = std::function<uint64_t(int64_t msn)>;

// One segment a playlist lists: its index in the window and its version (0: a gap).
struct ListedSegment {
  size_t index = 0;
  uint64_t version = 1;
};
// The segments of the live window a playlist lists, oldest first: the last
// `info.live_window` segments of the form (`ts`: those with an MPEG-TS object, else those
// with a CMAF one); a masked newest one left out, a masked one inside kept (a gap) so that
// msns stay consecutive.
std::vector<ListedSegment> ListSegments(const RenditionWindow& window, bool ts,
                                        const SegmentVersions& versions);
// EXT-X-DISCONTINUITY-SEQUENCE of a playlist whose first segment is window.segments[first]
// (that segment's own discontinuity counted: its tag is left out of the playlist).
int64_t DiscontinuitySequence(const RenditionWindow& window, size_t first);

// The media playlist of the live window (ListSegments): EXT-X-TARGETDURATION ≥ every listed
// segment's rounded duration, EXT-X-MEDIA-SEQUENCE and EXT-X-DISCONTINUITY-SEQUENCE consistent
// with the window, EXT-X-PROGRAM-DATE-TIME on every segment, EXT-X-DISCONTINUITY where the
// timeline jumped, EXT-X-GAP on masked ones, `?v=N` on every URI. MPEG-TS segments when the
// rendition has them, else its CMAF form (EXT-X-MAP + `.m4s`). Empty when there is no segment
// to list.
std::string MediaPlaylist(const RenditionWindow& window, const SegmentVersions& versions,
                          const std::string& uri_query = "");

// "2026-11-29T12:00:00.123Z" (hls::FormatProgramDateTime)
std::string FormatProgramDateTime(int64_t unix_ms);

}  // namespace meshwork::streamer
