// The streams placed on this node (C-2): starts a StreamPipeline for each stream central
// places here, restarts it when its settings change, stops it (and drops its segments) when
// it is removed (the store drops its objects when central's config no longer places it, see
// OriginStore::Apply), and hands each pipeline the stream's timeline anchor central keeps in
// the stream object (S-5; an anchor change alone never restarts a pipeline). Thread-safe;
// Apply() runs on the agent's thread, Find() on HTTP workers (through the calling thread's
// cache of the index: no lock while the index did not change).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "common/sync/snapshot.h"
#include "streamer/agent/node_config.h"
#include "streamer/packager/stream_pipeline.h"

namespace meshwork::streamer {

class StreamManager {
 public:
  StreamManager(OriginStore* store, const Clock& clock) : store_(store), clock_(clock) {}
  ~StreamManager();

  void Apply(const NodeConfig& config);
  // The pipeline of a stream placed here, or null.
  std::shared_ptr<StreamPipeline> Find(std::string_view stream) const;
  // Per-stream report entries (C-2).
  void FillReport(meshwork::v1::LoadReport& report) const;

 private:
  OriginStore* store_;
  const Clock& clock_;
  mutable absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<StreamPipeline>, std::less<>> pipelines_
      ABSL_GUARDED_BY(mu_);
  // Streams filled by others (relayed, or published here by ingest nodes): their report says
  // whether objects keep arriving in the store, not whether this node packages them.
  std::set<std::string> filled_by_others_ ABSL_GUARDED_BY(mu_);
  // What Find() reads on every viewer request: the pipelines by name, replaced whole under
  // mu_ whenever pipelines_ changes and read through each thread's cache without the lock
  // (P-5). Weak references: a cache never keeps a stopped pipeline alive.
  using Index = absl::flat_hash_map<std::string, std::weak_ptr<StreamPipeline>>;
  void PublishIndexLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Snapshot<Index> index_;
};

}  // namespace meshwork::streamer
