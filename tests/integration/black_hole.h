// black holes — packets dropped, not refused. EnterOwnNetwork() moves the calling test
// thread (and every process it starts afterwards) into a network namespace of its own with
// its loopback up; BlackHole(port) then drops that port's TCP packets both ways with
// iptables there. Nothing outside the namespace is touched, and it vanishes with the test
// process. Call EnterOwnNetwork() before starting any process of the test.
#pragma once

#include <string>

namespace meshwork::testing {

// False (with the reason) when the kernel refuses a network namespace here.
bool EnterOwnNetwork(std::string* why);
// Drops every packet to or from `port` on the namespace's loopback (fails the test when
// iptables refuses).
void BlackHole(int port);
// The port of "HOST:PORT".
int PortOf(const std::string& address);

}  // namespace meshwork::testing
