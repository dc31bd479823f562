// D-2/D-4: what this node has recorded, in memory: per track (stream, protocol, rendition)
// the recorded segments by wall-clock start and the init segments by the time they took
// effect. Rebuilt from disk at start-up (Scan), kept by the recorder as it writes and trims,
// read by the archive routes. Thread-safe: one mutex, held for map operations only (no I/O
// under it); readers get copies of the few entries they ask for.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
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

  // Retention: removes and returns the oldest segments of `track` while its span exceeds
  // `depth_ms` (newest end − oldest start), and inits no segment needs any more.
  struct Trimmed {
    std::vector<ArchivedSegment> segments;
    std::vector<int64_t> inits;
  };
  Trimmed TrimToDepth(const TrackKey& track, int64_t depth_ms);
  // Removes and returns the single oldest segment over all tracks of `stream` (the disk
  // budget's victim), with its track; nullopt when the stream has none.
  std::optional<std::pair<TrackKey, ArchivedSegment>> PopOldest(const std::string& stream);
  uint64_t StreamBytes(const std::string& stream) const;
  size_t SegmentCount() const;
  // Drops everything of `stream` from memory (its files stay).
  void Forget(const std::string& stream);

 private:
  struct Track {
    std::map<int64_t, ArchivedSegment> segments;
    std::map<int64_t, bool> inits;
    uint64_t bytes = 0;
  };
  mutable absl::Mutex mu_;
  std::map<TrackKey, Track> tracks_ ABSL_GUARDED_BY(mu_);
};

// D-2: reads what `root` holds for `stream` into `index` (both protocols, every rendition)
// and deletes the temporary files a crash left behind. Returns the segments found. Touches
// nothing outside {root}/{stream}.
size_t Scan(const std::filesystem::path& root, const std::string& stream, ArchiveIndex& index);

}  // namespace meshwork::streamer::archive
