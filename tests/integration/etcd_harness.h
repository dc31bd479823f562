// Integration-test harness for C-10: a real etcd cluster (Debian's etcd-server) of one or
// more members on loopback, each with its own data directory under the test's temp area.
// etcd cannot announce a port it picked itself, so ports come from FreePort().
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tests/integration/harness.h"

namespace meshwork::testing {

struct EtcdMember {
  std::string name;
  int client_port = 0;
  int peer_port = 0;
  std::unique_ptr<Process> process;
  std::string endpoint() const { return "127.0.0.1:" + std::to_string(client_port); }
};

class EtcdCluster {
 public:
  // Starts `members` members and waits (up to 30 s) until the cluster answers a read.
  static std::unique_ptr<EtcdCluster> Start(int members, const std::string& dir);
  // "127.0.0.1:A,127.0.0.1:B,…": every member, for --etcd-endpoints.
  std::string Endpoints() const;
  void Kill(size_t member);  // SIGKILL and reap
  std::vector<EtcdMember>& members() { return members_; }

 private:
  std::vector<EtcdMember> members_;
};

}  // namespace meshwork::testing
