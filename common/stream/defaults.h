// The defaults of a stream object's members, in one place for central (which resolves every
// member when it validates a stream, central/model/object_codecs.cc) and the streamer (which
// falls back to them for a member the object lacks, streamer/config/stream_config.cc).
#pragma once

#include <cstdint>

namespace meshwork::stream_defaults {

inline constexpr int kSegmentMs = 2000;       // S-5 segment duration (template.segment_ms too)
inline constexpr int kPartMs = 500;           // S-10 LL-HLS part duration (template.part_ms too)
inline constexpr int kLiveWindow = 6;         // S-9 segments in a live playlist
inline constexpr int kInputTimeoutMs = 3000;  // S-2 silence before an input fails over
inline constexpr int kGraceMs = 200;          // L-12 wait for a better-ranked pipeline
inline constexpr char kCors[] = "*";          // Access-Control-Allow-Origin of viewer answers
inline constexpr int64_t kDvrDepthS = 3600;   // D-2 archive depth
// O-3a: a stream's media playlist is stale (404) after this many segment durations.
inline constexpr int kOttStaleSegments = 2;
// The longest stream name (namespaces and '/' included): no longer prefix of a request path
// can name one, so routing tries none (a deep path costs no more than this).
inline constexpr unsigned kMaxStreamNameBytes = 512;

}  // namespace meshwork::stream_defaults
