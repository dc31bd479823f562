// The segment store (first part): stream → rendition → segments in memory, as immutable
// objects. Publishers (the local packager as pipeline "local"; remote packagers later)
// replace a rendition's window whole, so readers take a snapshot without locks and never
// see a partial segment.
//
// Memory is bounded twice: each rendition keeps at most `retain_segments`, and the store
// drops the oldest segments of the largest rendition when its total exceeds `max_bytes`.
// Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/sync/snapshot.h"
#include "common/time/timeline_anchor.h"
#include "streamer/media/frame.h"
#include "streamer/store/waiters.h"

namespace meshwork::streamer {

// An LL-HLS part (S-10): one fMP4 fragment of a segment.
struct Part {
  int index = 0;
  int64_t start = 0;                        // 90 kHz, absolute timeline
  int64_t duration = 0;                     // 90 kHz
  bool independent = false;                 // starts with a keyframe
  std::shared_ptr<const std::string> data;  // moof + mdat
  double duration_seconds() const { return static_cast<double>(duration) / 90000.0; }
};

struct Segment {
  int64_t msn = 0;
  int64_t start = 0;                 // 90 kHz on the stream's absolute timeline (S-5)
  int64_t duration = 0;              // 90 kHz
  int64_t program_date_time_ms = 0;  // wall clock of `start` by `anchor` (S-5)
  // The stream's timeline anchor this segment is dated with (S-5); wall_ms 0 = none (DASH's
  // availabilityStartTime derives from it).
  TimelineAnchor anchor;
  bool discontinuity = false;             // the timeline jumped before this segment (S-7)
  std::shared_ptr<const std::string> ts;  // the MPEG-TS bytes
  // fMP4 (CMAF) form: its parts, and the segment as their concatenation (S-10, S-16).
  std::vector<std::shared_ptr<const Part>> parts;
  std::shared_ptr<const std::string> m4s;
  double duration_seconds() const { return static_cast<double>(duration) / 90000.0; }
};

// What playlists need to know about a rendition besides its segments.
struct RenditionInfo {
  std::string name;                      // "v1", "v2", …
  std::vector<media::TrackInfo> tracks;  // video first, then audio
  int target_duration_ms = 2000;         // the configured segment duration
  int part_target_ms = 500;
  int live_window = 6;
  std::shared_ptr<const std::string> init;  // init.mp4 of the fMP4 form
};

// One rendition's published state, immutable once shared.
struct RenditionWindow {
  RenditionInfo info;
  std::deque<std::shared_ptr<const Segment>> segments;  // oldest first, msn increasing
  uint64_t bytes = 0;
  // Discontinuities of segments no longer held (for EXT-X-DISCONTINUITY-SEQUENCE).
  int64_t dropped_discontinuities = 0;
  uint64_t peak_bitrate_bps = 0;  // highest segment bitrate in the retained window
  int64_t last_publish_unix_ms = 0;
  // The segment being built: its msn, start and the parts completed so far (LL-HLS lists
  // them, DASH streams them). msn < 0 when none is open.
  int64_t open_msn = -1;
  int64_t open_start = 0;
  std::vector<std::shared_ptr<const Part>> open_parts;
  // Parts of segments that left the open slot stay reachable through `segments`.

  const Segment* Find(int64_t msn) const;
  // A part of a complete or the open segment; null when not (yet) held.
  const Part* FindPart(int64_t msn, int part) const;
};

class SegmentStore {
 public:
  struct Options {
    size_t retain_segments = 18;  // ≥ 2 × live window (S-9), default window 6 → 3×
    uint64_t max_bytes = 512ull << 20;
    size_t max_waiters = 20'000;  // held requests per node (P-4 holds 10 000)
  };
  SegmentStore() : SegmentStore(Options()) {}
  explicit SegmentStore(Options options) : options_(options), waiters_(options.max_waiters) {}

  // Appends a segment to (stream, rendition), creating it with `info` when new (the info is
  // replaced on every call, so a changed resolution shows at once).
  void Publish(const std::string& stream, const RenditionInfo& info,
               std::shared_ptr<const Segment> segment, int64_t now_unix_ms);
  // Adds a completed part to the open segment `msn` (opening it when new); waiters for it
  // are released.
  void PublishPart(const std::string& stream, const RenditionInfo& info, int64_t msn,
                   int64_t segment_start, std::shared_ptr<const Part> part, int64_t now_unix_ms);

  // The rendition's current window, or null when unknown.
  std::shared_ptr<const RenditionWindow> Window(const std::string& stream,
                                                const std::string& rendition) const;
  // The renditions of a stream in name order (empty when unknown).
  std::vector<std::shared_ptr<const RenditionWindow>> Renditions(const std::string& stream) const;
  std::vector<std::string> Streams() const;
  // Drops a stream (it was removed from this node); its waiters complete with kRemoved.
  void Remove(const std::string& stream);

  // Holds until (stream, rendition) has published `position` (see Waiters). An already
  // published position completes at once (posted to `executor`).
  absl::Status Wait(const std::string& stream, const std::string& rendition, Position position,
                    boost::asio::any_io_executor executor,
                    std::chrono::steady_clock::time_point deadline, Waiters::Callback callback);
  size_t waiting() const { return waiters_.size(); }
  uint64_t bytes() const;

 private:
  using Slot = Snapshot<RenditionWindow>;
  void EnforceBytesLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  mutable absl::Mutex mu_;
  std::map<std::string, std::map<std::string, std::shared_ptr<Slot>>> streams_ ABSL_GUARDED_BY(mu_);
  uint64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  Waiters waiters_;
};

}  // namespace meshwork::streamer
