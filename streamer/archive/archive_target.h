// D-3/D-8: what an archive URL asks for, parsed without touching anything. Pure and bounded
// (its fuzz target is archive_target_fuzz).
//
//   {prefix}/index-{from}-{duration}.m3u8      HLS-TS, VOD (EXT-X-ENDLIST)
//   {prefix}/archive-{from}-{duration}.m3u8    the same (the alias other servers use)
//   {prefix}/index-{from}-now.m3u8             HLS-TS, EVENT (from `from` to the live edge)
//   {prefix}/timeshift_abs-{from}.m3u8         the same (the name other servers use)
//   {prefix}/index-{from}-{duration}.ll.m3u8   CMAF (fMP4) segments, VOD
//   {prefix}/index-{from}-now.ll.m3u8          CMAF, EVENT
//   {prefix}/archive-{from}-{duration}.mpd     DASH, static, over the CMAF recording (also
//                                              index-{from}-{duration}.mpd); no "now" form
//   {prefix}/dvr-{start_ms}-{duration_ms}.ts   an archived segment (.m4s for CMAF)
//   {prefix}/dvr-init-{start_ms}.mp4           an archived CMAF init segment
//
// `from` is Unix seconds (wall clock, S-5), `duration` seconds; a playlist's prefix is a
// stream (a master playlist) or stream/rendition (a media playlist), decided by the caller
// against the streams it records. Anything that starts like an archive name but is not one
// is kBad with a message naming what is wrong (a 400); other paths are kNotArchive.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "streamer/archive/layout.h"

namespace meshwork::streamer::archive {

struct ArchiveTarget {
  enum Kind { kNotArchive, kBad, kPlaylist, kSegment, kInit } kind = kNotArchive;
  std::string prefix;  // the path before the file name, without the leading '/'
  Proto proto = Proto::kTs;
  int64_t from_ms = 0;                 // playlists
  std::optional<int64_t> duration_ms;  // playlists; nullopt: "now" (an event playlist)
  bool dash = false;                   // playlists: a static MPD rather than an m3u8
  int64_t start_ms = 0;                // segments and inits
  int64_t segment_duration_ms = 0;     // segments
  std::string error;                   // kBad
};

// The newest `from` accepted: 9999-12-31 (Unix seconds).
inline constexpr int64_t kMaxArchiveFromS = 253402300799;

ArchiveTarget ParseArchiveTarget(std::string_view path);

}  // namespace meshwork::streamer::archive
