// What a node needs to know of fMP4 (CMAF) objects that packagers publish to it (L-1): the
// tracks of an init segment (media type, RFC 6381 codec string, video size, audio rate and
// channels, timescale) and where a fragment starts on its track's timeline. Enough to list
// a published rendition in an LL-HLS master and an MPD (S-16a) and to number its segments.
//
// Bounded parsers of untrusted bytes (they come from the network): boxes are checked against
// their parent's size, nesting is fixed by the box path walked, nothing is allocated beyond
// the output. Fuzzed (tests/fuzz/mp4_probe_fuzz.cc). Pure and thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "streamer/media/frame.h"

namespace meshwork::media {

// One track of an init segment.
struct ProbedTrack {
  // codec, codec_string, width/height or sample_rate/channels, parameter sets (avcC, hvcC)
  // or the AudioSpecificConfig (esds)
  TrackInfo info;
  uint32_t track_id = 0;   // tkhd
  uint32_t timescale = 0;  // mdhd: ticks per second of the track's timeline
};

// The tracks of `init` (ftyp + moov) in file order; empty when it is not a readable init
// segment. Tracks of a kind other than video (vide) and audio (soun) are left out; a codec
// it cannot name keeps an empty codec_string.
std::vector<ProbedTrack> ProbeInitSegment(std::string_view init);

// The decode time of the first sample of the first track fragment of `fragment` (moof →
// traf → tfdt, in that track's timescale) and its track id; nullopt when absent.
struct FragmentStart {
  uint32_t track_id = 0;
  uint64_t base_media_decode_time = 0;
};
std::optional<FragmentStart> ProbeFragmentStart(std::string_view fragment);

}  // namespace meshwork::media
