#include "streamer/archive/recorder.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <system_error>

#include "common/log/log.h"

namespace meshwork::streamer::archive {

namespace fs = std::filesystem;

Recorder::Recorder(Options options, ArchiveIndex* index, const Clock& clock,
                   prometheus::Registry* metrics)
    : options_(options), index_(index), clock_(clock) {
  if (metrics) {
    written_metric_ = &prometheus::BuildCounter()
                           .Name("meshwork_dvr_segments_written_total")
                           .Help("Segments recorded to the archive (D-1)")
                           .Register(*metrics)
                           .Add({});
    dropped_metric_ = &prometheus::BuildCounter()
                           .Name("meshwork_dvr_dropped_total")
                           .Help("Objects not recorded because the recorder's queue was full")
                           .Register(*metrics)
                           .Add({});
    deleted_metric_ = &prometheus::BuildCounter()
                           .Name("meshwork_dvr_deleted_total")
                           .Help("Archived segments deleted by retention (depth or disk budget)")
                           .Register(*metrics)
                           .Add({});
    failures_family_ = &prometheus::BuildCounter()
                            .Name("meshwork_dvr_write_failures_total")
                            .Help("Archive writes that failed, by reason")
                            .Register(*metrics);
    disk_full_metric_ = &prometheus::BuildGauge()
                             .Name("meshwork_dvr_disk_full")
                             .Help("1 while the last archive write failed for lack of space")
                             .Register(*metrics)
                             .Add({});
  }
  writer_ = std::thread([this] { Run(); });
}

Recorder::~Recorder() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
    cv_.SignalAll();
  }
  writer_.join();
}

void Recorder::Apply(const StreamConfigs& streams, const std::set<std::string>& relayed) {
  std::vector<std::string> forgotten;
  {
    absl::MutexLock lock(&mu_);
    std::map<std::string, DvrConfig> next;
    for (const auto& [name, stream] : streams) {
      std::optional<DvrConfig> config = stream->dvr;
      if (!config || !SafeStreamName(name)) continue;
      if (relayed.contains(name) && !config->edges) continue;
      if (!options_.root_override.empty()) config->root = options_.root_override;
      if (!configs_.contains(name)) to_scan_.emplace_back(name, config->root);
      next.emplace(name, *config);
    }
    for (const auto& [name, config] : configs_) {
      if (!next.contains(name)) forgotten.push_back(name);
    }
    configs_ = std::move(next);
    cv_.SignalAll();
  }
  for (const auto& name : forgotten) index_->Forget(name);
}

std::optional<DvrConfig> Recorder::Config(const std::string& stream) const {
  absl::MutexLock lock(&mu_);
  auto it = configs_.find(stream);
  if (it == configs_.end()) return std::nullopt;
  return it->second;
}

void Recorder::OnPublish(const OriginStore& store, const std::string& stream,
                         const std::string& rendition, ObjectKey key,
                         const std::shared_ptr<const Candidate>& candidate) {
  if (!candidate || key.kind == ObjectKey::kPart || !SafeName(rendition)) return;
  ArchiveObject object;
  object.track =
      TrackKey{stream, key.kind == ObjectKey::kTs ? Proto::kTs : Proto::kFmp4, rendition};
  object.chunks = candidate->chunks;
  object.size = candidate->size;
  if (key.kind == ObjectKey::kInit) {
    object.init = true;
  } else {
    const auto& timing = candidate->timing;
    if (timing && timing->program_date_time_ms > 0 && timing->duration > 0) {
      object.start_ms = timing->program_date_time_ms;
      object.duration_ms = std::max<int64_t>(1, timing->duration / 90);
    } else {
      auto view = store.View(stream);
      if (!view || !view->policy->tmpl.known()) return;  // no wall-clock time to file it under
      const auto& tmpl = view->policy->tmpl;
      object.start_ms = tmpl.Due(key.msn) - tmpl.segment_ms;
      object.duration_ms = tmpl.segment_ms;
    }
  }
  (void)Enqueue(std::move(object));
}

bool Recorder::Enqueue(ArchiveObject object) {
  absl::MutexLock lock(&mu_);
  auto config = configs_.find(object.track.stream);
  if (config == configs_.end() || !Records(config->second, object.track.proto)) return false;
  // A segment dated well ahead of this node's clock (a wrong upstream clock or anchor) is
  // not filed: it would sort after everything to come and stand for "now" in the index.
  if (!object.init && object.start_ms > UnixMillis(clock_.Now()) + kMaxAheadMs) {
    ++dropped_;
    if (dropped_metric_) dropped_metric_->Increment();
    uint64_t held_back = 0;
    if (future_log_.Allow(UnixMillis(clock_.Now()), &held_back)) {
      log::Warn("dvr_segment_in_future", {{"stream", object.track.stream},
                                          {"start_ms", object.start_ms},
                                          {"held_back", held_back}});
    }
    return false;
  }
  if (!queue_.Fits(object.size)) {
    ++dropped_;
    if (dropped_metric_) dropped_metric_->Increment();
    auto now = clock_.Monotonic();
    auto& last = drop_logged_[object.track.stream];
    if (last == std::chrono::steady_clock::time_point{} || now - last > std::chrono::minutes(1)) {
      last = now;
      log::Warn("dvr_queue_full", {{"stream", object.track.stream},
                                   {"queued", std::to_string(queue_.size())},
                                   {"dropped_total", std::to_string(dropped_)}});
    }
    return false;
  }
  const uint64_t size = object.size;
  queue_.Push(Item{std::move(object), config->second}, size);
  cv_.Signal();
  return true;
}

bool Recorder::Drain(std::chrono::milliseconds timeout) {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return queue_.empty() && to_scan_.empty() && !busy_;
  };
  absl::Time deadline = absl::Now() + absl::FromChrono(timeout);
  while (!idle()) {
    if (cv_.WaitWithDeadline(&mu_, deadline)) return idle();
  }
  return true;
}

nlohmann::json Recorder::Status() const {
  absl::MutexLock lock(&mu_);
  return {{"queued", queue_.size()},     {"queued_bytes", queue_.bytes()},
          {"written", written_},         {"dropped", dropped_},
          {"write_failures", failures_}, {"disk_full", disk_full_.load()}};
}

void Recorder::Run() {
  // Per track: the init waiting for the track's next segment (an init takes effect from the
  // segment after it), and the bytes of the last init written (an identical init is not
  // written again).
  std::map<TrackKey, ArchiveObject> pending_init;
  std::map<TrackKey, std::string> last_init;
  for (;;) {
    std::optional<Item> item;
    std::vector<std::pair<std::string, fs::path>> scans;
    {
      absl::MutexLock lock(&mu_);
      while (!stop_ && queue_.empty() && to_scan_.empty()) cv_.Wait(&mu_);
      if (stop_) return;
      if (!to_scan_.empty()) {
        scans.swap(to_scan_);
      } else {
        item = queue_.Pop();
      }
      busy_ = true;
    }
    for (const auto& [stream, root] : scans) {
      auto started = clock_.Monotonic();
      size_t n = Scan(root, stream, *index_);
      auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(clock_.Monotonic() - started);
      log::Info("dvr_index_rebuilt", {{"stream", stream},
                                      {"segments", std::to_string(n)},
                                      {"ms", std::to_string(ms.count())}});
    }
    if (item) {
      const auto& object = item->object;
      if (object.init) {
        pending_init[object.track] = object;
      } else if (!index_->Contains(object.track, object.start_ms)) {
        if (auto init = pending_init.find(object.track); init != pending_init.end()) {
          std::string bytes;
          for (const auto& c : init->second.chunks) bytes += *c;
          bool written = true;
          if (last_init[object.track] != bytes) {
            Item init_item{init->second, item->config};
            init_item.object.start_ms = object.start_ms;
            written = Write(init_item);
            if (written) last_init[object.track] = std::move(bytes);
          }
          // An init that failed to be written waits for the next segment and is tried again
          // (its segments would otherwise have no init to play from).
          if (written) pending_init.erase(init);
        }
        Write(*item);
        Retain(object.track, item->config);
      }
    }
    absl::MutexLock lock(&mu_);
    busy_ = false;
    cv_.SignalAll();
  }
}

bool Recorder::Write(const Item& item) {
  const auto& object = item.object;
  fs::path track_dir =
      TrackDir(item.config.root, object.track.stream, object.track.proto, object.track.rendition);
  fs::path path =
      object.init ? InitPath(track_dir, object.start_ms)
                  : SegmentPath(track_dir, object.track.proto, object.start_ms, object.duration_ms);
  fs::path tmp = path.parent_path() / ("." + path.filename().string() + ".tmp");
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) {
    Failed(ec == std::errc::no_space_on_device ? "disk_full" : "mkdir", object.track.stream,
           path.parent_path().string() + ": " + ec.message());
    return false;
  }
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    int err = errno;
    Failed(err == ENOSPC ? "disk_full" : "open", object.track.stream,
           tmp.string() + ": " + std::strerror(err));
    return false;
  }
  int err = 0;
  for (const auto& chunk : object.chunks) {
    const char* p = chunk->data();
    size_t left = chunk->size();
    while (left > 0 && err == 0) {
      ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        err = n < 0 ? errno : EIO;
        break;
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
    if (err) break;
  }
  if (err == 0 && item.config.fsync && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());  // never a partial file under any name
    Failed(err == ENOSPC ? "disk_full" : "write", object.track.stream,
           path.string() + ": " + std::strerror(err));
    return false;
  }
  if (item.config.fsync) {
    // The rename itself survives a power cut only once its directory is synced.
    int dir = ::open(path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
      ::fsync(dir);
      ::close(dir);
    }
  }
  if (object.init) {
    index_->AddInit(object.track, object.start_ms);
  } else {
    index_->Add(object.track, ArchivedSegment{object.start_ms, object.duration_ms, object.size});
    absl::MutexLock lock(&mu_);
    ++written_;
    if (written_metric_) written_metric_->Increment();
  }
  if (disk_full_.exchange(false)) {
    if (disk_full_metric_) disk_full_metric_->Set(0);
    log::Info("dvr_disk_ok", {{"stream", object.track.stream}});
  }
  return true;
}

void Recorder::Retain(const TrackKey& track, const DvrConfig& config) {
  std::error_code ec;
  uint64_t deleted = 0;
  // D-2: the depth counts back from the stream's newest recorded end, never from later than
  // now, over every track of the stream (one no longer recorded ages out with the rest).
  int64_t newest = std::numeric_limits<int64_t>::min();
  for (Proto proto : {Proto::kTs, Proto::kFmp4}) {
    if (auto extent = index_->Extent(track.stream, proto))
      newest = std::max(newest, extent->second);
  }
  const int64_t reference = std::min(newest, UnixMillis(clock_.Now()));
  for (Proto proto : {Proto::kTs, Proto::kFmp4}) {
    if (newest == std::numeric_limits<int64_t>::min()) break;  // nothing recorded
    for (const auto& rendition : index_->Renditions(track.stream, proto)) {
      const TrackKey each{track.stream, proto, rendition};
      const fs::path dir = TrackDir(config.root, each.stream, each.proto, each.rendition);
      auto trimmed = index_->TrimToDepth(each, config.depth_s * 1000, reference);
      for (const auto& s : trimmed.segments) {
        fs::remove(SegmentPath(dir, each.proto, s.start_ms, s.duration_ms), ec);
        ++deleted;
      }
      for (int64_t start : trimmed.inits) fs::remove(InitPath(dir, start), ec);
    }
  }
  while (config.max_bytes > 0 && index_->StreamBytes(track.stream) > config.max_bytes) {
    auto oldest = index_->PopOldest(track.stream);
    if (!oldest) break;
    const auto& [victim, s] = *oldest;
    fs::remove(SegmentPath(TrackDir(config.root, victim.stream, victim.proto, victim.rendition),
                           victim.proto, s.start_ms, s.duration_ms),
               ec);
    ++deleted;
  }
  if (deleted && deleted_metric_) deleted_metric_->Increment(static_cast<double>(deleted));
}

void Recorder::Failed(const std::string& reason, const std::string& stream,
                      const std::string& detail) {
  if (failures_family_) failures_family_->Add({{"reason", reason}}).Increment();
  {
    absl::MutexLock lock(&mu_);
    ++failures_;
  }
  if (reason == "disk_full" && !disk_full_.exchange(true)) {
    if (disk_full_metric_) disk_full_metric_->Set(1);
    log::Error("dvr_disk_full", {{"stream", stream}, {"detail", detail}});
    return;
  }
  if (reason != "disk_full")
    log::Error("dvr_write_failed", {{"stream", stream}, {"detail", detail}});
}

}  // namespace meshwork::streamer::archive
