// Z-22: the streamer's asynchronous client of central's Routing.Route, for the viewer requests
// a node cannot answer from its own view (streamer/delivery/central_redirect.h).
//
// One channel to the central the agent currently talks to (made again when that changes),
// the gRPC callback API (no thread of ours waits), the cluster token on every call (M-3), a
// deadline per call. Route() may be called from any thread; `done` runs exactly once, on a
// gRPC thread (or at once on the caller's thread when no central is known or the client is
// stopping). Stop() (and the destructor) cancels the calls in flight and waits for their
// callbacks, so nothing of the client is touched after it returns.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "meshwork/v1/routing.grpc.pb.h"

namespace meshwork::streamer {

class RouteClient {
 public:
  using Done = std::function<void(absl::StatusOr<meshwork::v1::RouteResponse>)>;
  // `central` names central's gRPC address for each call ("" while none is known); `token`
  // the bearer token to present (M-3: the node's own when it has one); both any thread.
  RouteClient(std::function<std::string()> central, std::function<std::string()> token,
              std::chrono::milliseconds deadline);
  ~RouteClient();

  // NotFound / Unavailable / DeadlineExceeded as central (or the transport) says.
  void Route(meshwork::v1::RouteRequest request, Done done);
  void Stop();

 private:
  struct Call;
  void Finish(Call* call);

  const std::function<std::string()> central_;
  const std::function<std::string()> token_;
  const std::chrono::milliseconds deadline_;

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::string address_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<meshwork::v1::Routing::Stub> stub_ ABSL_GUARDED_BY(mu_);
  std::set<Call*> calls_ ABSL_GUARDED_BY(mu_);
};

}  // namespace meshwork::streamer
