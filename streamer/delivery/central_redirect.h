// Z-22: when a node's own view cannot answer a viewer — a live entry (master playlist, LL-HLS
// playlist, MPD) of a stream not placed here, an archive request for a stream this node
// neither records nor relays — it asks central's Routing.Route (the redirect's decision,
// Z-20) with the viewer's address and answers 302 to the node central chose, the viewer's
// query kept. 404 when central does not know the stream or chooses this very node (its view
// is then the same as ours), 503 + Retry-After when no node is eligible, central cannot be
// asked in time, or too many asks are in flight.
//
// Answers are kept for `cache_ttl` per (stream, viewer address, scheme), and concurrent
// requests with the same key share one ask. Bounded: at most `max_in_flight` distinct asks,
// at most `max_cached` answers kept.
//
// Thread-safe. Redirect() never blocks an HTTP worker; waiting responders are answered
// outside the lock, on the thread the ask completes on (Responder::Send hops to the
// connection's worker).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/http/types.h"
#include "common/time/clock.h"
#include "meshwork/v1/routing.pb.h"
#include "prometheus/counter.h"
#include "prometheus/registry.h"

namespace meshwork::streamer {

class CentralRedirect {
 public:
  using Answer = std::function<void(absl::StatusOr<meshwork::v1::RouteResponse>)>;
  // Asks central (RouteClient::Route); `done` exactly once, on any thread.
  using AskFn = std::function<void(meshwork::v1::RouteRequest, Answer done)>;
  struct Options {
    std::chrono::milliseconds cache_ttl{1000};
    size_t max_in_flight = 64;
    size_t max_cached = 4096;
  };

  // `metrics` may be null.
  CentralRedirect(Options options, std::string self_id, AskFn ask, const Clock& clock,
                  prometheus::Registry* metrics);

  // Answers `r` for a viewer of `stream` asking for `path` (below the stream).
  void Redirect(http::RequestContext& ctx, std::string stream, std::string path, http::Responder r);

  // The stream a live entry path names ("/{stream}/index.m3u8", "…/index.ll.m3u8",
  // "…/index.mpd"), nullopt for any other path.
  static std::optional<std::string> EntryStream(std::string_view path);

 private:
  struct Decision {
    int code = 0;          // 302, 404 or 503
    std::string base_url;  // 302: the chosen node's URL, "{scheme}://host[:port]"
    std::string message;   // 404/503
    Clock::TimePoint expires;
  };
  struct Waiter {
    http::Responder responder;
    std::string stream, path, query;
  };
  Decision Decide(const absl::StatusOr<meshwork::v1::RouteResponse>& answer) const;
  static void Send(const Decision& decision, Waiter waiter);
  void Completed(const std::string& key, absl::StatusOr<meshwork::v1::RouteResponse> answer);

  const Options options_;
  const std::string self_id_;
  const AskFn ask_;
  const Clock& clock_;
  prometheus::Counter* asked_ = nullptr;
  prometheus::Counter* cached_ = nullptr;
  prometheus::Counter* busy_ = nullptr;

  absl::Mutex mu_;
  std::map<std::string, Decision> cache_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::vector<Waiter>> pending_ ABSL_GUARDED_BY(mu_);
};

}  // namespace meshwork::streamer
