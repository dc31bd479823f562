// A small client of etcd's v3 gRPC API (C-10): unary KV and lease calls that move to the
// next endpoint when one is down, a watch stream, and the helpers central's etcd store and
// leader election share. Errors come back as absl statuses whose message names etcd and the
// call; an etcd that cannot be reached, or has no quorum, is Unavailable (HTTP 503).
//
// Thread-safe: any thread may call; each call has its own deadline (`request_timeout`).
// Authentication (user and password) is done once and redone when etcd says the token is
// no longer valid.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "etcd/etcd_v3.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace meshwork::central::etcd {

struct EtcdOptions {
  std::vector<std::string> endpoints;  // host:port of each member's client URL
  // TLS when `ca_file` is set (client certificate optional); plaintext otherwise.
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  // etcd's own authentication, when `user` is set.
  std::string user;
  std::string password;
  std::chrono::milliseconds request_timeout{3000};
};

// "host:port,host:port" → endpoints; an `http://` or `https://` prefix is dropped.
std::vector<std::string> ParseEndpoints(const std::string& list);

// A key prefix ending in '/' ("/meshwork" → "/meshwork/"), as every key under it is made.
std::string NormalizedPrefix(std::string prefix);

// The first key after every key that starts with `prefix` (etcd's range_end for a prefix).
std::string PrefixEnd(const std::string& prefix);

class EtcdClient {
 public:
  static absl::StatusOr<std::unique_ptr<EtcdClient>> Connect(EtcdOptions options);

  absl::StatusOr<etcdserverpb::RangeResponse> Range(const etcdserverpb::RangeRequest& request);
  absl::StatusOr<etcdserverpb::TxnResponse> Txn(const etcdserverpb::TxnRequest& request);
  absl::StatusOr<etcdserverpb::PutResponse> Put(const etcdserverpb::PutRequest& request);
  // Drops the history before `revision` (keys' older versions; watches from before it are
  // cancelled with compact_revision). OutOfRange when it was already compacted that far.
  absl::Status Compact(int64_t revision);
  // A new lease of `ttl`; returns its id.
  absl::StatusOr<int64_t> GrantLease(std::chrono::seconds ttl);
  // Renews `lease` once; NotFound when etcd no longer has it.
  absl::Status KeepAlive(int64_t lease);
  absl::Status RevokeLease(int64_t lease);

  // Watches [key, range_end) from `start_revision`, calling `on_response` for each answer
  // until it returns false, the stream fails, or Cancel() is called from another thread.
  // Returns why the watch ended (OK after Cancel() or a false from `on_response`).
  absl::Status Watch(const std::string& key, const std::string& range_end, int64_t start_revision,
                     const std::function<bool(const etcdserverpb::WatchResponse&)>& on_response);
  // Ends a Watch() running on another thread, and refuses new ones.
  void CancelWatches();

  const EtcdOptions& options() const { return options_; }

 private:
  explicit EtcdClient(EtcdOptions options);
  absl::Status Authenticate();
  // Runs `call` against each endpoint in turn (starting at the current one) until one
  // answers; moves the current endpoint to the one that did.
  absl::Status Unary(const std::string& what,
                     const std::function<grpc::Status(const std::shared_ptr<grpc::Channel>&,
                                                      grpc::ClientContext&)>& call);
  void Prepare(grpc::ClientContext& context, std::chrono::milliseconds timeout);

  const EtcdOptions options_;
  std::vector<std::shared_ptr<grpc::Channel>> channels_;
  std::atomic<size_t> current_{0};

  absl::Mutex mu_;
  std::string token_ ABSL_GUARDED_BY(mu_);
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<grpc::ClientContext*> watches_ ABSL_GUARDED_BY(mu_);
};

}  // namespace meshwork::central::etcd
