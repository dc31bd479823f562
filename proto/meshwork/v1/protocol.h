// The control channel's protocol version (C-1): a streamer sends it in Register. Central
// registers a node of another version too (logged as register_protocol_mismatch); OTT
// eligibility judges it by the group's min_protocol_version (O-4). The one definition for
// central, the streamer and the simulated nodes.
#pragma once

#include <cstdint>

namespace meshwork::v1 {

inline constexpr uint32_t kProtocolVersion = 1;

// CS-1: a steered stream's pathways travel as the group view "steering:<stream>" in
// ConfigUpdate.ott_groups (an OTT group name never holds ':').
inline constexpr char kSteeringGroupPrefix[] = "steering:";

}  // namespace meshwork::v1
