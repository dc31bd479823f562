// S-19: what an edge reads from its upstream's LL-HLS playlists. Pure functions over
// untrusted text (an upstream is another node, but the bytes came over the network): bounded
// (at most kMaxEntries entries; lines of any length skipped and walked in place, so memory
// does not grow with the text), never throwing; unknown tags
// are ignored. Fuzzed (tests/fuzz/upstream_playlist_fuzz.cc).
#pragma once

#include <cstdint>
#include <map>
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
  // EXT-X-GAP before a segment, GAP=YES on a part: not available upstream (L-13 masks), so
  // not to be fetched.
  bool gap = false;
  // Only in a node's X-Media-Timing field, never in a playlist: where the object's run of
  // the S-5 timeline began (Segment::timeline_origin) and where it starts, both 90 kHz.
  std::optional<int64_t> timeline_origin;
  std::optional<int64_t> start;
  bool last_part = false;  // the same: a part that ends its segment (Part::last)
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

// P-13, S-25: the timing of a part or segment as its node knows it, in the X-Media-Timing
// field of the object's answer and of an ingest's publish feed (S-23):
// "duration_us=500000;pdt=1700000000000;independent=1;discontinuity=0;origin=123456;
// start=130000" — so that an edge lists a part the moment its bytes are in rather than after
// the next playlist, and every node dates its objects on the same timeline run as the one
// that packaged them (DASH Periods, S-16a, agree on every node). FormatPartTiming writes
// duration, date-time, independence, discontinuity and, when set, origin and start;
// ParsePartTiming reads it back (any order, unknown keys ignored) into an entry of
// (msn, part); nullopt unless duration_us and pdt are present, well-formed and plausible
// (0 < duration ≤ 1 day, pdt > 0); a malformed origin or start is left out.
inline constexpr char kMediaTimingField[] = "X-Media-Timing";
std::string FormatPartTiming(const UpstreamEntry& timing);
std::optional<UpstreamEntry> ParsePartTiming(std::string_view field, int64_t msn, int part);

// The rendition names a master playlist references as `{name}/index.ll.m3u8` (variant
// streams and EXT-X-MEDIA URIs), in order, without repeats.
std::vector<std::string> ParseMasterRenditions(std::string_view text);

// S-21: whether `playlist` follows the timeline an edge has been relaying, given the
// program date-time of the segments it relayed (msn → ms). The same stream on the same
// timeline (S-5) gives a segment the same msn and the same date-time on every node; a node
// on another timeline (its own anchor, a source that restarted elsewhere) lists the same
// msn at another time. Compared on the newest msn both know, within `tolerance_ms`. When they
// share no msn and `segment_ms` (the template's segment duration) is known, by the S-5 rule
// instead: msn k starts at the first keyframe at or after k segment durations and a
// discontinuity adds time, never msns, so from the newest relayed segment to the upstream's
// newest, the date-time moves at least (msn distance × segment_ms) less one segment and the
// tolerance — an upstream whose msns run ahead of (or behind) its date-times, a source fed
// with other timestamps, is another timeline. True when nothing can be compared.
bool SameTimeline(const std::map<int64_t, int64_t>& relayed_pdt,
                  const UpstreamMediaPlaylist& playlist, int64_t tolerance_ms,
                  int64_t segment_ms = 0);

// S-6, S-21: whether an upstream's timeline fingerprint ("msn:start:duration", 90 kHz, as
// central relays it from the node's report) agrees with the starts of the segments an edge
// relayed (msn → start, 90 kHz): the same msn starts at the same PTS on one timeline, within
// `tolerance_90k`. Catches a timeline whose date-times agree within SameTimeline's tolerance
// but whose media does not (two anchors a fraction of a second apart). True when the
// fingerprint is empty or malformed, or names an msn not relayed (nothing to compare).
bool SameFingerprint(const std::map<int64_t, int64_t>& relayed_start, std::string_view fingerprint,
                     int64_t tolerance_90k);

}  // namespace meshwork::streamer::relay
