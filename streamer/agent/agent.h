// The streamer's side of the control channel (C-1…C-5).
//
// One thread runs the loop: Register (3 s deadline) → apply the snapshot → Session: a hello
// with the revision held, then a load report every interval while a second thread reads
// config updates and applies them. Any failure closes the session and retries after a
// jittered exponential backoff from 100 ms to 4 s (so a returning central sees every node
// again within 5 s). Config is only ever replaced whole (Snapshot), so serving threads keep
// working on the last configuration while central is away (C-5).
//
// M-3: both calls carry `authorization: Bearer <token>`, the first token of the cluster token
// file, read again for every attempt (so a token rotated in the file is used from the next
// reconnect on). The token is never logged.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "common/crypto/token_file.h"
#include "common/sync/snapshot.h"
#include "meshwork/v1/control.grpc.pb.h"
#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"
#include "streamer/agent/node_config.h"

namespace grpc {
class ClientContext;
}

namespace meshwork::streamer {

struct AgentOptions {
  // HOST:PORT of central's gRPC listener, or several separated by commas (C-10: centrals
  // sharing one etcd). The agent keeps to one while its session lasts and moves to the next
  // after a failure, with the same backoff. (One DNS name with several addresses also works:
  // gRPC tries each address in turn.)
  std::string central;
  crypto::TokenFile* cluster_token = nullptr;  // required; must outlive the agent
  meshwork::v1::RegisterRequest registration;  // identity, listeners, addresses
  // Largest message accepted from central (a full configuration snapshot); central's own
  // send limit (--grpc-max-send-message-bytes) has the same default.
  int max_receive_message_bytes = 64 << 20;
  std::chrono::milliseconds report_interval{1000};
  std::chrono::milliseconds rpc_deadline{3000};
  std::chrono::milliseconds backoff_min{100};
  std::chrono::milliseconds backoff_max{4000};
  // Called on the agent's threads after each new configuration is in place.
  std::function<void(std::shared_ptr<const NodeConfig>)> on_config;
};

// Fills the parts of a load report only the node's other modules know (sessions, streams,
// listener bytes). Called on the agent thread.
using ReportFiller = std::function<void(meshwork::v1::LoadReport&)>;

class Agent {
 public:
  Agent(AgentOptions options, Snapshot<NodeConfig>* config, ReportFiller filler,
        prometheus::Registry* metrics);
  ~Agent();  // Stop()s

  void Start();
  void Stop();
  bool connected() const { return connected_.load(); }
  // The central the agent talks to now (C-10: one of --central's list); any thread.
  std::string CurrentCentral() const { return Central(); }
  // S-19: central's upstreams for `stream` (Control/Upstreams), on a channel of its own with
  // the RPC deadline. Any thread; blocks for at most that deadline.
  absl::StatusOr<meshwork::v1::UpstreamsResponse> Upstreams(const std::string& stream) const;
  // S-23: where the named nodes' listeners are (Control/Nodes); same terms as Upstreams.
  absl::StatusOr<meshwork::v1::NodesResponse> Nodes(const std::vector<std::string>& ids) const;

 private:
  void Loop();
  // One Register + Session; returns when the session ends. True when the session was healthy
  // — it carried at least one load report — so the backoff starts again from its minimum; a
  // session that central ends at once (replaced, over its queue) backs off like a refusal.
  bool RunOnce();
  void Apply(const meshwork::v1::ConfigUpdate& update);
  meshwork::v1::LoadReport BuildReport();
  bool WaitFor(std::chrono::milliseconds d);  // false when stopping

  // The central to talk to now (one of options_.central's list).
  const std::string& Central() const { return centrals_[current_.load() % centrals_.size()]; }

  AgentOptions options_;
  std::vector<std::string> centrals_;  // options_.central split; never empty
  std::atomic<size_t> current_{0};
  Snapshot<NodeConfig>* config_;
  ReportFiller filler_;
  std::atomic<bool> connected_{false};

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* active_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::thread thread_;

  prometheus::Gauge* revision_gauge_ = nullptr;
  prometheus::Gauge* connected_gauge_ = nullptr;
  prometheus::Counter* reports_ = nullptr;
  prometheus::Counter* reconnects_ = nullptr;
};

}  // namespace meshwork::streamer
