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

// Client TLS for the members: PEM files of the CA, and the server certificate and key it
// signed (for 127.0.0.1). With `require_client_cert`, etcd refuses clients without a
// certificate from that CA.
struct EtcdTls {
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  bool require_client_cert = true;
};

// Writes a fresh CA (`dir`/NAME-ca.pem, key beside it) and one certificate it signs for
// each of `names` (`dir`/NAME.pem and NAME.key, with subjectAltName IP:127.0.0.1).
// Returns the CA file.
std::string MakeTestPki(const std::string& dir, const std::string& ca_name,
                        const std::vector<std::string>& names);

class EtcdCluster {
 public:
  // Starts `members` members and waits (up to 30 s) until the cluster answers a read. With
  // `tls`, clients reach them over https only.
  static std::unique_ptr<EtcdCluster> Start(int members, const std::string& dir,
                                            const EtcdTls* tls = nullptr);
  // "127.0.0.1:A,127.0.0.1:B,…": every member, for --etcd-endpoints.
  std::string Endpoints() const;
  void Kill(size_t member);  // SIGKILL and reap
  std::vector<EtcdMember>& members() { return members_; }

 private:
  std::vector<EtcdMember> members_;
};

}  // namespace meshwork::testing
