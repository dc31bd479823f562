// S-19/S-20: an edge's relay. For a stream the edge does not package (central sends it
// marked `relay`), the first viewer request starts a relay that follows the upstream's LL-HLS
// playlists (blocking reloads, one per rendition at a time) and publishes every init, part and
// segment into the one store as pipeline `relay`, with its timing. Viewers are then served by
// the same routes as any stream: concurrent requests for an object wait on the store's holds
// and the upstream is asked once per object (coalescing); playlists, DASH, 404-with-TTL and
// 410 come from the edge's own windows and the stream's template, without asking upstream.
// A segment whose parts were all relayed is assembled from them (no second copy crosses the
// network). After `idle_timeout` without a request the relay stops.
// Each relayed stream's work is a StreamRelay (stream_relay.h).
//
// Upstreams come from central (UpstreamsFn, the Control/Upstreams RPC), best first; a
// blocking reload or a listed part that fails or does not come within two part targets (and
// 250 ms) moves the relay to the next upstream at once (S-21), and central is asked again
// after the last; an upstream that failed within the last 10 s is then tried last (R-9: a
// black-holed node still looks online to central).
//
// Threads: Apply() on the agent thread, Touch()/Relays() on HTTP workers (a mutex guards the
// stream map, which Touch() takes; Relays() reads a copy of the relayed set that Apply()
// replaces whole, through the calling thread's cache; the relay threads are started and
// joined outside the mutex). Each relayed stream has
// one thread per rendition doing blocking fetches; stopping waits for the fetches in flight
// (each bounded by its deadline).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/sync/snapshot.h"
#include "common/time/clock.h"
#include "nlohmann/json.hpp"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/registry.h"
#include "streamer/relay/ts_maker.h"
#include "streamer/store/in_flight.h"
#include "streamer/store/origin_store.h"

namespace meshwork::streamer::relay {

struct UpstreamNode {
  std::string node_id;
  std::string base_url;  // http://host:port
  std::string zone;
  std::string timeline_fingerprint;  // S-6 "msn:start:duration"; empty when unknown
};

// "http://host:port" → host and port; nullopt for anything else.
std::optional<std::pair<std::string, uint16_t>> SplitBaseUrl(std::string_view base);

// Asks central which nodes hold `stream`, best first. Called on relay threads.
using UpstreamsFn =
    std::function<absl::StatusOr<std::vector<UpstreamNode>>(const std::string& stream)>;

struct RelayOptions {
  std::string pipeline = "relay";
  std::chrono::milliseconds idle_timeout{30000};
  // Deadline of a plain fetch (an object, a playlist without a blocking request).
  std::chrono::milliseconds fetch_timeout{5000};
  uint64_t max_object_bytes = 32 << 20;
  // the cluster token every upstream request presents (`Authorization: Bearer`), so a
  // protected stream's node serves the relay; empty: none (tests, an open cluster).
  std::function<std::string()> cluster_token;
  // P-13: where the part an upstream's preload hint names is shared while it arrives (the
  // viewer routes read it); null: hinted parts are fetched once listed, as a whole.
  InFlightObjects* in_flight = nullptr;
};

class Relay {
 public:
  // `store` must outlive the relay; `metrics` may be null.
  Relay(RelayOptions options, OriginStore* store, UpstreamsFn upstreams, const Clock& clock,
        prometheus::Registry* metrics);
  ~Relay();  // stops every relay

  // The streams central marked for relay on this node; relays of others stop.
  void Apply(const std::set<std::string>& relayed);
  bool Relays(const std::string& stream) const;
  // The renditions the running relay of `stream` follows (its upstream's master); empty
  // before the relay read it.
  std::vector<std::string> Renditions(const std::string& stream) const;
  // A viewer asked for `stream`: starts its relay if it is not running, keeps it alive.
  void Touch(const std::string& stream);

  // The running relays: [{"stream", "upstream" (node id or null), "upstream_timeline" (its S-6
  // fingerprint as central gave it, "" when none)}] (for /status).
  nlohmann::json Status() const;

  // Objects fetched from upstreams (for tests and /metrics).
  uint64_t upstream_requests() const { return requests_.load(); }
  // Listed objects passed over: gaps, and 404/410 from an upstream that listed them.
  uint64_t passed_over() const { return passed_over_.load(); }

  class StreamRelay;

 private:
  RelayOptions options_;
  OriginStore* store_;
  UpstreamsFn upstreams_;
  const Clock& clock_;
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> passed_over_{0};
  prometheus::Counter* passed_over_metric_ = nullptr;
  prometheus::Counter* requests_metric_ = nullptr;
  prometheus::Family<prometheus::Counter>* bytes_metric_ = nullptr;  // by upstream_zone
  prometheus::Counter* failures_metric_ = nullptr;
  TsMaker::Counters ts_counters_;

  mutable absl::Mutex mu_;
  std::set<std::string> relayed_ ABSL_GUARDED_BY(mu_);
  // The same set for Relays(), asked on every viewer request: replaced whole by Apply and
  // read through each thread's cache, without the lock (P-5).
  Snapshot<std::set<std::string>> relayed_index_;
  std::map<std::string, std::shared_ptr<StreamRelay>> running_ ABSL_GUARDED_BY(mu_);
};

}  // namespace meshwork::streamer::relay
