// The timeline anchor of a stream (S-5): one point of the stream's extended 90 kHz media
// timeline T paired with the wall-clock time (Unix ms) at which that media was live. Program
// date-time, DASH availabilityStartTime and latency figures all derive from it:
//
//   wall(T) = wall_ms + (T − t90k) / 90        (floored to the millisecond)
//
// The first node to package a timeline proposes {T of its first frame, its clock}; central
// keeps the first proposal with the stream and pushes it to every node of the stream, which
// adopt it when it predicts their own clock (so all nodes print the same dates).
//
// Plain values and pure functions; no dependency beyond the standard library (the REST codecs
// and the fuzz build include it too).
#pragma once

#include <cstdint>
#include <cstdlib>

namespace meshwork {

struct TimelineAnchor {
  int64_t t90k = 0;     // a point of the extended timeline (90 kHz ticks)
  int64_t wall_ms = 0;  // Unix milliseconds at which the media at t90k was live

  // Wall-clock time of the media at `t` (Unix ms), floored.
  int64_t WallAt(int64_t t) const {
    int64_t d = t - t90k;
    int64_t q = d / 90;
    if (d % 90 != 0 && d < 0) --q;
    return wall_ms + q;
  }
  bool operator==(const TimelineAnchor&) const = default;
};

// How far an anchor may mispredict a node's wall clock and still be adopted by it: the
// spread of ingest latency between nodes (a node fed through a longer path, a relay, a
// slower network) plus clock skew between NTP-synchronised hosts, with a wide margin. A
// larger error means another timeline (the source's clock is not the anchor's), and a new
// anchor is needed.
inline constexpr int64_t kAnchorToleranceMs = 10'000;

// True when `anchor` predicts wall-clock `wall_ms` for timeline point `t` within
// kAnchorToleranceMs (the node may adopt it).
inline bool AnchorPredicts(const TimelineAnchor& anchor, int64_t t, int64_t wall_ms) {
  return std::llabs(anchor.WallAt(t) - wall_ms) <= kAnchorToleranceMs;
}

// Bounds of an anchor that came over the network (a report, a pushed stream object). T is
// extended so that T/90 lies within about a day of the Unix time in ms (S-5), so both
// members lie between 2001 and 2200 in their units; anything else is nonsense to be ignored.
inline constexpr int64_t kAnchorMinWallMs = 1'000'000'000'000;  // 2001-09-09
inline constexpr int64_t kAnchorMaxWallMs = 7'258'118'400'000;  // 2200-01-01
inline bool IsPlausibleAnchor(const TimelineAnchor& a) {
  return a.wall_ms >= kAnchorMinWallMs && a.wall_ms <= kAnchorMaxWallMs && a.t90k >= 0 &&
         a.t90k <= kAnchorMaxWallMs * 90;
}

}  // namespace meshwork
