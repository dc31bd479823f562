#include "streamer/delivery/play_sessions.h"

#include "absl/strings/str_cat.h"
#include "common/status/absl_view.h"

namespace meshwork::streamer {

void PlaySessions::Touch(std::string_view stream, std::string_view protocol,
                         const net::IpAddress& client, std::string_view user_agent,
                         std::chrono::milliseconds active_window) {
  std::string key = absl::StrCat(client.ToString(), "\n", AbslView(stream), "\n",
                                 AbslView(protocol), "\n", AbslView(user_agent.substr(0, 256)));
  auto expires = clock_.Monotonic() + active_window;
  absl::MutexLock lock(&mu_);
  auto it = viewers_.find(key);
  if (it != viewers_.end()) {
    it->second.expires = expires;
    return;
  }
  if (viewers_.size() >= kMaxTracked) return;
  viewers_.emplace(std::move(key), Entry{std::string(stream), std::string(protocol), expires});
}

PlaySessions::Counts PlaySessions::Count() {
  Counts counts;
  auto now = clock_.Monotonic();
  absl::MutexLock lock(&mu_);
  for (auto it = viewers_.begin(); it != viewers_.end();) {
    if (it->second.expires <= now) {
      viewers_.erase(it++);
      continue;
    }
    ++counts.total;
    ++counts.by_stream[it->second.stream];
    ++counts.by_stream_protocol[{it->second.stream, it->second.protocol}];
    ++it;
  }
  return counts;
}

}  // namespace meshwork::streamer
