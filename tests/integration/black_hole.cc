#include "tests/integration/black_hole.h"

#include <sched.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace meshwork::testing {

bool EnterOwnNetwork(std::string* why) {
  if (::unshare(CLONE_NEWNET) != 0) {
    *why = std::string("unshare(CLONE_NEWNET): ") + std::strerror(errno);
    return false;
  }
  if (std::system("ip link set lo up") != 0) {
    *why = "ip link set lo up failed";
    return false;
  }
  return true;
}

void BlackHole(int port) {
  for (const char* dir : {"--dport", "--sport"}) {
    std::string rule =
        "iptables -w -A INPUT -p tcp " + std::string(dir) + " " + std::to_string(port) + " -j DROP";
    INFO(rule);
    REQUIRE(std::system(rule.c_str()) == 0);
  }
}

int PortOf(const std::string& address) { return std::stoi(address.substr(address.rfind(':') + 1)); }

}  // namespace meshwork::testing
