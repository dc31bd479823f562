#include "common/http/request_tally.h"

#include <algorithm>

#include "absl/base/internal/raw_logging.h"

namespace meshwork::http::server_internal {

RequestTally::RequestTally(prometheus::Family<prometheus::Counter>* requests,
                           prometheus::Histogram* latency, prometheus::Counter* bytes_in,
                           prometheus::Counter* bytes_out, std::string listener, size_t workers)
    : requests_(requests),
      latency_(latency),
      bytes_in_target_(bytes_in),
      bytes_out_target_(bytes_out),
      listener_(std::move(listener)),
      bounds_(metrics::LatencyBuckets()) {
  ABSL_RAW_CHECK(bounds_.size() <= kMaxBuckets, "more latency buckets than the tally holds");
  for (size_t i = 0; i < workers; ++i) workers_.push_back(std::make_unique<PerWorker>());
  absl::MutexLock lock(&fold_mu_);
  folded_in_.assign(workers, 0);
  folded_out_.assign(workers, 0);
  folded_buckets_.assign(workers, {});
  folded_ns_.assign(workers, 0);
}

namespace {

// The method label: one of a fixed set whatever the client sent.
std::string_view MethodLabel(std::string_view method) {
  static constexpr std::string_view kKnown[] = {"GET",     "HEAD",    "POST",  "PUT",  "DELETE",
                                                "OPTIONS", "CONNECT", "TRACE", "PATCH"};
  for (std::string_view known : kKnown) {
    if (method == known) return known;
  }
  // The server's own marker for a request it could not parse.
  if (method == "INVALID") return "INVALID";
  return "OTHER";
}

}  // namespace

void RequestTally::CountRequest(size_t w, std::string_view client_method, unsigned status,
                                double seconds) {
  const std::string_view method = MethodLabel(client_method);
  PerWorker& tally = *workers_[w];
  if (requests_ && tally.last != nullptr && tally.last_status == status &&
      tally.last_method == method) {
    Bump(tally.last->count, 1);
  } else if (requests_) {
    // Methods fit the small-string buffer: the key costs no allocation once cached.
    auto key = std::make_pair(std::string(method), status);
    auto it = tally.by_key.find(key);
    if (it == tally.by_key.end()) {
      auto count = std::make_unique<RequestCount>();
      // Family::Add returns the same counter to every worker asking for the same labels.
      count->target = &requests_->Add(
          {{"listener", listener_}, {"method", key.first}, {"status", std::to_string(status)}});
      RequestCount* raw = count.get();
      {
        absl::MutexLock lock(&tally.list_mu);
        tally.counts.push_back(std::move(count));
      }
      it = tally.by_key.emplace(std::move(key), raw).first;
    }
    Bump(it->second->count, 1);
    tally.last_method.assign(method.data(), method.size());
    tally.last_status = status;
    tally.last = it->second;
  }
  if (latency_) {
    // Prometheus buckets are upper bounds (le): the first bound not below the value.
    size_t bucket = std::lower_bound(bounds_.begin(), bounds_.end(), seconds) - bounds_.begin();
    Bump(tally.buckets[bucket], 1);
    Bump(tally.latency_ns, static_cast<uint64_t>(std::max(0.0, seconds) * 1e9));
  }
}

uint64_t RequestTally::bytes_in() const {
  uint64_t sum = 0;
  for (const auto& w : workers_) sum += w->bytes_in.load(std::memory_order_relaxed);
  return sum;
}

uint64_t RequestTally::bytes_out() const {
  uint64_t sum = 0;
  for (const auto& w : workers_) sum += w->bytes_out.load(std::memory_order_relaxed);
  return sum;
}

void RequestTally::BeforeCollect() {
  absl::MutexLock fold(&fold_mu_);
  for (size_t i = 0; i < workers_.size(); ++i) {
    PerWorker& tally = *workers_[i];
    uint64_t in = tally.bytes_in.load(std::memory_order_relaxed);
    uint64_t out = tally.bytes_out.load(std::memory_order_relaxed);
    if (bytes_in_target_ && in > folded_in_[i]) {
      bytes_in_target_->Increment(static_cast<double>(in - folded_in_[i]));
    }
    if (bytes_out_target_ && out > folded_out_[i]) {
      bytes_out_target_->Increment(static_cast<double>(out - folded_out_[i]));
    }
    folded_in_[i] = in;
    folded_out_[i] = out;
    {
      absl::MutexLock list(&tally.list_mu);
      for (auto& count : tally.counts) {
        uint64_t now = count->count.load(std::memory_order_relaxed);
        if (now > count->folded) count->target->Increment(static_cast<double>(now - count->folded));
        count->folded = now;
      }
    }
    if (latency_) {
      std::vector<double> increments(bounds_.size() + 1, 0.0);
      bool any = false;
      for (size_t b = 0; b <= bounds_.size(); ++b) {
        uint64_t now = tally.buckets[b].load(std::memory_order_relaxed);
        increments[b] = static_cast<double>(now - folded_buckets_[i][b]);
        any = any || now != folded_buckets_[i][b];
        folded_buckets_[i][b] = now;
      }
      uint64_t ns = tally.latency_ns.load(std::memory_order_relaxed);
      double seconds = static_cast<double>(ns - folded_ns_[i]) / 1e9;
      folded_ns_[i] = ns;
      if (any) latency_->ObserveMultiple(increments, seconds);
    }
  }
}

}  // namespace meshwork::http::server_internal
