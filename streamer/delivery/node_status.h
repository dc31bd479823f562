// M-5: the per-stream part of a streamer's /status: each stream's inputs (which one is active,
// bitrate, age of the last frame), renditions, live edge age and viewers by protocol, from a
// load report filled for the occasion (the same JSON central shows for the node).
#pragma once

#include "meshwork/v1/types.pb.h"
#include "nlohmann/json.hpp"
#include "streamer/delivery/play_sessions.h"

namespace meshwork::streamer {

nlohmann::json StreamsStatus(const v1::LoadReport& report, const PlaySessions::Counts& viewers);

}  // namespace meshwork::streamer
