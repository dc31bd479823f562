// LL-HLS (S-10…S-15) per rfc8216bis: media playlists with parts, preload hints, rendition
// reports and delta updates, and the blocking-reload request rules.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "streamer/delivery/blocking_request.h"
#include "streamer/store/rendition_window.h"
#include "streamer/store/waiters.h"

namespace meshwork::streamer {

// The master playlist of a stream's CMAF renditions (S-16a): video renditions are the
// variants, an audio rendition beside them their EXT-X-MEDIA audio group. Variants point at
// `{rendition}/index.ll.m3u8` (LL-HLS), or at `{rendition}/index.m3u8` when not
// `low_latency` (a stream published as CMAF only has no MPEG-TS variants to list there).
std::string LowLatencyMasterPlaylist(
    const std::vector<std::shared_ptr<const RenditionWindow>>& renditions, bool low_latency = true);

// The LL-HLS media playlist of `window`; `others` are the stream's other renditions (for
// EXT-X-RENDITION-REPORT); `skip` asks for a delta update (EXT-X-SKIP). Empty when the
// rendition has no segment yet.
std::string LowLatencyMediaPlaylist(
    const RenditionWindow& window,
    const std::vector<std::shared_ptr<const RenditionWindow>>& others, bool skip);

}  // namespace meshwork::streamer
