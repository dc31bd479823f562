#include "central/cluster/report_writer.h"

#include "common/log/log.h"

namespace meshwork::central {

ReportWriter::ReportWriter(Store* store) : store_(store), thread_([this] { Run(); }) {}

ReportWriter::~ReportWriter() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void ReportWriter::Put(const std::string& node_id, std::string value) {
  absl::MutexLock lock(&mu_);
  pending_[node_id] = std::move(value);
  ++queued_;
}

void ReportWriter::Flush() {
  absl::MutexLock lock(&mu_);
  const uint64_t target = queued_;
  auto done = [this, target]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return written_ >= target; };
  mu_.Await(absl::Condition(&done));
}

void ReportWriter::Run() {
  while (true) {
    std::map<std::string, std::string> batch;
    uint64_t taken = 0;
    bool stopping = false;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]()
                       ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || !pending_.empty(); };
      mu_.Await(absl::Condition(&ready));
      batch.swap(pending_);
      taken = queued_;
      stopping = stop_;
    }
    for (const auto& [node_id, value] : batch) {
      if (absl::Status status = store_->PutReport(node_id, value); !status.ok()) {
        log::Warn("report_store_failed", {{"node", node_id}, {"error", status.ToString()}});
      }
    }
    {
      absl::MutexLock lock(&mu_);
      written_ = taken;
      if (stopping && pending_.empty()) return;
    }
  }
}

}  // namespace meshwork::central
