#include "streamer/relay/upstream_list.h"

#include <algorithm>

#include "common/log/log.h"

namespace meshwork::streamer::relay {

bool UpstreamList::Connect() {
  absl::MutexLock lock(&mu_);
  if (current_ < upstreams_.size()) return true;
  const auto now = clock_.Monotonic();
  if (next_ask_ && now < *next_ask_) return false;
  auto found = (*upstreams_fn_)(stream_);
  std::erase_if(failed_at_, [now](const auto& e) { return now - e.second > kFailedMemory; });
  const bool fresh =
      found.ok() && std::any_of(found->begin(), found->end(), [this](const UpstreamNode& u) {
        return !failed_at_.contains(u.base_url);
      });
  ask_interval_ = fresh ? kMinAskInterval : std::min(2 * ask_interval_, kMaxAskInterval);
  next_ask_ = now + ask_interval_;
  if (!found.ok() || found->empty()) {
    log::Warn("relay_no_upstream",
              {{"stream", stream_},
               {"error", found.ok() ? "no node holds the stream" : found.status().ToString()}});
    return false;
  }
  upstreams_ = std::move(*found);
  current_ = 0;
  std::stable_partition(upstreams_.begin(), upstreams_.end(),
                        [this](const UpstreamNode& u) { return !failed_at_.contains(u.base_url); });
  log::Info("relay_upstream", {{"stream", stream_}, {"node", upstreams_[0].node_id}});
  return true;
}

bool UpstreamList::Next(const std::string& failed) {
  absl::MutexLock lock(&mu_);
  const UpstreamNode* current = CurrentLocked();
  if (!current || current->base_url != failed) return false;
  failed_at_[failed] = clock_.Monotonic();
  ++current_;
  if (const UpstreamNode* next = CurrentLocked()) {
    log::Warn("relay_failover", {{"stream", stream_}, {"node", next->node_id}});
  }
  return true;
}

std::string UpstreamList::node_id() const {
  absl::MutexLock lock(&mu_);
  const UpstreamNode* current = CurrentLocked();
  return current ? current->node_id : "";
}

std::string UpstreamList::base_url() const {
  absl::MutexLock lock(&mu_);
  const UpstreamNode* current = CurrentLocked();
  return current ? current->base_url : "";
}

std::string UpstreamList::timeline_fingerprint() const {
  absl::MutexLock lock(&mu_);
  const UpstreamNode* current = CurrentLocked();
  return current ? current->timeline_fingerprint : "";
}

std::string UpstreamList::zone() const {
  absl::MutexLock lock(&mu_);
  const UpstreamNode* current = CurrentLocked();
  return current ? current->zone : "";
}

}  // namespace meshwork::streamer::relay
