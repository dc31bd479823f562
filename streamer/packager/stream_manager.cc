#include "streamer/packager/stream_manager.h"

#include "common/log/log.h"
#include "common/status/absl_view.h"

namespace meshwork::streamer {

StreamManager::~StreamManager() {
  decltype(pipelines_) pipelines;
  {
    absl::MutexLock lock(&mu_);
    pipelines.swap(pipelines_);
    PublishIndexLocked();
  }
  pipelines.clear();  // sources stop outside the lock
}

void StreamManager::Apply(const NodeConfig& config) {
  std::vector<std::shared_ptr<StreamPipeline>> started, stopped;
  {
    absl::MutexLock lock(&mu_);
    auto filled_by_others = [&config](const std::string& name) {
      return config.relayed.contains(name) || config.publish_targets.contains(name);
    };
    for (auto it = pipelines_.begin(); it != pipelines_.end();) {
      auto placed = config.streams.find(it->first);
      // Packaged here before and filled by other nodes now, or the other way round: a new
      // pipeline (only one that packages here runs sources and takes publishers).
      const bool role_changed =
          placed != config.streams.end() &&
          filled_by_others_.contains(it->first) != filled_by_others(it->first);
      if (placed == config.streams.end() || role_changed ||
          !placed->second->SamePackaging(it->second->config())) {
        log::Info("stream_stopped", {{"stream", it->first},
                                     {"reason", placed == config.streams.end() ? "removed"
                                                : role_changed                 ? "role changed"
                                                                               : "changed"}});
        stopped.push_back(std::move(it->second));
        it = pipelines_.erase(it);
      } else {
        ++it;
      }
    }
    filled_by_others_.clear();
    for (const auto& [name, stream] : config.streams) {
      if (filled_by_others(name)) filled_by_others_.insert(name);
      auto& pipeline = pipelines_[name];
      if (!pipeline) {
        pipeline = std::make_shared<StreamPipeline>(stream, store_, clock_);
        // A relayed stream (S-19) or one other nodes publish here (S-23) keeps its settings
        // here but packages nothing: the relay or the publishers fill the store. One packaged
        // here takes publishers from the moment it can be found (its sources start below).
        if (!filled_by_others(name)) {
          pipeline->TakePublishers();
          started.push_back(pipeline);
        }
      }
      // S-5: central's anchor for the stream, before the first frame of a new pipeline.
      pipeline->SetTimelineAnchor(stream->timeline_anchor);
    }
    PublishIndexLocked();
  }
  // Outside the lock: their sources stop, and their publishers are cut off (they reconnect
  // to the new pipeline) even while a connection still holds the old one.
  for (auto& p : stopped) p->Retire();
  stopped.clear();
  for (auto& p : started) p->Start();
}

void StreamManager::PublishIndexLocked() {
  auto index = std::make_shared<Index>();
  for (const auto& [name, pipeline] : pipelines_) index->emplace(name, pipeline);
  index_.Set(std::move(index));
}

std::shared_ptr<StreamPipeline> StreamManager::Find(std::string_view stream) const {
  thread_local Snapshot<Index>::ReadCache cache;
  const Index& index = *index_.Read(cache);
  auto it = index.find(AbslView(stream));
  if (it == index.end()) return nullptr;
  if (auto pipeline = it->second.lock()) return pipeline;
  // A pipeline replaced by an Apply that ran after this thread read the index (and already
  // dropped the old one): the map under the lock has its successor, if the stream stays.
  absl::ReaderMutexLock lock(&mu_);
  auto current = pipelines_.find(stream);
  return current == pipelines_.end() ? nullptr : current->second;
}

void StreamManager::FillReport(v1::LoadReport& report) const {
  absl::ReaderMutexLock lock(&mu_);
  for (const auto& [name, pipeline] : pipelines_) {
    auto& entry = *report.add_streams();
    pipeline->FillReport(entry);
    if (!filled_by_others_.contains(name)) continue;
    // S-19/S-23: working while objects keep arriving (the one S-7 rule, LiveEdgeWorking).
    const int64_t last = store_->LastPublishMs(name);
    const int64_t now_ms = UnixMillis(clock_.Now());
    const int64_t age_ms = now_ms - last;
    entry.set_working(LiveEdgeWorking(last, now_ms, pipeline->config().segment_ms));
    entry.set_live_window_age_s(last > 0 ? age_ms / 1000.0 : -1);
  }
}

}  // namespace meshwork::streamer
