// S-5: central keeps each stream's timeline anchor from the proposals its nodes report.
//
// A node's load report carries, per stream, the anchor its packager dates segments with
// (StreamReport.timeline_anchor). OnReport() checks each one against the configuration
// snapshot: ignored (with a rate-limited log line) when implausible (IsPlausibleAnchor), when
// the stream is unknown or not placed on the reporting node; otherwise, when the stream has no
// anchor yet or ShouldReplaceAnchor says the proposal is a newer timeline, one write is handed
// to `post` (central's blocking pool). The write is ConfigService::MutateObject on the stream
// object's "timeline_anchor" (stream_anchor.h: synced, a new revision, pushed with the stream
// section to every node of the stream); it applies the rule again under the configuration's
// write lock, so two proposals racing cannot both win. At most one write per stream is pending,
// and one a second per stream is made (R-3: a node proposing a new timeline every report
// cannot turn reports into synced writes); a proposal dated more than a day from central's
// clock is ignored as implausible (it would win every later comparison).
//
// Thread-safe. OnReport() never blocks (it runs on gRPC reactor threads). The keeper must
// outlive every task it posted (join the pool before destroying it).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "absl/synchronization/mutex.h"
#include "central/model/config_service.h"
#include "common/time/clock.h"
#include "common/time/timeline_anchor.h"
#include "meshwork/v1/types.pb.h"

namespace meshwork::central {

class AnchorKeeper {
 public:
  using PostFn = std::function<void(std::function<void()>)>;
  // `config` must outlive the keeper.
  AnchorKeeper(ConfigService* config, PostFn post, const Clock& clock)
      : config_(config), post_(std::move(post)), clock_(clock) {}

  void OnReport(const std::string& node_id, const meshwork::v1::LoadReport& report);

 private:
  void Write(const std::string& stream, const std::string& node_id, TimelineAnchor proposal);
  void LogIgnored(const std::string& node_id, const std::string& stream, const char* reason,
                  const TimelineAnchor& proposal);

  ConfigService* config_;
  PostFn post_;
  const Clock& clock_;
  absl::Mutex mu_;
  std::set<std::string> pending_ ABSL_GUARDED_BY(mu_);  // streams with a write posted
  std::map<std::string, int64_t> last_write_ms_ ABSL_GUARDED_BY(mu_);  // by stream, clock_
  std::atomic<int64_t> next_log_ms_{0};  // ignored proposals: one line per 10 s
};

}  // namespace meshwork::central
