// fMP4 / CMAF writer (S-10, S-16): an init segment (ftyp + moov with avcC/hvcC/esds and mvex)
// and fragments (moof + mdat) holding the frames of every track, so one object per part or
// segment carries audio and video together. Output is deterministic: the same frames give
// the same bytes on every node.
//
// Timescales: video 90 000; audio its sample rate. Track ids follow the order of `tracks`
// (1, 2, …). Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "streamer/media/frame.h"

namespace meshwork::media {

class Fmp4Writer {
 public:
  // At most one video and one audio track; others are ignored.
  explicit Fmp4Writer(const std::vector<TrackInfo>& tracks);

  // ftyp (major brand "iso6", compatible "iso6", "cmfc", "dash", "mp41") + moov.
  std::string InitSegment() const;

  // One fragment with `frames` (decode order per track; tracks may be interleaved): moof
  // (mfhd with `sequence_number`, one traf per track that has frames: tfhd with
  // default-base-is-moof, tfdt version 1 = first decode time in the track timescale, trun
  // with data offset, per-sample duration, size, flags and composition offset) + one mdat.
  // A sample's duration is the distance to the next frame of its track; the last one's is
  // `end_dts[pid] − its dts` when given (90 kHz), else the track's previous sample duration.
  // Video samples are converted from Annex B to 4-byte length prefixes (AUD, SPS, PPS, VPS
  // dropped); AAC ADTS headers are stripped (one sample per raw AAC frame).
  std::string Fragment(std::span<const Frame> frames, uint32_t sequence_number,
                       const std::map<uint16_t, int64_t>& end_dts = {});

  // The CMAF track timescale for a pid (0 if unknown).
  uint32_t Timescale(uint16_t pid) const;

 private:
  struct Track {
    TrackInfo info;
    uint32_t id = 0;
    uint32_t timescale = 0;
    int64_t last_duration = 0;  // in the track timescale
  };
  struct Sample;
  // The samples of one track's frames (in fragment order), in the track timescale.
  static std::vector<Sample> VideoSamples(Track& track, const std::vector<const Frame*>& frames,
                                          std::optional<int64_t> end_dts);
  static std::vector<Sample> AudioSamples(Track& track, const std::vector<const Frame*>& frames,
                                          std::optional<int64_t> end_dts);
  std::vector<Track> tracks_;
};

}  // namespace meshwork::media
