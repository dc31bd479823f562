// C-2: the host load a node reports, from /proc texts read at two moments.
#include "streamer/agent/host_sampler.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <string>

namespace meshwork::streamer {
namespace host_sampler_test {
namespace {

using namespace std::chrono_literals;

std::string NetDev(const std::string& rows) {
  return "Inter-|   Receive                                                |  Transmit\n"
         " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets "
         "errs drop fifo colls carrier compressed\n" +
         rows;
}

std::string Row(const std::string& name, uint64_t rx, uint64_t tx) {
  return name + ": " + std::to_string(rx) + " 0 0 0 0 0 0 0 " + std::to_string(tx) +
         " 0 0 0 0 0 0 0\n";
}

TEST_CASE("C-2 network load counts interfaces present at both readings, never a wrapped delta") {
  const auto t0 = std::chrono::steady_clock::time_point(100s);
  const std::string cpu = "cpu  100 0 100 800 0 0 0 0 0 0\n";
  auto before =
      HostSampler::Parse(cpu,
                         NetDev(Row("lo", 5, 5) + Row("eth0", 1'000'000'000, 2'000'000'000) +
                                Row("veth0", 10'000'000'000, 10'000'000'000)),
                         t0);
  // A second later: eth0 received 125 000 bytes and sent 250 000; veth0 is gone; a new
  // tun0 already holds counters; loopback moved a lot (not the host's network).
  auto after = HostSampler::Parse(
      "cpu  150 0 150 900 0 0 0 0 0 0\n",
      NetDev(Row("lo", 5'000'000'000, 5'000'000'000) + Row("eth0", 1'000'125'000, 2'000'250'000) +
             Row("tun0", 7'000'000, 7'000'000)),
      t0 + 1s);
  auto load = HostSampler::Between(before, after);
  CHECK(load.in_kbit == 1000);
  CHECK(load.out_kbit == 2000);
  CHECK(load.cpu_percent == Approx(50.0));  // 100 busy jiffies of 200
  // A counter that went back (a reset interface) adds nothing.
  auto reset = HostSampler::Parse(cpu, NetDev(Row("eth0", 10, 20)), t0 + 2s);
  auto after_reset = HostSampler::Between(after, reset);
  CHECK(after_reset.in_kbit == 0);
  CHECK(after_reset.out_kbit == 0);
  CHECK(after_reset.cpu_percent == 0);  // CPU counters that went back
}

}  // namespace
}  // namespace host_sampler_test
}  // namespace meshwork::streamer
