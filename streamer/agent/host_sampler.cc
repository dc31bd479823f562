#include "streamer/agent/host_sampler.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

namespace meshwork::streamer {

namespace {

std::string Slurp(const char* path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

HostSampler::HostSampler() : last_(Read()) {}

HostSampler::Counters HostSampler::Read() {
  return Parse(Slurp("/proc/stat"), Slurp("/proc/net/dev"), std::chrono::steady_clock::now());
}

HostSampler::Counters HostSampler::Parse(std::string_view proc_stat, std::string_view proc_net_dev,
                                         std::chrono::steady_clock::time_point at) {
  Counters c;
  c.at = at;
  std::istringstream stat{std::string(proc_stat)};
  std::string label;
  if (stat >> label && label == "cpu") {
    // user nice system idle iowait irq softirq steal
    uint64_t v[8] = {};
    for (auto& x : v) stat >> x;
    for (auto x : v) c.cpu_total += x;
    c.cpu_busy = c.cpu_total - (v[3] + v[4]);  // all but idle and iowait
  }
  std::istringstream dev{std::string(proc_net_dev)};
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
    c.interfaces[name] = {rx, tx};
  }
  return c;
}

HostSampler::Load HostSampler::Between(const Counters& before, const Counters& after) {
  Load load;
  if (after.cpu_total > before.cpu_total && after.cpu_busy >= before.cpu_busy) {
    const double busy = double(after.cpu_busy - before.cpu_busy);
    const double total = double(after.cpu_total - before.cpu_total);
    load.cpu_percent = std::min(100.0, 100.0 * busy / total);
  }
  const double secs = std::chrono::duration<double>(after.at - before.at).count();
  if (secs <= 0) return load;
  uint64_t rx = 0, tx = 0;
  for (const auto& [name, now] : after.interfaces) {
    auto was = before.interfaces.find(name);
    if (was == before.interfaces.end()) continue;  // new since: no baseline
    if (now.first >= was->second.first) rx += now.first - was->second.first;
    if (now.second >= was->second.second) tx += now.second - was->second.second;
  }
  load.in_kbit = static_cast<uint64_t>(double(rx) * 8 / 1000 / secs);
  load.out_kbit = static_cast<uint64_t>(double(tx) * 8 / 1000 / secs);
  return load;
}

HostSampler::Load HostSampler::Sample() {
  Counters now = Read();
  Load load = Between(last_, now);
  last_ = std::move(now);
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
