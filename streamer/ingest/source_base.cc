#include "streamer/ingest/source_base.h"

#include <algorithm>
#include <utility>

#include "absl/random/distributions.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/log/log.h"
#include "streamer/ingest/url.h"

namespace meshwork::ingest {
namespace {

// The source whose worker runs on this thread, if any.
thread_local const SourceBase* current_worker_source = nullptr;

}  // namespace

std::chrono::milliseconds Backoff::Next() {
  const int64_t ceiling = ceiling_.count();
  int64_t delay = absl::Uniform<int64_t>(absl::IntervalClosedClosed, gen_, ceiling / 2, ceiling);
  ceiling_ = std::min(ceiling_ * 2, kMax);
  return std::clamp(std::chrono::milliseconds(delay), kMin, kMax);
}

SourceBase::SourceBase(std::string url, std::string_view kind, BytesCallback on_bytes)
    : url_(std::move(url)),
      log_url_(RedactUrl(url_)),
      kind_(kind),
      on_bytes_(std::move(on_bytes)) {}

SourceBase::~SourceBase() {
  // Subclasses have stopped the worker already; this only guards against a source that was
  // destroyed from its own callback, where joining would deadlock.
  if (worker_.joinable()) worker_.detach();
}

void SourceBase::Launch() {
  log::Info("ingest_started", {{"url", log_url_}, {"kind", kind_}});
  worker_ = std::thread([this] {
    current_worker_source = this;
    Run();
  });
}

void SourceBase::Stop() {
  const bool on_worker = current_worker_source == this;
  bool first = false;
  {
    absl::MutexLock sleep_lock(&sleep_mu_);
    first = !stopping_.exchange(true, std::memory_order_acq_rel);
    sleep_cv_.SignalAll();
  }
  if (first) Interrupt();
  if (on_worker) return;
  absl::MutexLock lock(&stop_mu_);
  if (stopped_) return;
  stopped_ = true;
  if (!worker_.joinable()) return;
  worker_.join();
  log::Info("ingest_stopped", {{"url", log_url_}, {"kind", kind_}, {"bytes", bytes_received()}});
}

void SourceBase::Deliver(std::span<const uint8_t> data) {
  if (data.empty() || stopping()) return;
  bytes_.fetch_add(data.size(), std::memory_order_relaxed);
  if (on_bytes_) on_bytes_(data);
}

bool SourceBase::SleepUnlessStopped(std::chrono::milliseconds delay) {
  absl::MutexLock lock(&sleep_mu_);
  const absl::Time deadline = absl::Now() + absl::FromChrono(delay);
  while (!stopping()) {
    if (sleep_cv_.WaitWithDeadline(&sleep_mu_, deadline)) break;
  }
  return !stopping();
}

}  // namespace meshwork::ingest
