// S-19: the relay's UpstreamsFn over the agent's Control/Upstreams call (the agent is made
// after the relay in main, hence the pointer to its holder).
#pragma once

#include <memory>

#include "streamer/agent/agent.h"
#include "streamer/relay/relay.h"

namespace meshwork::streamer::relay {

inline UpstreamsFn UpstreamsFromAgent(const std::unique_ptr<Agent>* agent) {
  return [agent](const std::string& stream) -> absl::StatusOr<std::vector<UpstreamNode>> {
    if (!*agent) return absl::UnavailableError("not connected to central yet");
    auto response = (*agent)->Upstreams(stream);
    if (!response.ok()) return response.status();
    std::vector<UpstreamNode> out;
    for (const auto& u : response->upstreams()) {
      out.push_back(UpstreamNode{u.node_id(), u.base_url(), u.zone()});
    }
    return out;
  };
}

}  // namespace meshwork::streamer::relay
