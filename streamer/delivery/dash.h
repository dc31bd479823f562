// DASH (S-16): a dynamic MPD over the same fMP4 segments as LL-HLS, with SegmentTemplate
// $Number$ (the msn), availabilityStartTime consistent across nodes (from the stream's
// timeline anchor the segments carry, S-5/S-16a), UTCTiming pointing at the node's time
// endpoint and low-latency attributes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "streamer/store/segment_store.h"

namespace meshwork::streamer {

struct DashOptions {
  std::string time_url = "/time";  // UTCTiming (urn:mpeg:dash:utc:http-iso:2014)
  int64_t now_unix_ms = 0;         // publishTime
};

// Where number `start_number` of a SegmentTemplate begins, dated by a timeline anchor
// (S-5, S-16a): the first number whose segment starts at or after the anchor point (so the
// date is the anchor's, a real one), `presentation_time_offset` = its start on the 90 kHz
// media timeline, `availability_start_ms` = its wall-clock time by the anchor (ms, rounded
// up). Pure: every node holding the same anchor and numbering gets the same values, for the
// whole life of the timeline. `phase_ticks` = start(msn) − msn·segment_ticks of the newest
// segment (the numbering's offset from the multiples).
struct AnchoredNumbering {
  int64_t start_number = 0;
  int64_t presentation_time_offset = 0;
  int64_t availability_start_ms = 0;
};
AnchoredNumbering AnchorNumbering(const TimelineAnchor& anchor, int64_t phase_ticks,
                                  int64_t segment_ticks);

// The MPD for a stream's renditions (Representations); empty when none has a segment.
// With an anchor on the newest segment: numbering and availabilityStartTime from
// AnchorNumbering, rounded up to a part target. Without (segments from elsewhere): startNumber
// 0 and availabilityStartTime = the newest segment's start less msn·segment duration, moved
// by the measured distance of the media timeline to the wall clock (newest publish time −
// newest media end) and rounded up to a part target; see dash.cc.
std::string DashManifest(const std::vector<std::shared_ptr<const RenditionWindow>>& renditions,
                         const DashOptions& options);

// The time endpoint's body: ISO 8601 with milliseconds ("2026-11-29T12:00:00.123Z").
std::string DashTimeBody(int64_t now_unix_ms);

}  // namespace meshwork::streamer
