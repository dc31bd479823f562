// LL-HLS delivery directives (S-12): parsing `_HLS_msn`, `_HLS_part`, `_HLS_skip` and the
// rules that decide what a blocking request waits for. No I/O; fuzzed.
#pragma once

#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "streamer/store/position.h"

namespace meshwork::streamer {

// Parts a segment is made of at most (target / part target, rounded up).
int PartsPerSegment(int target_duration_ms, int part_target_ms);

// A playlist request's delivery directives (S-12).
struct BlockingRequest {
  std::optional<int64_t> msn;
  std::optional<int> part;
  bool skip = false;
};
// Parses `_HLS_msn`, `_HLS_part`, `_HLS_skip` from a query string. InvalidArgument (naming
// the parameter) for malformed values and for `_HLS_part` without `_HLS_msn`.
absl::StatusOr<BlockingRequest> ParseBlockingRequest(std::string_view query);

// The position a blocking request waits for, normalised: a part index past the last part of
// a segment means part 0 of the next one. InvalidArgument when the request is too far ahead
// of `last` (msn more than last + 2, or more than three target durations of parts ahead).
absl::StatusOr<Position> BlockingTarget(const BlockingRequest& request, const Position& last,
                                        int target_duration_ms, int part_target_ms);

// P-9: how long a media playlist request without delivery directives — a player tuning in,
// which takes the playlist's last part as the live edge as of its arrival — waits for the
// rendition's next part. That part is due `part_target_ms` after the newest publish, which
// was `age_ms` ago. The request waits when the part is due within `hold_pct` % of a part
// target, until it is due plus half a part target (a part runs over its target by a frame at
// most), so never past 1.5 part targets; nullopt answers at once. 0 % never waits, 100 %
// always does: the first playlist comes up to a part later, in exchange for a live edge that
// is fresh instead of up to a part old for the whole session.
std::optional<int64_t> TuneInHoldMs(int64_t age_ms, int part_target_ms, int hold_pct);

}  // namespace meshwork::streamer
