// M-5: the per-stream part of a streamer's /status: each stream's inputs (which one is active,
// bitrate, age of the last frame), renditions, live edge age and viewers by protocol, from a
// load report filled for the occasion (the same JSON central shows for the node), and its
// relay upstream and publish targets with their queues.
#pragma once

#include <map>
#include <string>

#include "meshwork/v1/types.pb.h"
#include "nlohmann/json.hpp"
#include "streamer/delivery/play_sessions.h"

namespace meshwork::streamer {

nlohmann::json StreamsStatus(const v1::LoadReport& report, const PlaySessions::Counts& viewers);

// Adds to each entry of `streams` (StreamsStatus's array) where its media comes from and goes
// to: `relay_upstream` (the upstream of the relay in `relays`, Relay::Status()'s array, or
// null when the stream is not relayed) and `publish_targets` (its entry in `targets`,
// OriginFeed::StatusByStream(), or an empty array).
void AddStreamRoutes(nlohmann::json& streams, const nlohmann::json& relays,
                     const std::map<std::string, nlohmann::json>& targets);

}  // namespace meshwork::streamer
