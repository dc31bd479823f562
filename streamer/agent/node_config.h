// The configuration a streamer runs on: whatever central last pushed, applied by swapping an
// immutable snapshot. With central away the node keeps serving on it (C-5).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "common/net/cidr.h"
#include "meshwork/v1/control.pb.h"
#include "nlohmann/json.hpp"

namespace meshwork::streamer {

struct NodeConfig {
  uint64_t revision = 0;
  // Streams placed on this node: name → the stream object as configured in central.
  std::map<std::string, nlohmann::json> streams;
  std::shared_ptr<const net::CidrSet> trusted_proxies = std::make_shared<const net::CidrSet>();
  meshwork::v1::StreamerSettings settings;
};

// The snapshot after applying `update` to `current`: a full update replaces everything, a
// delta replaces only the sections it carries. Invalid CIDRs (which central never sends) are
// skipped.
std::shared_ptr<const NodeConfig> ApplyUpdate(const NodeConfig& current,
                                              const meshwork::v1::ConfigUpdate& update);

}  // namespace meshwork::streamer
