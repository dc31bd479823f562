#include "streamer/agent/node_config.h"

namespace meshwork::streamer {

std::shared_ptr<const NodeConfig> ApplyUpdate(const NodeConfig& current,
                                              const v1::ConfigUpdate& update) {
  auto next = std::make_shared<NodeConfig>(update.full() ? NodeConfig() : current);
  next->revision = update.revision();
  if (update.has_trusted_proxies()) {
    std::vector<net::Cidr> cidrs;
    for (const auto& text : update.trusted_proxies().cidrs()) {
      auto c = net::Cidr::Parse(text);
      if (c.ok()) cidrs.push_back(*c);
    }
    next->trusted_proxies = std::make_shared<const net::CidrSet>(std::move(cidrs));
  }
  if (update.has_node()) next->settings = update.node();
  if (update.has_streams()) {
    next->streams.clear();
    for (const auto& s : update.streams().streams()) {
      auto parsed = nlohmann::json::parse(s.config_json(), nullptr, /*allow_exceptions=*/false);
      if (parsed.is_object()) next->streams[s.name()] = std::move(parsed);
    }
  }
  return next;
}

}  // namespace meshwork::streamer
