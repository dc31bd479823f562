#include "streamer/relay/archive_proxy.h"

#include <algorithm>
#include <charconv>

#include "boost/asio/post.hpp"
#include "common/http/client.h"
#include "common/http/content.h"
#include "common/http/response.h"
#include "common/log/log.h"

namespace meshwork::streamer::relay {

namespace {

constexpr int kMaxRedirects = 2;
constexpr size_t kMaxUpstreamsTried = 3;
constexpr int kMaxTtlSeconds = 86400;

// Cache-Control's max-age in seconds (0 when absent, no-store or unreadable).
int MaxAge(std::string_view cache_control) {
  if (cache_control.find("no-store") != std::string_view::npos) return 0;
  auto at = cache_control.find("max-age=");
  if (at == std::string_view::npos) return 0;
  std::string_view digits = cache_control.substr(at + 8);
  int value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end == digits.data()) return 0;
  return std::clamp(value, 0, kMaxTtlSeconds);
}

}  // namespace

struct ArchiveProxy::Answer {
  http::Status status = http::Status::bad_gateway;
  std::string content_type;
  std::string cache_control;
  std::string location;  // a 3xx the edge did not follow
  std::shared_ptr<const std::string> body;
  int ttl_s = 0;  // 0: not cached
  bool media() const {
    return status == http::Status::ok &&
           (content_type == "video/mp2t" || content_type == "video/mp4");
  }
};

ArchiveProxy::ArchiveProxy(ArchiveProxyOptions options, UpstreamsFn upstreams, const Clock& clock,
                           prometheus::Registry* metrics)
    : options_(options),
      upstreams_(std::move(upstreams)),
      clock_(clock),
      pool_(std::max(1, options.threads)) {
  if (metrics) {
    requests_ = metrics::LabeledCounters(
        prometheus::BuildCounter()
            .Name("meshwork_edge_archive_requests_total")
            .Help("Archive requests an edge answered for streams it relays, by how: hit "
                  "(memory), fetched, coalesced (waited for a fetch), busy (503)")
            .Register(*metrics),
        "answer", {"hit", "fetched", "coalesced", "busy"});
    upstream_bytes_ = &prometheus::BuildCounter()
                           .Name("meshwork_edge_archive_upstream_bytes_total")
                           .Help("Archive body bytes an edge fetched from upstream nodes")
                           .Register(*metrics)
                           .Add({});
  }
}

ArchiveProxy::~ArchiveProxy() { pool_.join(); }

size_t ArchiveProxy::cached_bytes() const {
  absl::MutexLock lock(&mu_);
  return cached_bytes_;
}

size_t ArchiveProxy::cached_entries() const {
  absl::MutexLock lock(&mu_);
  return cache_.size();
}

void ArchiveProxy::Serve(const std::string& stream, const http::Request& request,
                         std::string_view path_view, http::Responder responder) {
  const std::string path(path_view);
  enum { kHit, kFetch, kCoalesced, kBusy } how = kBusy;
  std::shared_ptr<const Answer> hit;
  {
    absl::MutexLock lock(&mu_);
    auto it = cache_.find(path);
    if (it != cache_.end() && it->second.expires <= clock_.Monotonic()) {
      Erase(it);  // expired: its place is given back now
      it = cache_.end();
    }
    if (it != cache_.end()) {
      hit = it->second.answer;
      lru_.splice(lru_.begin(), lru_, it->second.lru);
      how = kHit;
    } else if (auto f = in_flight_.find(path); f != in_flight_.end()) {
      if (f->second.size() < options_.max_waiters_per_fetch) {
        f->second.push_back(Waiter{request, std::move(responder)});
        how = kCoalesced;
      }
    } else if (in_flight_.size() < options_.max_fetches) {
      in_flight_[path].push_back(Waiter{request, std::move(responder)});
      how = kFetch;
    }
  }
  static constexpr const char* kNames[] = {"hit", "fetched", "coalesced", "busy"};
  requests_.Increment(kNames[how]);
  switch (how) {
    case kHit:
      return Reply(*hit, request, responder);
    case kFetch:
      boost::asio::post(pool_, [this, stream, path] { Fetch(stream, path); });
      return;
    case kCoalesced:
      return;
    case kBusy:
      return responder.Send(http::ErrorResponse(http::Status::service_unavailable, "edge_busy",
                                                "too many archive fetches in flight on this edge"));
  }
}

void ArchiveProxy::Fetch(const std::string& stream, const std::string& path) {
  std::shared_ptr<const Answer> answer = FetchUpstream(stream, path);
  std::vector<Waiter> waiters;
  {
    absl::MutexLock lock(&mu_);
    auto it = in_flight_.find(path);
    if (it != in_flight_.end()) {
      waiters = std::move(it->second);
      in_flight_.erase(it);
    }
    if (answer->ttl_s > 0) Insert(path, answer);
  }
  for (auto& w : waiters) Reply(*answer, w.request, w.responder);
}

uint64_t ArchiveProxy::Cost(const std::string& path, const Answer& answer) {
  // what an entry really holds — its body, its path twice (the map's key and the LRU
  // list's), the answer's fields and the nodes around them — so that many small answers (404s
  // for made-up paths) are bounded like a few large ones.
  return answer.body->size() + answer.content_type.size() + answer.cache_control.size() +
         2 * path.size() + kEntryOverheadBytes;
}

void ArchiveProxy::Erase(std::map<std::string, Entry>::iterator it) {
  cached_bytes_ -= it->second.cost;
  lru_.erase(it->second.lru);
  cache_.erase(it);
}

void ArchiveProxy::Insert(const std::string& path, std::shared_ptr<const Answer> answer) {
  const uint64_t cost = Cost(path, *answer);
  // One object never takes more than an eighth of the cache.
  if (cost > options_.max_cache_bytes / 8) return;
  if (auto old = cache_.find(path); old != cache_.end()) Erase(old);
  while (!lru_.empty() && cached_bytes_ + cost > options_.max_cache_bytes) {
    Erase(cache_.find(lru_.back()));
  }
  lru_.push_front(path);
  cache_[path] =
      Entry{answer, clock_.Monotonic() + std::chrono::seconds(answer->ttl_s), lru_.begin(), cost};
  cached_bytes_ += cost;
}

std::shared_ptr<const ArchiveProxy::Answer> ArchiveProxy::FetchUpstream(const std::string& stream,
                                                                        const std::string& path) {
  auto failed = [](http::Status status, std::string message) {
    auto a = std::make_shared<Answer>();
    a->status = status;
    a->content_type = "application/json";
    auto res = http::ErrorResponse(status, "archive_upstream", message);
    a->body = std::make_shared<const std::string>(res.body());
    return a;
  };
  auto upstreams = upstreams_(stream);
  if (!upstreams.ok() || upstreams->empty()) {
    return failed(http::Status::service_unavailable,
                  "no node that holds this stream is known to the edge");
  }
  std::shared_ptr<Answer> not_found;
  for (size_t i = 0; i < upstreams->size() && i < kMaxUpstreamsTried; ++i) {
    auto base = SplitBaseUrl((*upstreams)[i].base_url);
    std::string target = path;
    for (int hop = 0; base && hop <= kMaxRedirects; ++hop) {
      http::ClientRequest request;
      request.host = base->first;
      request.port = base->second;
      request.target = target;
      request.timeout = options_.fetch_timeout;
      request.body_limit_bytes = options_.max_body_bytes;
      if (options_.cluster_token) {
        request.headers.emplace_back("Authorization", "Bearer " + options_.cluster_token());
      }
      auto res = http::Fetch(request);
      if (!res.ok()) {
        log::Warn("edge_archive_fetch_failed", {{"stream", stream},
                                                {"upstream", (*upstreams)[i].node_id},
                                                {"error", res.status().ToString()}});
        break;
      }
      auto a = std::make_shared<Answer>();
      a->status = res->result();
      a->content_type = std::string((*res)[http::beast_http::field::content_type]);
      a->cache_control = std::string((*res)[http::beast_http::field::cache_control]);
      a->body = std::make_shared<const std::string>(std::move(res->body()));
      if (upstream_bytes_) upstream_bytes_->Increment(static_cast<double>(a->body->size()));
      if (a->status == http::Status::found) {
        // D-5: the upstream names the group member holding the period; follow it here.
        std::string location((*res)[http::beast_http::field::location]);
        size_t slash = location.starts_with("http://") ? location.find('/', 7) : std::string::npos;
        if (slash != std::string::npos) {
          base = SplitBaseUrl(std::string_view(location).substr(0, slash));
          target = location.substr(slash);
          continue;
        }
        a->location = std::move(location);
        return a;
      }
      a->ttl_s = a->status == http::Status::ok || a->status == http::Status::not_found
                     ? MaxAge(a->cache_control)
                     : 0;
      if (a->status == http::Status::not_found) {
        not_found = std::move(a);  // another upstream may hold it
        break;
      }
      return a;
    }
  }
  if (not_found) return not_found;
  return failed(http::Status::bad_gateway, "no upstream node answered the archive request");
}

void ArchiveProxy::Reply(const Answer& a, const http::Request& request,
                         http::Responder& responder) {
  if (a.media()) {
    http::Response header{http::Status::ok, 11};
    if (!a.cache_control.empty())
      header.set(http::beast_http::field::cache_control, a.cache_control);
    http::AddCors(header, "*");
    http::SharedBuffers body;
    body.Append(a.body);
    return http::SendMedia(request, responder, std::move(body), a.content_type, std::move(header));
  }
  http::Response res{a.status, 11};
  if (!a.content_type.empty()) res.set(http::beast_http::field::content_type, a.content_type);
  if (!a.cache_control.empty()) res.set(http::beast_http::field::cache_control, a.cache_control);
  if (!a.location.empty()) res.set(http::beast_http::field::location, a.location);
  http::AddCors(res, "*");
  res.body() = *a.body;
  res.prepare_payload();
  responder.Send(std::move(res));
}

}  // namespace meshwork::streamer::relay
