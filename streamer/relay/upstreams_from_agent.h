// S-19, S-23: the relay's and the origin feed's calls to central through the agent (the
// agent is made after them in main, hence the pointer to its holder).
#pragma once

#include <memory>

#include "streamer/agent/agent.h"
#include "streamer/relay/origin_feed.h"
#include "streamer/relay/relay.h"

namespace meshwork::streamer::relay {

inline UpstreamsFn UpstreamsFromAgent(const std::unique_ptr<Agent>* agent) {
  return [agent](const std::string& stream) -> absl::StatusOr<std::vector<UpstreamNode>> {
    if (!*agent) return absl::UnavailableError("not connected to central yet");
    auto response = (*agent)->Upstreams(stream);
    if (!response.ok()) return response.status();
    std::vector<UpstreamNode> out;
    for (const auto& u : response->upstreams()) {
      out.push_back(UpstreamNode{u.node_id(), u.base_url(), u.zone(), u.timeline_fingerprint()});
    }
    return out;
  };
}

// S-23: the origin feed's NodesFn over the agent's Control/Nodes call.
inline NodesFn NodesFromAgent(const std::unique_ptr<Agent>* agent) {
  return [agent](const std::vector<std::string>& ids)
             -> absl::StatusOr<std::map<std::string, std::string>> {
    if (!*agent) return absl::UnavailableError("not connected to central yet");
    auto response = (*agent)->Nodes(ids);
    if (!response.ok()) return response.status();
    std::map<std::string, std::string> out;
    for (const auto& n : response->nodes()) out[n.node_id()] = n.publish_url();
    return out;
  };
}

}  // namespace meshwork::streamer::relay
