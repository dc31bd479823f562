#include "tests/integration/etcd_harness.h"

#include <signal.h>
#include <sys/socket.h>

#include <catch2/catch.hpp>

#include "absl/strings/str_join.h"
#include "central/etcd/etcd_client.h"

namespace meshwork::testing {

std::unique_ptr<EtcdCluster> EtcdCluster::Start(int members, const std::string& dir) {
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
  for (auto& m : cluster->members_) {
    const std::string client = "http://127.0.0.1:" + std::to_string(m.client_port);
    const std::string peer = "http://127.0.0.1:" + std::to_string(m.peer_port);
    m.process = Process::Start({"/usr/bin/etcd",
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
                                "1000"},
                               dir + "/" + m.name + ".log");
  }
  // Each member's /health over HTTP first: a gRPC connection opened while a member accepts
  // but does not serve yet stalls for seconds in etcd's port multiplexer.
  for (auto& m : cluster->members_) {
    bool healthy = Eventually(
        [&] { return Http("GET", m.endpoint(), "/health", "", {}, 1s).status == 200; }, 30s);
    INFO("etcd member " << m.name << " logs in " << dir);
    REQUIRE(healthy);
  }
  central::etcd::EtcdOptions options;
  options.endpoints = central::etcd::ParseEndpoints(cluster->Endpoints());
  options.request_timeout = std::chrono::milliseconds(1000);
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
