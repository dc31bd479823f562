// D-2/D-4: what this node has recorded, in memory: per track (stream, protocol, rendition)
// the recorded segments by wall-clock start and the init segments by the time they took
// effect. Rebuilt from disk at start-up (Scan), kept by the recorder as it writes and trims,
// read by the archive routes.
//
// Thread-safe. L-19: reads never wait on a writer's work. The index is an immutable
// snapshot (tracks → immutable track views, each track's segments in sorted runs of at most
// 2 × kRun shared between snapshots); a reader holds the lock only to copy the snapshot's
// pointer, then searches it unlocked. Writers are serialized by a lock of their own, build
// the next snapshot from the current one (copying the track map's pointers and the one run
// they change, O(tracks + kRun)), and take the readers' lock only to swap the pointer. No
// I/O under either lock.
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "streamer/archive/layout.h"

namespace meshwork::streamer::archive {

struct TrackKey {
  std::string stream;
  Proto proto = Proto::kTs;
  std::string rendition;
  auto operator<=>(const TrackKey&) const = default;
};

struct ArchivedSegment {
  int64_t start_ms = 0;  // wall clock (S-5), Unix ms
  int64_t duration_ms = 0;
  uint64_t size = 0;
  int64_t end_ms() const { return start_ms + duration_ms; }
};

class ArchiveIndex {
 public:
  void Add(const TrackKey& track, const ArchivedSegment& segment);
  void AddInit(const TrackKey& track, int64_t start_ms);
  // Adds many segments of one track at once (a scan at start-up): one new snapshot, the
  // track's runs rebuilt once, instead of a run copied per segment. A start already held, or
  // given twice, keeps the last one given.
  void AddMany(const TrackKey& track, std::vector<ArchivedSegment> segments);
  bool Contains(const TrackKey& track, int64_t start_ms) const;
  std::optional<ArchivedSegment> Find(const TrackKey& track, int64_t start_ms) const;
  // Segments that overlap [from_ms, to_ms), in order; at most `limit`.
  std::vector<ArchivedSegment> Range(const TrackKey& track, int64_t from_ms, int64_t to_ms,
                                     size_t limit) const;
  // The start of the init in force at `start_ms` (the newest at or before it, else the
  // oldest); nullopt when the track has none.
  std::optional<int64_t> InitFor(const TrackKey& track, int64_t start_ms) const;
  // The renditions of `stream` recorded in `proto`, by name.
  std::vector<std::string> Renditions(const std::string& stream, Proto proto) const;
  // D-4: oldest start and newest end over the stream's renditions of `proto`.
  std::optional<std::pair<int64_t, int64_t>> Extent(const std::string& stream, Proto proto) const;

  // Retention: removes and returns the oldest segments of `track` that start more than
  // `depth_ms` before `reference_ms` (by default the track's own newest end), and the inits no
  // segment needs any more. The recorder passes the stream's newest end capped by its clock:
  // a segment dated in the future (a wrong upstream clock) cannot push the archive out, and a
  // rendition no longer recorded ages out with the others.
  struct Trimmed {
    std::vector<ArchivedSegment> segments;
    std::vector<int64_t> inits;
  };
  Trimmed TrimToDepth(const TrackKey& track, int64_t depth_ms,
                      std::optional<int64_t> reference_ms = std::nullopt);
  // Removes and returns the single oldest segment over all tracks of `stream` (the disk
  // budget's victim), with its track; nullopt when the stream has none.
  std::optional<std::pair<TrackKey, ArchivedSegment>> PopOldest(const std::string& stream);
  uint64_t StreamBytes(const std::string& stream) const;
  size_t SegmentCount() const;
  // Drops everything of `stream` from memory (its files stay).
  void Forget(const std::string& stream);

  // Segments per run of a track view (a run splits in two past twice this).
  static constexpr size_t kRun = 256;
  // One track as of one snapshot. Immutable.
  struct TrackView {
    std::vector<std::shared_ptr<const std::vector<ArchivedSegment>>> runs;  // sorted, non-empty
    std::vector<int64_t> inits;                                             // sorted, unique
    uint64_t bytes = 0;
    size_t count = 0;
  };
  using Tracks = std::map<TrackKey, std::shared_ptr<const TrackView>>;
  // The current snapshot: the lock is held for this pointer copy only (L-19).
  std::shared_ptr<const Tracks> Snapshot() const;

 private:
  // Runs `change` on a copy of `track`'s view (an empty one if none and `create`) under the
  // writers' lock and publishes the snapshot with the result; returns what `change` returns
  // (a default value, and nothing published, for a missing track without `create`).
  template <typename Change>
  auto Update(const TrackKey& track, bool create, Change change);
  // Publishes `next` (under the writers' lock); the old snapshot is released after the swap,
  // outside the readers' lock.
  void Publish(std::shared_ptr<const Tracks> next);

  absl::Mutex write_mu_;    // serializes writers; held while they build the next snapshot
  mutable absl::Mutex mu_;  // guards the pointer below, for a copy or a swap only
  std::shared_ptr<const Tracks> tracks_ ABSL_GUARDED_BY(mu_) = std::make_shared<const Tracks>();
};

// D-2: reads what `root` holds for `stream` into `index` (both protocols, every rendition)
// and deletes the temporary files a crash left behind. Returns the segments found. Touches
// nothing outside {root}/StreamDirName(stream).
size_t Scan(const std::filesystem::path& root, const std::string& stream, ArchiveIndex& index);

}  // namespace meshwork::streamer::archive
