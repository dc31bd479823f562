// What central sends a node over its Session: the sections of the configuration that
// changed after the revision the node holds (C-2, C-3).
#pragma once

#include <string>

#include "central/model/config_service.h"
#include "meshwork/v1/control.pb.h"

namespace meshwork::central {

// A full snapshot when `since_revision` is 0 or ahead of `config` (the node knew another
// history); otherwise only the sections changed after `since_revision`. An update with no
// section and `revision == since_revision` means "nothing to send".
// The viewing keys (O-7) are a section like the others (every node gets them). The OTT
// group views are not part of the configuration (they follow the nodes' reports): a full
// update carries `ott_views` (none when null), deltas never do; they travel on their own
// (OttViewsUpdate).
meshwork::v1::ConfigUpdate BuildConfigUpdate(
    const ClusterConfig& config, const std::string& node_id, uint64_t since_revision,
    const meshwork::v1::OttGroupViews* ott_views = nullptr);

// An update carrying only the node's OTT group views, at the revision the node already has
// (the streamer replaces the section whole).
meshwork::v1::ConfigUpdate OttViewsUpdate(uint64_t revision,
                                          const meshwork::v1::OttGroupViews& views);

// True when the update is full or carries at least one section.
bool HasSections(const meshwork::v1::ConfigUpdate& update);

// True when the update carries nothing the node does not have.
bool IsEmptyUpdate(const meshwork::v1::ConfigUpdate& update, uint64_t since_revision);

}  // namespace meshwork::central
