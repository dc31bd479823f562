// S-25: CMAF fragments turned back into frames, so a node that received a rendition only in
// its fMP4 form (an edge, a Meshwork origin fed by S-23) makes the MPEG-TS form locally from
// the same samples on the same timeline.
//
// Input: one or more moof+mdat pairs (a part, or a segment assembled from its parts) of the
// track described by an init segment (ProbeInitSegment). Output: the track's samples in
// decode order as Frames with 90 kHz timestamps — the inverse of Fmp4Writer's rescaling
// (video at 90 kHz is exact; audio comes back within 2 ticks) — video as an Annex B access
// unit with the init's parameter sets before every keyframe (an MPEG-TS decoder joins at any
// keyframe), AAC as ADTS frames (headers from the init's AudioSpecificConfig), up to
// `audio_frames_per_pes` consecutive ones per Frame (one PES), as a packager groups them.
//
// A bounded parser of untrusted bytes: every box, sample count and sample range is checked
// against what contains it; at most kMaxSamples samples; sample times beyond ±2^52 at
// 90 kHz refused. Fuzzed (tests/fuzz/mp4_probe_fuzz.cc, with tracks of several timescales).
// Pure and thread-compatible.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "streamer/media/frame.h"
#include "streamer/media/mp4_probe.h"

namespace meshwork::media {

inline constexpr size_t kMaxDemuxedSamples = 100'000;

struct FragmentFrames {
  std::vector<Frame> frames;
  std::string error;  // set: what is malformed, and `frames` is empty (nothing partial)
};
// The frames of `track` in `fragments`; fragments of other tracks are skipped.
FragmentFrames DemuxFragments(std::string_view fragments, const ProbedTrack& track,
                              int audio_frames_per_pes = 4);

// A 7-byte ADTS header (ISO/IEC 13818-7 §6.2, protection absent) for an AAC frame of
// `payload_bytes` described by `audio_specific_config`; empty when the config is unusable.
std::string AdtsHeaderFor(std::string_view audio_specific_config, size_t payload_bytes);

}  // namespace meshwork::media
