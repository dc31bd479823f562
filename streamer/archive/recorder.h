// D-1/D-2: records the segments of streams configured with `dvr` to disk. Fed by the one
// store's publish hook (OnPublish, on the publisher's thread: it only queues), it writes on
// a thread of its own through a bounded queue, so a slow or full disk never slows
// publishing: past the queue's bounds an object is dropped, counted
// (meshwork_dvr_dropped_total) and logged once per stream per minute.
//
// Per stream and protocol (`ts`: the MPEG-TS segments HLS serves; `fmp4`: the CMAF segments
// LL-HLS and DASH serve, with their init segments) each segment is written under a
// temporary name and renamed when complete (layout.h). fsync policy: with `fsync` off (the
// default) data reaches the disk with the kernel's writeback — a process crash loses
// nothing written, a power cut may lose the last seconds; with `fsync` on, each file is
// fsynced before its rename and its directory after it. A segment is recorded once per
// (rendition, start): the first candidate published wins (a second pipeline's copy is the
// same media, L-11). A segment dated more than 10 minutes ahead of the clock is dropped
// (counted as dropped, logged once a minute).
//
// Retention: after each write, every track's segments that start more than `depth_s` before
// the stream's newest recorded end (never later than now) go — a rendition no longer recorded
// ages out with the rest — then the stream's oldest segments while it is over `max_bytes`
// (whole files). A
// failed write (disk full: ENOSPC) deletes the partial temporary file, raises
// meshwork_dvr_write_failures_total{reason} and the meshwork_dvr_disk_full gauge (cleared by
// the next good write), and is logged; live streaming is not affected.
//
// Start-up: the first time a stream appears in Apply, its index is rebuilt from disk (Scan)
// on the writer thread before any of its new objects is written.
// Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/log/log.h"
#include "common/sync/bounded_queue.h"
#include "common/time/clock.h"
#include "nlohmann/json.hpp"
#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"
#include "streamer/archive/archive_index.h"
#include "streamer/config/stream_config.h"
#include "streamer/store/origin_store.h"

namespace meshwork::streamer::archive {

// A stream's `dvr` settings (its StreamConfig's).
using DvrConfig = streamer::DvrConfig;
// Whether a stream with `config` records `proto`.
inline bool Records(const DvrConfig& config, Proto proto) {
  return proto == Proto::kTs ? config.ts : config.fmp4;
}

// One object to record.
struct ArchiveObject {
  TrackKey track;
  bool init = false;  // an fMP4 init segment (then start_ms is when it takes effect)
  int64_t start_ms = 0;
  int64_t duration_ms = 0;
  std::vector<std::shared_ptr<const std::string>> chunks;
  uint64_t size = 0;
};

class Recorder {
 public:
  struct Options {
    size_t max_queue_objects = 1024;
    uint64_t max_queue_bytes = 256ull << 20;
    // The node's --dvr-root: when set, every stream is recorded under it instead of the
    // stream's own root (several nodes on one host, or a node whose disk is mounted elsewhere).
    std::filesystem::path root_override;
  };
  Recorder(Options options, ArchiveIndex* index, const Clock& clock, prometheus::Registry* metrics);
  ~Recorder();  // stops the writer (what is still queued is dropped)
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // The streams of this node. Those in `relayed` (an edge's) are recorded only when their dvr
  // settings say `edges: true`; the others' archive requests are relayed upstream
  // (relay::ArchiveProxy).
  void Apply(const StreamConfigs& streams, const std::set<std::string>& relayed = {});
  std::optional<DvrConfig> Config(const std::string& stream) const;

  // The store's publish hook: queues the segment (or init) if its stream records that
  // protocol. Never blocks. Timing: the candidate's own (local packager, relay), else the
  // stream's template (packagers' objects).
  void OnPublish(const OriginStore& store, const std::string& stream, const std::string& rendition,
                 ObjectKey key, const std::shared_ptr<const Candidate>& candidate);
  // Queues `object`; false when its stream does not record it, the queue is full, or it is a
  // segment dated more than kMaxAheadMs ahead of the clock.
  bool Enqueue(ArchiveObject object);

  // Waits (≤ timeout) until the queue is empty and nothing is being written (tests).
  bool Drain(std::chrono::milliseconds timeout);
  nlohmann::json Status() const;
  // The last write failed with ENOSPC and none succeeded since (D-2's alarm).
  bool disk_full() const { return disk_full_.load(std::memory_order_relaxed); }

 private:
  struct Item {
    ArchiveObject object;
    DvrConfig config;
  };
  void Run();
  // True when the file is in place (and indexed); false after a failure (counted, logged).
  bool Write(const Item& item);
  void Retain(const TrackKey& track, const DvrConfig& config);
  void Failed(const std::string& reason, const std::string& stream, const std::string& detail);

  const Options options_;
  ArchiveIndex* index_;
  const Clock& clock_;
  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  std::map<std::string, DvrConfig> configs_ ABSL_GUARDED_BY(mu_);
  std::vector<std::pair<std::string, std::filesystem::path>> to_scan_ ABSL_GUARDED_BY(mu_);
  BoundedQueue<Item> queue_ ABSL_GUARDED_BY(mu_){options_.max_queue_objects,
                                                 options_.max_queue_bytes};
  bool busy_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t written_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t failures_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, std::chrono::steady_clock::time_point> drop_logged_ ABSL_GUARDED_BY(mu_);
  // Segments dated further ahead of the clock than this are dropped (counted as dropped).
  static constexpr int64_t kMaxAheadMs = 10 * 60 * 1000;
  log::Throttle future_log_{60'000};
  std::atomic<bool> disk_full_{false};
  prometheus::Counter* written_metric_ = nullptr;
  prometheus::Counter* dropped_metric_ = nullptr;
  prometheus::Counter* deleted_metric_ = nullptr;
  prometheus::Family<prometheus::Counter>* failures_family_ = nullptr;
  prometheus::Gauge* disk_full_metric_ = nullptr;
  std::thread writer_;  // last: started when everything above is ready
};

}  // namespace meshwork::streamer::archive
