// D-3/D-4: the static MPD of an archived period (`archive-{from}-{duration}.mpd`) over the
// CMAF (fmp4) recording: an AdaptationSet per media type, a Representation per recorded
// rendition, each with a SegmentList of the archive's own file names and a SegmentTimeline.
//
// Periods: a new one wherever the reference track (the first video rendition, else the
// first) has a gap longer than the tolerance or changes its init (a new timeline, D-4). A
// period's other tracks hold the segments whose middle falls inside it.
//
// Times: segments are filed by wall clock (ms), but a player places a fragment by its own
// decode time (tfdt, in its track's timescale). So every track of a period carries the tfdt
// of its first segment and its init's timescale, read from the files (ProbeArchiveMpd, on
// the disk pool): S@t = tfdt₀ + (start − start₀)·timescale/1000 and presentationTimeOffset
// puts the period's wall-clock start at presentation time 0. A track whose files cannot be
// read is left out. Plan and render are pure; ProbeArchiveMpd reads files and may block.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "streamer/archive/archive_index.h"
#include "streamer/media/mp4_probe.h"

namespace meshwork::streamer {

// A hole longer than this between two recorded segments is a gap (D-4): a discontinuity in
// an archive playlist, a new period in an archive MPD.
inline constexpr int64_t kArchiveGapToleranceMs = 500;

struct ArchiveMpdTrack {
  std::string rendition;
  int64_t init_ms = 0;  // dvr-init-{init_ms}.mp4, in force at the first segment
  std::vector<archive::ArchivedSegment> segments;
  // Filled by ProbeArchiveMpd: the init's first track, the first segment's decode time.
  std::optional<media::ProbedTrack> probe;
  uint64_t first_decode_time = 0;
};

struct ArchiveMpdPeriod {
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  std::vector<ArchiveMpdTrack> tracks;  // the reference first
};

// The periods of [from_ms, to_ms) for `reference` and the `others` renditions of `stream`.
std::vector<ArchiveMpdPeriod> PlanArchiveMpd(const archive::ArchiveIndex& index,
                                             const std::string& stream,
                                             const std::string& reference,
                                             const std::vector<std::string>& others,
                                             int64_t from_ms, int64_t to_ms);

// Reads each track's init and first segment under `root` (its files for `stream`).
void ProbeArchiveMpd(const std::filesystem::path& root, const std::string& stream,
                     std::vector<ArchiveMpdPeriod>& periods);

// The MPD; empty when no track of any period was probed.
// `uri_query` (A-3: a viewer's token) follows every init and segment URL.
std::string ArchiveMpd(const std::vector<ArchiveMpdPeriod>& periods,
                       const std::string& uri_query = "");

// The init of `rendition` in force at `at_ms`, probed (for choosing the reference track).
std::optional<media::ProbedTrack> ProbeArchiveInit(const std::filesystem::path& root,
                                                   const archive::ArchiveIndex& index,
                                                   const archive::TrackKey& track, int64_t at_ms);

}  // namespace meshwork::streamer
