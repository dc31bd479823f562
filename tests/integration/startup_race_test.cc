// R-10: a cluster booted all at once — three centrals started together on a new three-member
// etcd, then three streamers together — ten rounds. Before the fix one central in three to
// five rounds exited with "another central changed the configuration": the first writes
// (the first viewing key, the nodes' registrations) race, and the loser must re-read and
// retry instead of giving up.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/integration/etcd_harness.h"
#include "tests/integration/harness.h"
#include "tests/test_paths.h"

namespace meshwork::testing {
namespace {

// Launches a process without waiting for it; the caller waits for READY once all started.
std::unique_ptr<Process> Launch(std::vector<std::string> argv, const std::string& log) {
  argv.push_back("--cluster-token-file=" + ClusterTokenFile());
  return Process::Start(argv, log);
}

TEST_CASE("R-10 three centrals and three streamers started at once on a new etcd, ten rounds") {
  const std::string dir = MakeTempDir("r10");
  const std::vector<std::string> ids = {"ingest-1", "edge-1", "edge-2"};
  for (int round = 0; round < 10; ++round) {
    INFO("round " << round);
    const std::string rdir = dir + "/r" + std::to_string(round);
    auto etcd = EtcdCluster::Start(3, rdir + "/etcd");
    std::vector<Central> centrals(3);
    for (int i = 0; i < 3; ++i) {
      const std::string name = "c" + std::to_string(i);
      centrals[i].process =
          Launch({CentralBin(), "--data-dir=" + rdir + "/" + name, "--http-listen=127.0.0.1:0",
                  "--grpc-listen=127.0.0.1:0", "--etcd_endpoints=" + etcd->Endpoints(),
                  "--instance_id=" + name, "--leader_lease_s=3"},
                 rdir + "/" + name + ".log");
    }
    std::vector<std::string> grpcs;
    for (auto& c : centrals) {
      auto ready = c.process->WaitReady();  // fails the test if this central exited
      c.http = ready["http"].get<std::string>();
      c.grpc = ready["grpc"].get<std::string>();
      grpcs.push_back(c.grpc);
    }
    std::vector<std::unique_ptr<Process>> nodes;
    for (int i = 0; i < 3; ++i) {
      std::string order = grpcs[i] + "," + grpcs[(i + 1) % 3] + "," + grpcs[(i + 2) % 3];
      nodes.push_back(Launch({StreamerBin(), "--central=" + order, "--node-id=" + ids[i],
                              std::string("--role=") + (i == 0 ? "ingest" : "edge"),
                              "--listen=127.0.0.1:0", "--publish-listen=127.0.0.1:0"},
                             rdir + "/" + ids[i] + ".log"));
    }
    for (auto& n : nodes) n->WaitReady();
    // Every central serves, and sees every node online (each is attached to one of them).
    for (auto& c : centrals) {
      INFO("central " << c.http);
      CHECK(Eventually(
          [&] {
            for (const auto& id : ids) {
              if (!IsOnline(c, id)) return false;
            }
            return true;
          },
          20s));
    }
    // And each takes a write.
    for (size_t i = 0; i < centrals.size(); ++i) {
      auto put = Http("PUT", centrals[i].http, kApi + "/zones/z" + std::to_string(i),
                      R"({"routes": ["10.)" + std::to_string(i) + R"(.0.0/16"]})");
      INFO(put.body);
      CHECK(put.status == 201);
    }
  }
}

}  // namespace
}  // namespace meshwork::testing
