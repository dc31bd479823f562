// LL-HLS (S-10…S-15) per rfc8216bis: media playlists with parts, preload hints, rendition
// reports and delta updates, and the master of the CMAF renditions (live and archive),
// described from the store's windows and printed by the one playlist writer (hls_writer.h).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "streamer/delivery/blocking_request.h"
#include "streamer/delivery/playlists.h"
#include "streamer/playlist/hls_writer.h"
#include "streamer/store/rendition_window.h"
#include "streamer/store/waiters.h"

namespace meshwork::streamer {

// A rendition's CMAF variant: BANDWIDTH (peak measured bitrate), CODECS of its CMAF track,
// RESOLUTION and FRAME-RATE of its video (no URI).
hls::Variant CmafVariant(const RenditionWindow& window);

// One rendition of a CMAF master playlist, live or archived.
struct CmafRendition {
  hls::Variant variant;  // its own figures; the URI is `uri`
  bool video = true;     // false: an audio rendition
  int channels = 0;      // of an audio rendition
  std::string uri;
};
// The master of CMAF renditions (S-16a), in the given order: video renditions are the
// variants, the first audio rendition beside them their EXT-X-MEDIA audio group (its bandwidth
// and codecs added to every variant); without video, the audio renditions are the variants.
// `steering` (CS-1): the pathways every variant is listed for; null: none.
std::string CmafMaster(const std::vector<CmafRendition>& renditions, int version,
                       const std::string& uri_query, const hls::Steering* steering = nullptr);

// The master playlist of a stream's live CMAF renditions: variants point at
// `{rendition}/index.ll.m3u8` (LL-HLS, version 9), or at `{rendition}/index.m3u8` when not
// `low_latency` (version 7: a stream published as CMAF only has no MPEG-TS variants).
std::string LowLatencyMasterPlaylist(
    const std::vector<std::shared_ptr<const RenditionWindow>>& renditions, bool low_latency = true,
    const std::string& uri_query = "", const hls::Steering* steering = nullptr);

// The LL-HLS media playlist of `window`; `others` are the stream's other renditions (for
// EXT-X-RENDITION-REPORT); `skip` asks for a delta update (EXT-X-SKIP). With `versions`
// (L-13, L-14), segment and part URIs carry `?v=N` and a masked segment is an EXT-X-GAP with
// GAP=YES parts. Empty when the rendition has no segment yet.
std::string LowLatencyMediaPlaylist(
    const RenditionWindow& window,
    const std::vector<std::shared_ptr<const RenditionWindow>>& others, bool skip,
    const SegmentVersions& versions = nullptr, const std::string& uri_query = "");

}  // namespace meshwork::streamer
