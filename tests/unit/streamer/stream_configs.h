// Test helper: the StreamConfigs a node would run on for the given stream objects, parsed as
// the agent parses central's (ParseStreamConfig).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "nlohmann/json.hpp"
#include "streamer/config/stream_config.h"

namespace meshwork::streamer {

inline StreamConfigs Configs(const std::vector<std::pair<std::string, nlohmann::json>>& objects) {
  StreamConfigs out;
  for (const auto& [name, object] : objects) out[name] = ParseStreamConfig(name, object);
  return out;
}

}  // namespace meshwork::streamer
