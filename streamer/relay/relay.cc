#include "streamer/relay/relay.h"

#include <charconv>
#include <map>

#include "streamer/relay/stream_relay.h"

namespace meshwork::streamer::relay {

std::optional<std::pair<std::string, uint16_t>> SplitBaseUrl(std::string_view base) {
  if (!base.starts_with("http://")) return std::nullopt;
  base.remove_prefix(7);
  size_t colon = base.rfind(':');
  uint32_t port = 80;
  std::string_view host = base;
  if (colon != std::string_view::npos && base.find(']', colon) == std::string_view::npos) {
    std::string_view digits = base.substr(colon + 1);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (ec != std::errc() || end != digits.data() + digits.size() || port == 0 || port > 65535) {
      return std::nullopt;
    }
    host = base.substr(0, colon);
  }
  if (host.empty()) return std::nullopt;
  return std::make_pair(std::string(host), static_cast<uint16_t>(port));
}

Relay::Relay(RelayOptions options, OriginStore* store, UpstreamsFn upstreams, const Clock& clock,
             prometheus::Registry* metrics)
    : options_(std::move(options)), store_(store), upstreams_(std::move(upstreams)), clock_(clock) {
  if (metrics) {
    requests_metric_ = &prometheus::BuildCounter()
                            .Name("meshwork_relay_upstream_requests_total")
                            .Help("Requests an edge sent to its upstreams (S-19)")
                            .Register(*metrics)
                            .Add({});
    bytes_metric_ = &prometheus::BuildCounter()
                         .Name("meshwork_relay_upstream_bytes_total")
                         .Help(
                             "Body bytes an edge received from its upstreams, by the upstream's "
                             "zone (empty: unzoned)")
                         .Register(*metrics);
    failures_metric_ = &prometheus::BuildCounter()
                            .Name("meshwork_relay_upstream_failovers_total")
                            .Help("Times a relay gave up on an upstream (S-21)")
                            .Register(*metrics)
                            .Add({});
    passed_over_metric_ = &prometheus::BuildCounter()
                               .Name("meshwork_relay_objects_passed_over_total")
                               .Help(
                                   "Listed objects a relay did not relay: gaps, and 404/410 from "
                                   "an upstream that listed them")
                               .Register(*metrics)
                               .Add({});
    ts_counters_ = TsMaker::Counters::Register(
        *metrics, "meshwork_relay_ts_made_total",
        "MPEG-TS segments an edge made from relayed CMAF segments (S-25), by result: ok, "
        "without_audio (its audio did not come), failed");
  }
}

Relay::~Relay() {
  std::map<std::string, std::shared_ptr<StreamRelay>> running;
  {
    absl::MutexLock lock(&mu_);
    running.swap(running_);
  }
  running.clear();  // joins, outside the lock
}

void Relay::Apply(const std::set<std::string>& relayed) {
  std::vector<std::shared_ptr<StreamRelay>> stopped;
  {
    absl::MutexLock lock(&mu_);
    relayed_ = relayed;
    relayed_index_.Set(std::make_shared<const std::set<std::string>>(relayed));
    for (auto it = running_.begin(); it != running_.end();) {
      if (!relayed.contains(it->first)) {
        stopped.push_back(std::move(it->second));
        it = running_.erase(it);
      } else {
        ++it;
      }
    }
  }
  stopped.clear();  // joins, outside the lock
}

nlohmann::json Relay::Status() const {
  std::vector<std::pair<std::string, std::shared_ptr<StreamRelay>>> running;
  {
    absl::MutexLock lock(&mu_);
    running.assign(running_.begin(), running_.end());
  }
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [stream, relay] : running) {
    if (relay->finished()) continue;
    std::string upstream = relay->Upstream();
    out.push_back({{"stream", stream},
                   {"upstream", upstream.empty() ? nlohmann::json() : nlohmann::json(upstream)},
                   {"upstream_timeline", relay->UpstreamTimeline()}});
  }
  return out;
}

std::vector<std::string> Relay::Renditions(const std::string& stream) const {
  std::shared_ptr<StreamRelay> relay;
  {
    absl::MutexLock lock(&mu_);
    auto it = running_.find(stream);
    if (it == running_.end() || !it->second) return {};
    relay = it->second;
  }
  return relay->Renditions();
}

bool Relay::Relays(const std::string& stream) const {
  thread_local Snapshot<std::set<std::string>>::ReadCache cache;
  return relayed_index_.Read(cache)->contains(stream);
}

void Relay::Touch(const std::string& stream) {
  std::shared_ptr<StreamRelay> finished;
  absl::MutexLock lock(&mu_);
  if (!relayed_.contains(stream)) return;
  auto& slot = running_[stream];
  if (slot && !slot->finished()) return slot->Touch();
  finished = std::move(slot);  // an idle relay that stopped: replaced by a new one
  slot = std::make_shared<StreamRelay>(this, stream);
  // `finished` has joined its threads already (finished() is set last), so releasing it
  // under the lock does not block.
}

}  // namespace meshwork::streamer::relay
