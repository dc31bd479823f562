// The per-stream part of a load report as JSON: what central shows in its streamer status
// (/central/api-v4/streamers) and a streamer in its own /status, in one form.
#pragma once

#include "meshwork/v1/types.pb.h"
#include "nlohmann/json.hpp"

namespace meshwork::v1 {

// [{name, working, live_window_age_s, timeline_fingerprint, play_sessions, publish_sessions,
//   active_input, timeline_anchor, renditions: [{name, codecs, bitrate_kbit}],
//   inputs: [{url, active, bitrate_kbit, last_frame_age_s}]}]
nlohmann::json StreamsJson(const LoadReport& report);

}  // namespace meshwork::v1
