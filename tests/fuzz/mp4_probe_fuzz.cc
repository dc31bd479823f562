// Fuzzes the fMP4 probe (L-1: init segments and fragments packagers publish) and the fragment
// demuxer (S-25: the fragments an edge receives from upstream): any input is read within its
// bounds, and what comes out is plausible.
//
// Properties (a violation traps): codec strings are short and start with a known four
// characters when set; a track is video or audio; the probe is deterministic; the demuxer
// returns frames or an error, never both, at most kMaxDemuxedSamples, each with data and
// video keyframes led by the parameter sets.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "streamer/media/fmp4_demuxer.h"
#include "streamer/media/mp4_probe.h"

namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace meshwork::media;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto tracks = ProbeInitSegment(in);
  for (const auto& t : tracks) {
    Check(t.info.is_video() || t.info.is_audio() || t.info.codec == Codec::kUnknown);
    Check(t.info.codec_string.size() <= 64);
    if (!t.info.codec_string.empty()) {
      std::string_view c = t.info.codec_string;
      Check(c.starts_with("avc") || c.starts_with("hvc") || c.starts_with("hev") ||
            c.starts_with("mp4a"));
    }
  }
  Check(ProbeInitSegment(in).size() == tracks.size());
  auto start = ProbeFragmentStart(in);
  auto again = ProbeFragmentStart(in);
  Check(start.has_value() == again.has_value());
  if (start) Check(start->base_media_decode_time == again->base_media_decode_time);

  // The input as fragments of a video track (id 1) and an audio track (id 2).
  ProbedTrack video;
  video.track_id = 1;
  video.timescale = 90000;
  video.info.codec = Codec::kH264;
  video.info.parameter_sets = {"\x67\x42", "\x68\xce"};
  ProbedTrack audio;
  audio.track_id = 2;
  audio.timescale = 48000;
  audio.info.codec = Codec::kAac;
  audio.info.audio_specific_config = "\x11\x90";
  // Timescales a packager may declare: 1 and 44 100 scale decode times up (R-3: a time
  // read past the 90 kHz range is refused, never wrapped).
  ProbedTrack slow = video;
  slow.timescale = 1;
  ProbedTrack cd = audio;
  cd.timescale = 44100;
  for (const ProbedTrack* track : {&video, &audio, &slow, &cd}) {
    auto d = DemuxFragments(in, *track);
    Check(d.error.empty() != d.frames.empty());
    Check(d.frames.size() <= kMaxDemuxedSamples);
    for (const Frame& f : d.frames) {
      Check(f.dts >= -(int64_t{1} << 52) && f.dts <= (int64_t{1} << 52));
      Check(f.pts >= -(int64_t{1} << 52) && f.pts <= (int64_t{1} << 52));
      Check(f.data != nullptr && !f.data->empty());
      if ((track == &video || track == &slow) && f.keyframe)
        Check(f.data->compare(0, 6, "\0\0\0\1\x67\x42", 6) == 0);
    }
  }
  return 0;
}
