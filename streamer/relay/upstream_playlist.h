// S-19: what an edge reads from its upstream's LL-HLS playlists. Pure functions over
// untrusted text (an upstream is another node, but the bytes came over the network): bounded
// (at most kMaxEntries entries, lines of any length skipped), never throwing; unknown tags
// are ignored. Fuzzed (tests/fuzz/upstream_playlist_fuzz.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace meshwork::streamer::relay {

inline constexpr size_t kMaxEntries = 4096;

// One part or one complete segment of an LL-HLS media playlist, with its position.
struct UpstreamEntry {
  int64_t msn = 0;
  int part = -1;  // −1: a complete segment (N.m4s)
  int64_t duration_us = 0;
  int64_t program_date_time_ms = 0;  // 0 when the playlist gave none before it
  bool independent = false;          // a part with INDEPENDENT=YES
  bool discontinuity = false;        // a segment after EXT-X-DISCONTINUITY
};

struct UpstreamMediaPlaylist {
  int64_t media_sequence = 0;
  int target_duration_s = 0;
  int64_t part_target_us = 0;
  std::vector<UpstreamEntry> entries;  // in playlist order: a segment's parts before it
  // The preload hint's part, when the playlist has one.
  std::optional<std::pair<int64_t, int>> hint;
};

// Parses `{msn}.m4s` / `{msn}.{part}.m4s` (the names Meshwork nodes use); nullopt otherwise.
std::optional<std::pair<int64_t, int>> ParseObjectName(std::string_view uri);

// The media playlist's entries with the object names above; entries with other URIs are
// skipped. nullopt when the text is not an HLS playlist.
std::optional<UpstreamMediaPlaylist> ParseMediaPlaylist(std::string_view text);

// The rendition names a master playlist references as `{name}/index.ll.m3u8` (variant
// streams and EXT-X-MEDIA URIs), in order, without repeats.
std::vector<std::string> ParseMasterRenditions(std::string_view text);

}  // namespace meshwork::streamer::relay
