#include "streamer/relay/origin_feed.h"

#include <charconv>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/http/client.h"
#include "common/log/log.h"
#include "common/sync/bounded_queue.h"
#include "streamer/relay/media_timing_field.h"

namespace meshwork::streamer::relay {

namespace {

// http://host:port → host, port.
std::optional<std::pair<std::string, uint16_t>> HostPort(std::string_view url) {
  if (!url.starts_with("http://")) return std::nullopt;
  url.remove_prefix(7);
  size_t colon = url.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  uint32_t port = 0;
  std::string_view digits = url.substr(colon + 1);
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (ec != std::errc() || end != digits.data() + digits.size() || port == 0 || port > 65535) {
    return std::nullopt;
  }
  return std::make_pair(std::string(url.substr(0, colon)), static_cast<uint16_t>(port));
}

}  // namespace

// One origin and pipeline: a bounded queue and the thread that empties it in order.
class OriginFeed::Target {
 public:
  Target(std::string to, std::string pipeline, NodesFn nodes, const Clock& clock,
         prometheus::Registry* metrics)
      : to_(std::move(to)),
        pipeline_(std::move(pipeline)),
        nodes_(std::move(nodes)),
        clock_(clock) {
    if (metrics) {
      prometheus::Labels labels{{"to", to_}, {"pipeline", pipeline_}};
      sent_metric_ = &prometheus::BuildCounter()
                          .Name("meshwork_publish_target_objects_total")
                          .Help("Objects an ingest node published to an origin (S-23)")
                          .Register(*metrics)
                          .Add(labels);
      failed_metric_ = &prometheus::BuildCounter()
                            .Name("meshwork_publish_target_failures_total")
                            .Help("Failed attempts to publish an object to an origin")
                            .Register(*metrics)
                            .Add(labels);
      dropped_metric_ = &prometheus::BuildCounter()
                             .Name("meshwork_publish_target_dropped_total")
                             .Help("Objects given up (retry deadline or full queue)")
                             .Register(*metrics)
                             .Add(labels);
      queued_metric_ = &prometheus::BuildGauge()
                            .Name("meshwork_publish_target_queued_bytes")
                            .Help("Bytes waiting to be published to an origin")
                            .Register(*metrics)
                            .Add(labels);
    }
    thread_ = std::thread([this] { Run(); });
  }
  ~Target() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    if (thread_.joinable()) thread_.join();
  }

  struct Item {
    std::string path;  // /{stream}/{rendition}/{object}
    std::string token;
    uint32_t defects = 0;
    std::string timing;  // X-Media-Timing; empty when the object has none
    std::vector<std::shared_ptr<const std::string>> chunks;
    uint64_t size = 0;
    std::chrono::steady_clock::time_point deadline;
  };

  void Push(Item item) {
    absl::MutexLock lock(&mu_);
    while (!queue_.empty() && !queue_.Fits(item.size)) DropFrontLocked();
    const uint64_t size = item.size;
    queue_.Push(std::move(item), size);
    if (queued_metric_) queued_metric_->Set(static_cast<double>(queue_.bytes()));
  }

  nlohmann::json Status() const {
    absl::MutexLock lock(&mu_);
    return {{"to", to_},
            {"pipeline", pipeline_},
            {"queued_objects", queue_.size()},
            {"queued_bytes", queue_.bytes()},
            {"sent", sent_},
            {"failed_attempts", failed_},
            {"dropped", dropped_}};
  }

 private:
  void DropFrontLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    queue_.Pop();
    ++dropped_;
    if (dropped_metric_) dropped_metric_->Increment();
  }

  // Waits up to `d` (or until stopped); true when stopping.
  bool Wait(std::chrono::milliseconds d) {
    absl::MutexLock lock(&mu_);
    auto stopping = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stop_; };
    mu_.AwaitWithTimeout(absl::Condition(&stopping), absl::FromChrono(d));
    return stop_;
  }

  void Run() {
    std::chrono::milliseconds backoff{100};
    for (;;) {
      Item item;
      {
        absl::MutexLock lock(&mu_);
        auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stop_ || !queue_.empty(); };
        mu_.Await(absl::Condition(&ready));
        if (stop_) return;
        item = queue_.front();  // shares the chunks; popped once done with
      }
      bool done = Send(item);
      bool expired = !done && clock_.Monotonic() >= item.deadline;
      if (done || expired) {
        absl::MutexLock lock(&mu_);
        if (stop_) return;
        // The front is still `item` unless an overflow dropped it meanwhile.
        if (!queue_.empty() && queue_.front().path == item.path) {
          if (done) {
            queue_.Pop();
            ++sent_;
          } else {
            DropFrontLocked();
            log::Warn("publish_target_dropped", {{"to", to_}, {"path", item.path}});
          }
        }
        if (queued_metric_) queued_metric_->Set(static_cast<double>(queue_.bytes()));
        backoff = std::chrono::milliseconds(100);
        continue;
      }
      if (Wait(backoff)) return;
      backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
    }
  }

  // One PUT; true on a 2xx. A failure that may be the address makes the next try look it up.
  bool Send(const Item& item) {
    if (publish_url_.empty()) {
      auto found = nodes_({to_});
      if (found.ok()) {
        if (auto it = found->find(to_); it != found->end()) publish_url_ = it->second;
      }
    }
    auto hp = HostPort(publish_url_);
    if (!hp) return Failed(item, "the origin's publish listener is unknown");
    http::ClientRequest request;
    request.method = http::Verb::put;
    request.host = hp->first;
    request.port = hp->second;
    request.target = item.path;
    request.timeout = std::chrono::milliseconds(3000);
    request.headers.emplace_back("X-Pipeline", pipeline_);
    if (item.defects) request.headers.emplace_back("X-Defects", DefectsToString(item.defects));
    if (!item.timing.empty()) request.headers.emplace_back(kMediaTimingField, item.timing);
    if (!item.token.empty()) request.headers.emplace_back("Authorization", "Bearer " + item.token);
    request.body.reserve(item.size);
    for (const auto& c : item.chunks) request.body += *c;
    auto res = client_.Fetch(request);
    if (!res.ok()) {
      publish_url_.clear();
      return Failed(item, res.status().ToString());
    }
    if (res->result_int() / 100 != 2) {
      return Failed(item, absl::StrCat("answered ", res->result_int(), ": ", res->body()));
    }
    if (sent_metric_) sent_metric_->Increment();
    return true;
  }

  bool Failed(const Item& item, std::string_view why) {
    if (failed_metric_) failed_metric_->Increment();
    {
      absl::MutexLock lock(&mu_);
      ++failed_;
    }
    // One line per object at most (its first failure), not one per retry.
    if (item.path != last_failed_path_) {
      last_failed_path_ = item.path;
      log::Warn("publish_target_failed", {{"to", to_}, {"path", item.path}, {"error", why}});
    }
    return false;
  }

  const std::string to_;
  const std::string pipeline_;
  NodesFn nodes_;
  const Clock& clock_;
  std::string publish_url_;       // the sending thread's own
  http::KeepAliveClient client_;  // the sender thread's connection to the origin
  std::string last_failed_path_;  // likewise
  prometheus::Counter* sent_metric_ = nullptr;
  prometheus::Counter* failed_metric_ = nullptr;
  prometheus::Counter* dropped_metric_ = nullptr;
  prometheus::Gauge* queued_metric_ = nullptr;

  mutable absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  BoundedQueue<Item> queue_ ABSL_GUARDED_BY(mu_){kMaxQueuedObjects, kMaxQueuedBytes};
  uint64_t sent_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t failed_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

OriginFeed::OriginFeed(std::string node_id, NodesFn nodes, const Clock& clock,
                       prometheus::Registry* metrics)
    : node_id_(std::move(node_id)), nodes_(std::move(nodes)), clock_(clock), metrics_(metrics) {}

OriginFeed::~OriginFeed() {
  std::map<std::string, std::shared_ptr<Target>> targets;
  {
    absl::MutexLock lock(&mu_);
    streams_.clear();
    targets.swap(targets_);
  }
  targets.clear();  // joins, outside the lock
}

void OriginFeed::Apply(const NodeConfig& config) {
  std::map<std::string, StreamTargets> streams;
  std::vector<std::shared_ptr<Target>> unused;
  {
    absl::MutexLock lock(&mu_);
    std::map<std::string, std::shared_ptr<Target>> targets;
    for (const auto& [name, stream] : config.streams) {
      if (config.relayed.contains(name) || config.publish_targets.contains(name)) continue;
      StreamTargets st;
      st.segment_ms = stream->segment_ms;
      for (const PublishTargetConfig& t : stream->publish) {
        if (t.to == node_id_) continue;
        if (!t.from.empty() && t.from != node_id_) continue;  // another ingest node's target
        std::string id = absl::StrCat(t.to, "/", t.pipeline);
        auto& target = targets[id];
        if (!target) {
          auto existing = targets_.find(id);
          target = existing != targets_.end()
                       ? existing->second
                       : std::make_shared<Target>(t.to, t.pipeline, nodes_, clock_, metrics_);
        }
        st.targets.push_back(target);
        st.tokens.push_back(stream->PublishTokenFor(t.pipeline));  // M-3
      }
      if (!st.targets.empty()) streams[name] = std::move(st);
    }
    for (auto& [id, target] : targets_) {
      if (!targets.contains(id)) unused.push_back(std::move(target));
    }
    targets_ = std::move(targets);
    streams_.swap(streams);
  }
  unused.clear();  // joins targets no stream names any more, outside the lock
}

void OriginFeed::OnPublish(const std::string& stream, const std::string& rendition, ObjectKey key,
                           const std::shared_ptr<const Candidate>& candidate) {
  if (candidate->pipeline != "local") return;  // only what this node packaged
  // S-25: one form between nodes — the origin makes the MPEG-TS form from the CMAF (FeedTs).
  if (key.kind == ObjectKey::kTs) return;
  absl::MutexLock lock(&mu_);
  auto it = streams_.find(stream);
  if (it == streams_.end()) return;
  const StreamTargets& st = it->second;
  Target::Item item;
  item.path = absl::StrCat("/", stream, "/", rendition, "/", ObjectFileName(key));
  item.defects = candidate->defects;
  if (candidate->timing) item.timing = MediaTimingField(*candidate->timing);
  item.chunks = candidate->chunks;
  item.size = candidate->size;
  item.deadline = clock_.Monotonic() + std::chrono::milliseconds(3 * st.segment_ms);
  for (size_t i = 0; i < st.targets.size(); ++i) {
    item.token = st.tokens[i];
    st.targets[i]->Push(item);
  }
}

nlohmann::json OriginFeed::Status() const {
  nlohmann::json out = nlohmann::json::array();
  absl::MutexLock lock(&mu_);
  for (const auto& [id, target] : targets_) out.push_back(target->Status());
  return out;
}

std::map<std::string, nlohmann::json> OriginFeed::StatusByStream() const {
  std::map<std::string, nlohmann::json> out;
  absl::MutexLock lock(&mu_);
  for (const auto& [stream, st] : streams_) {
    auto& list = out[stream] = nlohmann::json::array();
    for (const auto& target : st.targets) list.push_back(target->Status());
  }
  return out;
}

}  // namespace meshwork::streamer::relay
