// FLV tag bodies, as RTMP audio (type 8) and video (type 9) messages carry them, turned into
// the frame model (media/frame.h) the packager consumes from every input:
//  * video, legacy form: H.264 (codec id 7) with its AVCDecoderConfigurationRecord and
//    length-prefixed NAL units, a signed 24-bit composition-time offset;
//  * video, Enhanced RTMP (the IsExHeader bit): FourCC `hvc1` (HEVC) or `avc1`, packet types
//    SequenceStart, CodedFrames (with the offset), CodedFramesX (offset 0), SequenceEnd;
//  * audio: AAC (sound format 10) with its AudioSpecificConfig, raw frames.
// Video leaves as Annex B with an access unit delimiter, and the parameter sets in front of
// every key frame (as an MPEG-TS encoder sends them); AAC leaves with an ADTS header each.
//
// Timestamps: RTMP's 32-bit millisecond clock is extended to 64 bits (it wraps after 49.7
// days) by taking each message's difference from the previous one as a signed 32-bit step,
// so a wrap moves forward and small reorderings between audio and video stay small. Frames
// get 90 kHz pts = (extended + composition offset) × 90 and dts = extended × 90.
//
// Tracks: video on pid 0x100, audio on 0x101 (the track identity of the frame model). A
// track is announced (on_track) when its configuration arrives or changes; frames before it
// are dropped (no decoder could use them).
//
// Not thread-safe: one publishing connection's.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "streamer/media/frame.h"

namespace meshwork::rtmp {

inline constexpr uint16_t kVideoPid = 0x100;
inline constexpr uint16_t kAudioPid = 0x101;

// 32-bit millisecond timestamps → a 64-bit clock that keeps increasing across the wrap. Each
// message moves it by the signed 32-bit step from the last; a clock driven past ±kMaxMs (a
// publisher stepping by 2^31 ms again and again: decades) starts over at the message's own
// value, which the segmenter sees as a jump, so no timestamp arithmetic downstream overflows.
class TimestampExtender {
 public:
  static constexpr int64_t kMaxMs = int64_t{1} << 40;
  int64_t Extend(uint32_t ms);

 private:
  bool started_ = false;
  uint32_t last_ = 0;
  int64_t extended_ = 0;
};

class FlvDepacketizer {
 public:
  struct Sink {
    std::function<void(const media::TrackInfo&)> on_track;
    std::function<void(media::Frame&&)> on_frame;
  };
  explicit FlvDepacketizer(Sink sink) : sink_(std::move(sink)) {}

  // One message's body. InvalidArgument for a malformed body (the caller may drop the
  // message and go on, or close), Unimplemented for a codec we do not package (AV1, VP9,
  // MP3, Opus…): the caller reports it once and ignores that track.
  absl::Status OnVideo(uint32_t timestamp_ms, std::span<const uint8_t> body);
  absl::Status OnAudio(uint32_t timestamp_ms, std::span<const uint8_t> body);

  uint64_t frames() const { return frames_; }

 private:
  absl::Status VideoConfig(media::Codec codec, std::span<const uint8_t> record);
  absl::Status VideoFrame(media::Codec codec, int64_t dts_ms, int32_t cts_ms,
                          std::span<const uint8_t> nalus);

  Sink sink_;
  TimestampExtender clock_;
  uint64_t frames_ = 0;
  // Video
  std::optional<media::TrackInfo> video_;
  int nal_length_size_ = 4;
  size_t parameter_sets_bytes_ = 0;  // video_->parameter_sets with start codes (key frames)
  // Audio
  std::optional<media::TrackInfo> audio_;
};

// Parses an AVCDecoderConfigurationRecord or HEVCDecoderConfigurationRecord: the NAL length
// size and the parameter sets (SPS/PPS, or VPS/SPS/PPS) in order. Exposed for tests.
struct DecoderConfig {
  int nal_length_size = 4;
  std::vector<std::string> parameter_sets;
};
absl::Status ParseDecoderConfig(media::Codec codec, std::span<const uint8_t> record,
                                DecoderConfig& out);

// A 7-byte ADTS header for one raw AAC frame of `payload_size` bytes. Exposed for tests.
std::string AdtsHeaderFor(int object_type, int sampling_index, int channels, size_t payload_size);

}  // namespace meshwork::rtmp
