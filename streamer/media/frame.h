// The frame model every source is turned into and every packager consumes: one access unit
// of one elementary stream with 90 kHz timestamps.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace meshwork::media {

enum class Codec { kUnknown, kH264, kHevc, kAac };

// What is known about one elementary stream (a "track") of a source.
struct TrackInfo {
  uint16_t pid = 0;  // the MPEG-TS PID it came from (identifies the track)
  Codec codec = Codec::kUnknown;
  std::string codec_string;  // RFC 6381: "avc1.64001f", "hvc1.1.6.L93.B0", "mp4a.40.2"
  // Video (from the SPS); 0 when unknown.
  int width = 0;
  int height = 0;
  double frame_rate = 0;
  // Audio (from the ADTS header); 0 when unknown.
  int sample_rate = 0;
  int channels = 0;
  int aac_object_type = 0;  // 2 = AAC-LC
  // Codec configuration as found in the stream: SPS/PPS(/VPS) NAL units without start
  // codes for video, the 2-byte AudioSpecificConfig for AAC. Used by the fMP4 writer.
  std::vector<std::string> parameter_sets;
  std::string audio_specific_config;

  bool is_video() const { return codec == Codec::kH264 || codec == Codec::kHevc; }
  bool is_audio() const { return codec == Codec::kAac; }
};

struct Frame {
  uint16_t pid = 0;
  Codec codec = Codec::kUnknown;
  // 90 kHz. Unwrapped: the 33-bit values of the stream extended to 64 bits so they keep
  // increasing across the 2^33 wrap (about 26.5 h). The first frame keeps its raw value.
  int64_t pts = 0;
  int64_t dts = 0;
  bool keyframe = false;  // video: IDR / IRAP access unit; audio: always true
  // The access unit: Annex B byte stream (start codes) for video, one or more ADTS frames
  // (headers included) for AAC. Shared, immutable once emitted.
  std::shared_ptr<const std::string> data;
  // Video whose source framed the NAL units itself (RTMP's length prefixes): where each NAL
  // unit of `data` (start codes excluded) begins and how long it is, in order, so a packager
  // need not search `data` for start codes (P-7). nal_count 0: not known, search. A frame
  // with more than kMaxKnownNals units leaves them unknown.
  struct NalSpan {
    uint32_t offset = 0;
    uint32_t size = 0;
  };
  static constexpr size_t kMaxKnownNals = 8;
  std::array<NalSpan, kMaxKnownNals> nals{};
  uint8_t nal_count = 0;
};

}  // namespace meshwork::media
