// CS-1: the pathways of the streams with content steering on, as views pushed to nodes.
//
// A pathway is one node's delivery of a stream (its id is the node id). The candidates for a
// stream are the nodes it is placed on and every edge (an edge relays any stream, S-19), each
// online, registered and with a viewer address; a node's master playlists and MPDs list one
// copy of the stream per candidate, and central's steering answers (central/routing/
// steering.h) order them per viewer. The view travels as a group view named
// "steering:<stream>" beside the OTT group views (O-6 backups and pathways are one list of
// nodes with the same address rules, O-9…O-14; ':' never appears in an OTT group name):
//   {"group": "steering:s1", "server_uri": "http://central:8080/steering/s1", "ttl_s": 10,
//    "members": [{"node", "stream", "eligible", "http_base", "https_base", "address_public",
//                 "shared_name", "zone", "load"}]}
// Each candidate node gets the view of each steered stream it is a candidate of. Pure.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "central/cluster/node_state.h"
#include "central/model/config_service.h"
#include "meshwork/v1/control.pb.h"
#include "meshwork/v1/protocol.h"

namespace meshwork::central::ott {

using v1::kSteeringGroupPrefix;

// Adds the steering views to `views` (by node id). `steering_base` is central's public base
// URL for players ("http://host:port"); with none, nothing is added (steering needs it).
void AddSteeringViews(const ClusterConfig& config, const NodeStates& nodes,
                      const std::string& steering_base,
                      std::map<std::string, meshwork::v1::OttGroupViews>& views);

}  // namespace meshwork::central::ott
