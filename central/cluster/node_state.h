// What central knows of one node at one moment: its registration and its latest report.
// NodeRegistry produces these (NodeRegistry::OttNodeStates); the OTT evaluator
// (central/ott/groups.h) and anything else that judges nodes reads them. A plain value.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "meshwork/v1/control.pb.h"

namespace meshwork::central {

struct NodeState {
  bool registered = false;
  meshwork::v1::RegisterRequest registration;
  bool has_report = false;
  meshwork::v1::LoadReport report;
  bool online = false;
  int64_t report_received_unix_ms = 0;  // central's wall clock when the report arrived
};
using NodeStates = std::map<std::string, NodeState>;  // by node id

}  // namespace meshwork::central
