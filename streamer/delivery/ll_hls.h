// LL-HLS (S-10…S-15) per rfc8216bis: media playlists with parts, preload hints, rendition
// reports and delta updates, and the blocking-reload request rules.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "streamer/store/segment_store.h"
#include "streamer/store/waiters.h"

namespace meshwork::streamer {

// The master playlist for LL-HLS: variants point at `{rendition}/index.ll.m3u8`.
std::string LowLatencyMasterPlaylist(
    const std::vector<std::shared_ptr<const RenditionWindow>>& renditions);

// The LL-HLS media playlist of `window`; `others` are the stream's other renditions (for
// EXT-X-RENDITION-REPORT); `skip` asks for a delta update (EXT-X-SKIP). Empty when the
// rendition has no segment yet.
std::string LowLatencyMediaPlaylist(
    const RenditionWindow& window,
    const std::vector<std::shared_ptr<const RenditionWindow>>& others, bool skip);

// The newest published position of a rendition: the open segment's last part, else the last
// complete segment (part −1). nullopt when nothing is published.
std::optional<Position> LastPosition(const RenditionWindow& window);

// Parts a segment is made of at most (target / part target, rounded up).
int PartsPerSegment(const RenditionInfo& info);

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
                                        const RenditionInfo& info);

}  // namespace meshwork::streamer
