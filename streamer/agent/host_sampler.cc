#include "streamer/agent/host_sampler.h"

#include <fstream>
#include <sstream>
#include <string>

namespace meshwork::streamer {

HostSampler::HostSampler() : last_(Read()) {}

HostSampler::Counters HostSampler::Read() {
  Counters c;
  c.at = std::chrono::steady_clock::now();
  std::ifstream stat("/proc/stat");
  std::string label;
  if (stat >> label && label == "cpu") {
    uint64_t v[10] = {};
    for (auto& x : v) stat >> x;
    uint64_t idle = v[3] + v[4];  // idle + iowait
    for (auto x : v) c.cpu_total += x;
    c.cpu_busy = c.cpu_total - idle;
  }
  std::ifstream dev("/proc/net/dev");
  std::string line;
  while (std::getline(dev, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    name.erase(0, name.find_first_not_of(' '));
    if (name == "lo") continue;  // loopback is not the host's network
    std::istringstream fields(line.substr(colon + 1));
    uint64_t rx = 0, skip = 0, tx = 0;
    fields >> rx;
    for (int i = 0; i < 7; ++i) fields >> skip;
    fields >> tx;
    c.rx_bytes += rx;
    c.tx_bytes += tx;
  }
  return c;
}

HostSampler::Load HostSampler::Sample() {
  Counters now = Read();
  Load load;
  uint64_t total = now.cpu_total - last_.cpu_total;
  if (total > 0) load.cpu_percent = 100.0 * double(now.cpu_busy - last_.cpu_busy) / double(total);
  double secs = std::chrono::duration<double>(now.at - last_.at).count();
  if (secs > 0) {
    load.in_kbit = static_cast<uint64_t>(double(now.rx_bytes - last_.rx_bytes) * 8 / 1000 / secs);
    load.out_kbit = static_cast<uint64_t>(double(now.tx_bytes - last_.tx_bytes) * 8 / 1000 / secs);
  }
  last_ = now;
  {
    absl::MutexLock lock(&mu_);
    latest_ = load;
  }
  return load;
}

std::optional<HostSampler::Load> HostSampler::Last() const {
  absl::MutexLock lock(&mu_);
  return latest_;
}

}  // namespace meshwork::streamer
