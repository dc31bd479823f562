// Z-23: delivery by proxy on a central listener configured so (`--http-delivery=proxy`,
// `--https-delivery=proxy`). Instead of a 302 to the chosen node, central fetches the same
// target from that node's plain HTTP listener and answers with the node's status, headers and
// body. The routing decision is the redirect's (viewer_api.h), so zones, limits and load hold
// the same way; relative URIs in playlists keep the viewer on central.
//
// What crosses: the viewer's query; its Range, If-None-Match, If-Modified-Since, User-Agent,
// Origin and Accept headers; `X-Forwarded-For` (the viewer's address: a node that lists central
// among its trusted proxies counts the viewer, T-2) and `X-Forwarded-Proto`. Back: every field
// but the hop-by-hop ones (RFC 9110 7.6.1) and Content-Length, plus `Via`. Bounds: a deadline
// on the whole exchange (`timeout`, long enough for an LL-HLS blocking reload), a body limit,
// and at most `max_in_flight` exchanges at once — beyond it 503 + Retry-After. A node that
// cannot be reached is 502, one that does not answer in time 504, each with the M-1 body.
//
// Thread-safe: Forward() runs on an HTTP worker and never blocks it (the fetch is asynchronous
// on the request's executor).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "common/http/types.h"
#include "common/log/log.h"
#include "common/time/clock.h"
#include "prometheus/counter.h"
#include "prometheus/registry.h"

namespace meshwork::central {

struct ViewerProxyOptions {
  std::chrono::milliseconds timeout{15'000};
  uint64_t body_limit_bytes = 64ull << 20;
  int64_t max_in_flight = 1024;
  const Clock* clock = &RealClock::Get();  // for the throttled failure log
};

class ViewerProxy {
 public:
  // `metrics` may be null.
  ViewerProxy(ViewerProxyOptions options, prometheus::Registry* metrics);

  // Fetches `target` (path and query) from host:port and answers `r` with the result.
  void Forward(http::RequestContext& ctx, std::string host, uint16_t port, std::string target,
               http::Responder r);

  int64_t in_flight() const { return in_flight_.load(); }

 private:
  const ViewerProxyOptions options_;
  std::atomic<int64_t> in_flight_{0};
  log::Throttle failure_log_{1000};            // viewers can make a node fail at will
  prometheus::Counter* answered_ = nullptr;    // the node's answer relayed
  prometheus::Counter* failed_ = nullptr;      // 502/504
  prometheus::Counter* overloaded_ = nullptr;  // 503 at max_in_flight
};

}  // namespace meshwork::central
