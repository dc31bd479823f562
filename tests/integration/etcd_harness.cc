#include "tests/integration/etcd_harness.h"

#include <signal.h>
#include <sys/socket.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "absl/strings/str_join.h"
#include "central/etcd/etcd_client.h"

namespace meshwork::testing {
namespace {

void Run(const std::string& cmd) {
  INFO(cmd);
  REQUIRE(std::system((cmd + " >/dev/null 2>&1").c_str()) == 0);
}

}  // namespace

std::string MakeTestPki(const std::string& dir, const std::string& ca_name,
                        const std::vector<std::string>& names) {
  const std::string ca = dir + "/" + ca_name + "-ca";
  Run("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=" + ca_name + " -keyout '" + ca +
      ".key' -out '" + ca + ".pem'");
  const std::string ext = dir + "/san.ext";
  std::ofstream(ext) << "subjectAltName=IP:127.0.0.1\n";
  for (const auto& name : names) {
    const std::string base = dir + "/" + name;
    Run("openssl req -newkey rsa:2048 -nodes -subj /CN=" + name + " -keyout '" + base +
        ".key' -out '" + base + ".csr'");
    Run("openssl x509 -req -days 1 -in '" + base + ".csr' -CA '" + ca + ".pem' -CAkey '" + ca +
        ".key' -CAcreateserial -extfile '" + ext + "' -out '" + base + ".pem'");
  }
  return ca + ".pem";
}

std::unique_ptr<EtcdCluster> EtcdCluster::Start(int members, const std::string& dir,
                                                const EtcdTls* tls) {
  auto cluster = std::make_unique<EtcdCluster>();
  std::vector<std::string> initial;
  for (int i = 0; i < members; ++i) {
    EtcdMember m;
    m.name = "m" + std::to_string(i);
    m.client_port = FreePort(SOCK_STREAM);
    m.peer_port = FreePort(SOCK_STREAM);
    initial.push_back(m.name + "=http://127.0.0.1:" + std::to_string(m.peer_port));
    cluster->members_.push_back(std::move(m));
  }
  const std::string token = "meshwork-test-" + std::to_string(::getpid()) + "-" + dir;
  const std::string scheme = tls ? "https://" : "http://";
  for (auto& m : cluster->members_) {
    const std::string client = scheme + "127.0.0.1:" + std::to_string(m.client_port);
    const std::string peer = "http://127.0.0.1:" + std::to_string(m.peer_port);
    std::vector<std::string> argv = {"/usr/bin/etcd",
                                     "--name",
                                     m.name,
                                     "--data-dir",
                                     dir + "/" + m.name,
                                     "--listen-client-urls",
                                     client,
                                     "--advertise-client-urls",
                                     client,
                                     "--listen-peer-urls",
                                     peer,
                                     "--initial-advertise-peer-urls",
                                     peer,
                                     "--initial-cluster",
                                     absl::StrJoin(initial, ","),
                                     "--initial-cluster-state",
                                     "new",
                                     "--initial-cluster-token",
                                     token,
                                     "--logger",
                                     "zap",
                                     "--log-outputs",
                                     "stderr",
                                     "--heartbeat-interval",
                                     "100",
                                     "--election-timeout",
                                     "1000"};
    if (tls) {
      argv.insert(argv.end(), {"--cert-file", tls->cert_file, "--key-file", tls->key_file,
                               "--trusted-ca-file", tls->ca_file});
      if (tls->require_client_cert) argv.push_back("--client-cert-auth");
    }
    m.process = Process::Start(argv, dir + "/" + m.name + ".log");
  }
  // Each member's /health over HTTP first: a gRPC connection opened while a member accepts
  // but does not serve yet stalls for seconds in etcd's port multiplexer. (Over TLS the
  // read below is the only probe.)
  for (auto& m : cluster->members_) {
    if (tls) break;
    bool healthy = Eventually(
        [&] { return Http("GET", m.endpoint(), "/health", "", {}, 1s).status == 200; }, 30s);
    INFO("etcd member " << m.name << " logs in " << dir);
    REQUIRE(healthy);
  }
  central::etcd::EtcdOptions options;
  options.endpoints = central::etcd::ParseEndpoints(cluster->Endpoints());
  options.request_timeout = std::chrono::milliseconds(1000);
  if (tls) {
    options.ca_file = tls->ca_file;
    options.cert_file = tls->cert_file;  // the server's own pair is a valid client too
    options.key_file = tls->key_file;
  }
  auto client = central::etcd::EtcdClient::Connect(options);
  REQUIRE(client.ok());
  std::string last_error;
  bool up = Eventually(
      [&] {
        etcdserverpb::RangeRequest probe;
        probe.set_key("/health-probe");
        auto read = (*client)->Range(probe);
        if (!read.ok()) last_error = read.status().ToString();
        return read.ok();
      },
      30s);
  INFO("etcd logs in " << dir << "; last error: " << last_error);
  REQUIRE(up);
  return cluster;
}

std::string EtcdCluster::Endpoints() const {
  std::vector<std::string> out;
  for (const auto& m : members_) out.push_back(m.endpoint());
  return absl::StrJoin(out, ",");
}

void EtcdCluster::Kill(size_t member) {
  auto& m = members_.at(member);
  if (!m.process || !m.process->running()) return;
  m.process->Signal(SIGKILL);
  m.process->Wait();
}

}  // namespace meshwork::testing
