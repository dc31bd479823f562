// DASH (S-16): a dynamic MPD over the same fMP4 segments as LL-HLS, with SegmentTemplate
// $Number$ (the msn), availabilityStartTime consistent across nodes (derived from the
// segments' program date-time, S-5), UTCTiming pointing at the node's time endpoint and
// low-latency attributes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "streamer/playlist/hls_writer.h"
#include "streamer/store/rendition_window.h"

namespace meshwork::streamer {

struct DashOptions {
  std::string time_url = "/time";  // UTCTiming (urn:mpeg:dash:utc:http-iso:2014)
  int64_t now_unix_ms = 0;         // publishTime
  std::string uri_query;           // appended to the init and media templates (A-3: a token)
  // S-17, CS-1: one BaseURL per pathway (this node's first; base "" = "./", which dash.js
  // reads as the only BaseURL: give absolute ones), with
  // serviceLocation = the pathway id and DVB priority in list order (weight 1), and a
  // Location (the MPD there, with `uri_query`) per pathway with an absolute base; with a
  // steering server, a ContentSteering element naming it and this node's pathway.
  std::vector<hls::Pathway> pathways;
  std::string steering_uri;  // empty: no ContentSteering
};

// The MPD for a stream's renditions (Representations); empty when none has a segment.
// availabilityStartTime = the newest segment's start less msn·segment duration, moved by the
// measured distance of the media timeline to the wall clock (newest publish time − newest
// media end) and rounded up to a part target; see dash.cc.
std::string DashManifest(const std::vector<std::shared_ptr<const RenditionWindow>>& renditions,
                         const DashOptions& options);

// The time endpoint's body: ISO 8601 with milliseconds ("2026-11-29T12:00:00.123Z").
std::string DashTimeBody(int64_t now_unix_ms);

}  // namespace meshwork::streamer
