// D-3 on an edge: archive requests (playlists, MPDs, segments, inits) for a stream this edge
// relays are fetched from a node that records it, not recorded here. The edge asks central
// for the stream's upstreams (best first) and takes the first answer that is not a 404,
// following the upstream's own D-5 redirect to the group member holding the period (at most
// two hops), so the viewer stays on the edge. One copy per site: answers are kept in memory
// for their Cache-Control max-age (an archived segment is immutable: a day; a finished VOD
// playlist a minute; an event playlist a second), bounded in bytes (least recently used
// first out), and concurrent requests for one path wait for a single upstream fetch.
//
// Threads: Serve() on HTTP workers never blocks; fetches (and the blocking upstream lookup)
// run on the proxy's own small pool; waiters are answered outside the lock. Bounds: the
// number of fetches in flight (more → 503), waiters per fetch, the body size, the cache
// bytes, a deadline per fetch.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "boost/asio/thread_pool.hpp"
#include "common/http/types.h"
#include "common/metrics/metrics.h"
#include "common/time/clock.h"
#include "prometheus/counter.h"
#include "prometheus/registry.h"
#include "streamer/relay/relay.h"

namespace meshwork::streamer::relay {

struct ArchiveProxyOptions {
  uint64_t max_cache_bytes = 256ull << 20;
  uint64_t max_body_bytes = 64ull << 20;
  size_t max_fetches = 32;  // distinct paths being fetched at once
  size_t max_waiters_per_fetch = 4096;
  std::chrono::milliseconds fetch_timeout{10000};
  int threads = 2;
  // the cluster token upstream requests present (`Authorization: Bearer`); empty: none.
  std::function<std::string()> cluster_token;
};

class ArchiveProxy {
 public:
  // `metrics` may be null.
  ArchiveProxy(ArchiveProxyOptions options, UpstreamsFn upstreams, const Clock& clock,
               prometheus::Registry* metrics);
  ~ArchiveProxy();  // waits for the fetches in flight (each bounded by its deadline)

  // Answers `request` (an archive path `path` of `stream`) from the cache or from upstream.
  void Serve(const std::string& stream, const http::Request& request, std::string_view path,
             http::Responder responder);

  // What the cache holds, each entry counted with its path and overhead (Cost).
  size_t cached_bytes() const;
  size_t cached_entries() const;

 private:
  struct Answer;  // an upstream answer, shared by the cache and the waiters
  struct Entry {
    std::shared_ptr<const Answer> answer;
    std::chrono::steady_clock::time_point expires;
    std::list<std::string>::iterator lru;
    uint64_t cost = 0;  // counted in cached_bytes_
  };
  static constexpr uint64_t kEntryOverheadBytes = 256;
  struct Waiter {
    http::Request request;
    http::Responder responder;
  };

  void Fetch(const std::string& stream, const std::string& path);
  std::shared_ptr<const Answer> FetchUpstream(const std::string& stream, const std::string& path);
  static void Reply(const Answer& answer, const http::Request& request, http::Responder& responder);
  void Insert(const std::string& path, std::shared_ptr<const Answer> answer)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Erase(std::map<std::string, Entry>::iterator it) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static uint64_t Cost(const std::string& path, const Answer& answer);

  ArchiveProxyOptions options_;
  UpstreamsFn upstreams_;
  const Clock& clock_;
  metrics::LabeledCounters requests_;  // by answer; counts nothing without a registry
  prometheus::Counter* upstream_bytes_ = nullptr;

  mutable absl::Mutex mu_;
  std::map<std::string, Entry> cache_ ABSL_GUARDED_BY(mu_);
  std::list<std::string> lru_ ABSL_GUARDED_BY(mu_);  // most recently used first
  uint64_t cached_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, std::vector<Waiter>> in_flight_ ABSL_GUARDED_BY(mu_);

  boost::asio::thread_pool pool_;  // last: joined first, while the members above live
};

}  // namespace meshwork::streamer::relay
