#include "streamer/delivery/node_metrics.h"

namespace meshwork::streamer {

NodeMetrics::NodeMetrics(prometheus::Registry* registry) {
  if (!registry) return;
  viewers_ = &prometheus::BuildGauge()
                  .Name("meshwork_viewers")
                  .Help("Active play sessions by stream and protocol (S-18)")
                  .Register(*registry);
  held_ = &prometheus::BuildGauge()
               .Name("meshwork_held_requests")
               .Help("Requests held until a publish (blocking reloads, preload hints)")
               .Register(*registry)
               .Add({});
}

void NodeMetrics::Update(const PlaySessions::Counts& counts, size_t held_requests) {
  if (!viewers_) return;
  held_->Set(static_cast<double>(held_requests));
  for (auto it = series_.begin(); it != series_.end();) {
    if (counts.by_stream_protocol.contains(it->first)) {
      ++it;
      continue;
    }
    viewers_->Remove(it->second);
    it = series_.erase(it);
  }
  for (const auto& [key, n] : counts.by_stream_protocol) {
    auto [it, added] = series_.try_emplace(key, nullptr);
    if (added) it->second = &viewers_->Add({{"stream", key.first}, {"protocol", key.second}});
    it->second->Set(static_cast<double>(n));
  }
}

}  // namespace meshwork::streamer
