// Simulated streamer nodes for load tests of central (P-11): many nodes in one process, each
// with its own Register + Session on central's control channel (C-1, C-2), reporting a load
// report every interval.
//
// Nodes share a small pool of gRPC channels (one connection per kNodesPerChannel nodes) and
// use the callback API, so 1 000 sessions need no thread per node: one ticker thread starts
// every node's report writes, registrations and teardown; gRPC's own threads run the
// reactions. A node whose session breaks (central restarted, stream finished) registers again
// with jittered exponential backoff (100 ms … 5 s), as a real streamer does (C-3). Every
// call carries `authorization: Bearer <cluster token>` (M-3), as a streamer's do.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/random/random.h"
#include "absl/synchronization/mutex.h"
#include "meshwork/v1/control.grpc.pb.h"

namespace meshwork::sim {

struct SimStream {
  std::string name;
  bool working = true;
};

struct SimNodeSpec {
  std::string id;
  std::string hostname;
  meshwork::v1::Role role = meshwork::v1::ROLE_EDGE;
  uint32_t http_port = 80;
  std::optional<uint64_t> play_sessions = 0;  // nullopt: the report omits the metric
  std::optional<uint64_t> out_kbit = 0;       // nullopt: omitted
  double cpu_percent = 5;
  std::vector<SimStream> streams;
};

struct SimStats {
  size_t nodes = 0;        // added and not killed
  size_t waiting = 0;      // to (re-)register, in backoff or queued
  size_t registering = 0;  // Register in flight
  size_t opening = 0;      // registered, Session hello not yet written
  size_t open = 0;         // session open, reporting
  uint64_t reports_sent = 0;
  uint64_t reports_skipped = 0;
  uint64_t config_updates_received = 0;
  uint64_t register_failures = 0;
  uint64_t sessions_lost = 0;
};

class SimCluster {
 public:
  // Nodes per gRPC channel (each channel is a connection of its own).
  static constexpr size_t kNodesPerChannel = 100;
  // Register RPCs in flight at once; the rest wait their turn (central syncs each new node
  // to disk, so an unbounded burst would only run into deadlines).
  static constexpr size_t kMaxRegistersInFlight = 64;
  static constexpr std::chrono::milliseconds kRegisterDeadline{5000};

  // `cluster_token`: the token presented to central (empty: none, and central refuses).
  SimCluster(std::string central_grpc_address, std::string cluster_token,
             std::chrono::milliseconds report_interval = std::chrono::milliseconds(1000));
  ~SimCluster();  // cancels every session and waits until gRPC is done with all of them
  SimCluster(const SimCluster&) = delete;
  SimCluster& operator=(const SimCluster&) = delete;

  // Runs on the ticker thread right before each report is built, on the node's spec (its
  // changes persist, as with Update). For values that change with every report. Set it
  // before the first Add.
  void SetBeforeReport(std::function<void(SimNodeSpec&)> hook);

  // Registers the node (Register, then its Session) in the background; returns at once.
  // Adding an id that is already live only replaces its spec; adding a killed id starts it
  // anew.
  void Add(const SimNodeSpec& spec);
  // Changes what a node reports from its next report on (the id cannot change).
  void Update(const std::string& id, const std::function<void(SimNodeSpec&)>& change);
  // Abrupt end, like kill -9: cancels its session (or registration); no more reports.
  void Kill(const std::string& id);
  // True once every added, not killed node has registered and its session is open.
  bool WaitRegistered(std::chrono::milliseconds timeout);

  SimStats stats() const;
  size_t nodes() const;          // added and not killed
  size_t sessions_open() const;  // of those, with an open session
  uint64_t reports_sent() const { return reports_sent_.load(); }
  uint64_t reports_skipped() const { return reports_skipped_.load(); }  // write still pending
  uint64_t config_updates_received() const { return updates_received_.load(); }
  uint64_t register_failures() const { return register_failures_.load(); }
  uint64_t sessions_lost() const { return sessions_lost_.load(); }  // ended without Kill

 private:
  enum class NodeState : int;
  struct Node;
  struct RegisterCall;
  class Session;

  void TickerLoop();
  // Picks waiting nodes whose backoff has passed, up to the in-flight bound; the caller starts
  // the returned calls after unlocking.
  std::vector<RegisterCall*> TakeRegistrationsLocked(std::chrono::steady_clock::time_point now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StartRegistrations(const std::vector<RegisterCall*>& calls);
  void OnRegistered(RegisterCall* call, const grpc::Status& status);
  void RetryLaterLocked(Node& node, std::chrono::steady_clock::time_point now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Moves a node to `state`, keeping live_, open_ and waiting_ right.
  void SetStateLocked(Node& node, NodeState state) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  v1::Control::Stub* StubForNextNodeLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void BuildReportLocked(Node& node, v1::LoadReport& report) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Reactions of a Session (gRPC threads).
  void SessionWriteDone(const std::shared_ptr<Node>& node, Session* session, bool hello);
  void SessionUpdate(const std::shared_ptr<Node>& node, const v1::ConfigUpdate& update);
  void SessionDone(const std::shared_ptr<Node>& node, Session* session);
  void SessionDeleted();

  const std::string central_;
  const std::string authorization_;  // "Bearer <token>"
  const std::chrono::milliseconds interval_;

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::function<void(SimNodeSpec&)> before_report_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<v1::Control::Stub>> stubs_ ABSL_GUARDED_BY(mu_);
  size_t nodes_added_ ABSL_GUARDED_BY(mu_) = 0;  // for the channel assignment
  std::map<std::string, std::shared_ptr<Node>> nodes_ ABSL_GUARDED_BY(mu_);
  // Every Session reactor not yet deleted (also those of nodes replaced after a Kill).
  std::set<Session*> sessions_ ABSL_GUARDED_BY(mu_);
  size_t live_ ABSL_GUARDED_BY(mu_) = 0;     // nodes not killed
  size_t open_ ABSL_GUARDED_BY(mu_) = 0;     // nodes with an open session
  size_t waiting_ ABSL_GUARDED_BY(mu_) = 0;  // nodes waiting to (re-)register
  size_t opening_ ABSL_GUARDED_BY(mu_) = 0;  // nodes registered, hello not yet written
  size_t registers_in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  size_t reactors_ ABSL_GUARDED_BY(mu_) = 0;  // Session reactors not yet deleted
  absl::BitGen rng_ ABSL_GUARDED_BY(mu_);

  std::atomic<uint64_t> reports_sent_{0};
  std::atomic<uint64_t> reports_skipped_{0};
  std::atomic<uint64_t> updates_received_{0};
  std::atomic<uint64_t> register_failures_{0};
  std::atomic<uint64_t> sessions_lost_{0};

  std::thread ticker_;
};

}  // namespace meshwork::sim
