#include "streamer/rtmp/flv.h"

#include <memory>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "streamer/media/codec_parsers.h"

namespace meshwork::rtmp {
namespace {

using media::Codec;

constexpr char kStartCode[] = {0, 0, 0, 1};
constexpr int kSampleRates[] = {96000, 88200, 64000, 48000, 44100, 32000, 24000,
                                22050, 16000, 12000, 11025, 8000,  7350};

int32_t Si24(const uint8_t* p) {
  int32_t v = (p[0] << 16) | (p[1] << 8) | p[2];
  return (v & 0x800000) ? v - 0x1000000 : v;
}
uint32_t Be16(const uint8_t* p) { return (p[0] << 8) | p[1]; }

int NalType(Codec codec, std::string_view nal) {
  return codec == Codec::kHevc ? media::HevcNalType(nal) : media::H264NalType(nal);
}
bool IsKeyNal(Codec codec, int type) {
  return codec == Codec::kHevc ? (type >= 16 && type <= 23) : type == 5;
}
bool IsParameterSet(Codec codec, int type) {
  return codec == Codec::kHevc ? (type >= 32 && type <= 34) : (type == 7 || type == 8);
}
bool IsDelimiter(Codec codec, int type) { return codec == Codec::kHevc ? type == 35 : type == 9; }

// Reads `count` length-prefixed (u16) NAL units from `record` at `at` into `out`; false when
// truncated, or (`*over` set) when `out` would pass the R-3 bounds on parameter sets
// (media::kMaxParameterSets, media::kMaxParameterSetBytes), checked before anything is copied.
bool ReadNals(std::span<const uint8_t> record, size_t& at, size_t count,
              std::vector<std::string>& out, bool* over) {
  size_t bytes = 0;
  for (const auto& ps : out) bytes += ps.size();
  for (size_t i = 0; i < count; ++i) {
    if (at + 2 > record.size()) return false;
    const size_t len = Be16(&record[at]);
    at += 2;
    if (len == 0 || at + len > record.size()) return false;
    bytes += len;
    if (out.size() == media::kMaxParameterSets || bytes > media::kMaxParameterSetBytes) {
      *over = true;
      return false;
    }
    out.emplace_back(reinterpret_cast<const char*>(&record[at]), len);
    at += len;
  }
  return true;
}

}  // namespace

int64_t TimestampExtender::Extend(uint32_t ms) {
  if (!started_) {
    started_ = true;
    extended_ = ms;
  } else {
    extended_ += static_cast<int32_t>(ms - last_);
    if (extended_ > kMaxMs || extended_ < -kMaxMs) extended_ = ms;
  }
  last_ = ms;
  return extended_;
}

absl::Status ParseDecoderConfig(Codec codec, std::span<const uint8_t> record, DecoderConfig& out) {
  out = DecoderConfig{};
  const char* name = codec == Codec::kHevc ? "HEVC" : "AVC";
  auto bad = [&](const char* what) {
    return absl::InvalidArgumentError(absl::StrCat(name, " decoder configuration record: ", what));
  };
  if (record.empty() || record[0] != 1) return bad("version is not 1");
  size_t at;
  bool over = false;
  const char* too_many = "more than 32 parameter sets or 16 KiB of them";
  if (codec == Codec::kH264) {
    if (record.size() < 7) return bad("shorter than 7 bytes");
    out.nal_length_size = (record[4] & 3) + 1;
    at = 6;
    if (!ReadNals(record, at, record[5] & 0x1f, out.parameter_sets, &over)) {
      return bad(over ? too_many : "truncated SPS");
    }
    if (at >= record.size()) return bad("no PPS count");
    const size_t pps = record[at++];
    if (!ReadNals(record, at, pps, out.parameter_sets, &over)) {
      return bad(over ? too_many : "truncated PPS");
    }
  } else {
    if (record.size() < 23) return bad("shorter than 23 bytes");
    out.nal_length_size = (record[21] & 3) + 1;
    const size_t arrays = record[22];
    at = 23;
    for (size_t i = 0; i < arrays; ++i) {
      if (at + 3 > record.size()) return bad("truncated NAL array");
      const size_t count = Be16(&record[at + 1]);
      at += 3;
      if (!ReadNals(record, at, count, out.parameter_sets, &over)) {
        return bad(over ? too_many : "truncated NAL unit");
      }
    }
  }
  if (out.nal_length_size == 3) return bad("NAL length size 3 is not allowed");
  return absl::OkStatus();
}

std::string AdtsHeaderFor(int object_type, int sampling_index, int channels, size_t payload_size) {
  const size_t length = payload_size + 7;
  std::string h(7, '\0');
  h[0] = static_cast<char>(0xff);
  h[1] = static_cast<char>(0xf1);  // MPEG-4, layer 0, no CRC
  h[2] = static_cast<char>(((object_type - 1) << 6) | (sampling_index << 2) | (channels >> 2));
  h[3] = static_cast<char>(((channels & 3) << 6) | (length >> 11));
  h[4] = static_cast<char>((length >> 3) & 0xff);
  h[5] = static_cast<char>(((length & 7) << 5) | 0x1f);  // buffer fullness 0x7ff: VBR
  h[6] = static_cast<char>(0xfc);
  return h;
}

absl::Status FlvDepacketizer::OnVideo(uint32_t timestamp_ms, std::span<const uint8_t> body) {
  if (body.empty()) return absl::InvalidArgumentError("empty video message");
  const int64_t ms = clock_.Extend(timestamp_ms);
  const uint8_t b0 = body[0];
  if (b0 & 0x80) {  // Enhanced RTMP: [IsExHeader:1][FrameType:3][PacketType:4][FourCC:32]
    if (body.size() < 5) return absl::InvalidArgumentError("enhanced video header truncated");
    const std::string fourcc(reinterpret_cast<const char*>(&body[1]), 4);
    Codec codec;
    if (fourcc == "hvc1") {
      codec = Codec::kHevc;
    } else if (fourcc == "avc1") {
      codec = Codec::kH264;
    } else {
      return absl::UnimplementedError(
          absl::StrCat("video FourCC \"", absl::CHexEscape(fourcc), "\" is not packaged"));
    }
    const int packet_type = b0 & 0x0f;
    if (((b0 >> 4) & 7) == 5) return absl::OkStatus();  // command frame
    auto rest = body.subspan(5);
    switch (packet_type) {
      case 0:  // SequenceStart
        return VideoConfig(codec, rest);
      case 1:  // CodedFrames: SI24 composition time offset first
        if (rest.size() < 3) return absl::InvalidArgumentError("coded frame header truncated");
        return VideoFrame(codec, ms, Si24(rest.data()), rest.subspan(3));
      case 3:  // CodedFramesX: offset 0
        return VideoFrame(codec, ms, 0, rest);
      case 2:  // SequenceEnd
      case 4:  // Metadata (HDR colour information)
        return absl::OkStatus();
      default:
        return absl::UnimplementedError(
            absl::StrCat("enhanced video packet type ", packet_type, " is not supported"));
    }
  }
  if ((b0 >> 4) == 5) return absl::OkStatus();  // video info / command frame
  const int codec_id = b0 & 0x0f;
  Codec codec;
  if (codec_id == 7) {
    codec = Codec::kH264;
  } else if (codec_id == 12) {  // HEVC as some encoders sent it before Enhanced RTMP
    codec = Codec::kHevc;
  } else {
    return absl::UnimplementedError(
        absl::StrCat("FLV video codec id ", codec_id, " is not packaged (H.264 or HEVC only)"));
  }
  if (body.size() < 5) return absl::InvalidArgumentError("AVC video header truncated");
  switch (body[1]) {
    case 0:
      return VideoConfig(codec, body.subspan(5));
    case 1:
      return VideoFrame(codec, ms, Si24(&body[2]), body.subspan(5));
    case 2:
      return absl::OkStatus();  // end of sequence
    default:
      return absl::InvalidArgumentError(absl::StrCat("AVC packet type ", int{body[1]}));
  }
}

absl::Status FlvDepacketizer::VideoConfig(Codec codec, std::span<const uint8_t> record) {
  DecoderConfig config;
  if (auto s = ParseDecoderConfig(codec, record, config); !s.ok()) return s;
  std::optional<media::VideoInfo> info;
  for (const auto& ps : config.parameter_sets) {
    const int t = NalType(codec, ps);
    if ((codec == Codec::kHevc && t == 33) || (codec == Codec::kH264 && t == 7)) {
      info = codec == Codec::kHevc ? media::ParseHevcSps(ps) : media::ParseH264Sps(ps);
      break;
    }
  }
  if (!info) return absl::InvalidArgumentError("decoder configuration has no usable SPS");
  media::TrackInfo track;
  track.pid = kVideoPid;
  track.codec = codec;
  track.codec_string = info->codec_string;
  track.width = info->width;
  track.height = info->height;
  track.frame_rate = info->frame_rate;
  track.parameter_sets = config.parameter_sets;
  nal_length_size_ = config.nal_length_size;
  parameter_sets_bytes_ = 0;
  for (const auto& ps : config.parameter_sets)
    parameter_sets_bytes_ += sizeof(kStartCode) + ps.size();
  const bool changed = !video_ || video_->codec != codec ||
                       video_->codec_string != track.codec_string || video_->width != track.width ||
                       video_->height != track.height ||
                       video_->parameter_sets != track.parameter_sets;
  video_ = std::move(track);
  if (changed && sink_.on_track) sink_.on_track(*video_);
  return absl::OkStatus();
}

absl::Status FlvDepacketizer::VideoFrame(Codec codec, int64_t dts_ms, int32_t cts_ms,
                                         std::span<const uint8_t> nalus) {
  if (!video_ || video_->codec != codec) return absl::OkStatus();  // nothing to decode with
  const std::string_view delimiter = codec == Codec::kHevc
                                         ? std::string_view("\0\0\0\1\x46\x01\x50", 7)
                                         : std::string_view("\0\0\0\1\x09\xf0", 6);
  // Calls fn(nal) for each non-empty NAL unit but access unit delimiters (ours is first).
  auto for_each_nal = [&](auto&& fn) -> absl::Status {
    for (size_t at = 0; at < nalus.size();) {
      if (at + nal_length_size_ > nalus.size()) {
        return absl::InvalidArgumentError("NAL unit length truncated");
      }
      size_t len = 0;
      for (int i = 0; i < nal_length_size_; ++i) len = (len << 8) | nalus[at + i];
      at += nal_length_size_;
      if (len > nalus.size() - at) {
        return absl::InvalidArgumentError(
            absl::StrCat("NAL unit of ", len, " bytes overruns its message"));
      }
      std::string_view nal(reinterpret_cast<const char*>(&nalus[at]), len);
      at += len;
      if (nal.empty()) continue;
      const int type = NalType(codec, nal);
      if (!IsDelimiter(codec, type)) fn(nal, type);
    }
    return absl::OkStatus();
  };
  // First pass: check the framing and size the frame, so it is allocated once (P-7).
  bool key = false;
  bool has_parameter_sets = false;
  size_t size = delimiter.size();
  absl::Status framing = for_each_nal([&](std::string_view nal, int type) {
    key = key || IsKeyNal(codec, type);
    has_parameter_sets = has_parameter_sets || IsParameterSet(codec, type);
    size += sizeof(kStartCode) + nal.size();
  });
  if (!framing.ok()) return framing;
  if (size == delimiter.size()) return absl::OkStatus();
  const bool add_parameter_sets = key && !has_parameter_sets;
  if (add_parameter_sets) size += parameter_sets_bytes_;
  media::Frame frame;
  // Where each NAL unit lands, for the packagers (frame.h); past kMaxKnownNals, unknown.
  size_t count = 0;
  std::string annexb;
  auto append = [&](std::string_view nal) {
    if (count < media::Frame::kMaxKnownNals) {
      frame.nals[count] = {static_cast<uint32_t>(annexb.size() + sizeof(kStartCode)),
                           static_cast<uint32_t>(nal.size())};
    }
    ++count;
    annexb.append(kStartCode, sizeof(kStartCode)).append(nal);
  };
  annexb.reserve(size);
  append(delimiter.substr(sizeof(kStartCode)));
  if (add_parameter_sets) {
    for (const std::string& ps : video_->parameter_sets) append(ps);
  }
  (void)for_each_nal([&](std::string_view nal, int) { append(nal); });
  frame.nal_count = count <= media::Frame::kMaxKnownNals ? static_cast<uint8_t>(count) : 0;
  frame.pid = kVideoPid;
  frame.codec = codec;
  frame.dts = dts_ms * 90;
  frame.pts = (dts_ms + cts_ms) * 90;
  frame.keyframe = key;
  frame.data = std::make_shared<const std::string>(std::move(annexb));
  ++frames_;
  if (sink_.on_frame) sink_.on_frame(std::move(frame));
  return absl::OkStatus();
}

absl::Status FlvDepacketizer::OnAudio(uint32_t timestamp_ms, std::span<const uint8_t> body) {
  if (body.empty()) return absl::InvalidArgumentError("empty audio message");
  const int64_t ms = clock_.Extend(timestamp_ms);
  const int format = body[0] >> 4;
  if (format != 10) {
    return absl::UnimplementedError(
        absl::StrCat("FLV audio format ", format, " is not packaged (AAC only)"));
  }
  if (body.size() < 2) return absl::InvalidArgumentError("AAC header truncated");
  auto payload = body.subspan(2);
  if (body[1] == 0) {  // AudioSpecificConfig
    // Empty: the encoder did not know it yet (ffmpeg copying ADTS sends it again later).
    if (payload.empty()) return absl::OkStatus();
    if (payload.size() < 2) return absl::InvalidArgumentError("AudioSpecificConfig truncated");
    media::AdtsHeader asc;
    asc.object_type = payload[0] >> 3;
    asc.sampling_index = ((payload[0] & 7) << 1) | (payload[1] >> 7);
    asc.channels = (payload[1] >> 3) & 0x0f;
    if (asc.object_type < 1 || asc.object_type > 4) {
      return absl::UnimplementedError(absl::StrCat("AAC object type ", asc.object_type,
                                                   " cannot be carried in ADTS (1…4 only)"));
    }
    if (asc.sampling_index > 12) {
      return absl::InvalidArgumentError(
          absl::StrCat("AAC sampling frequency index ", asc.sampling_index));
    }
    if (asc.channels < 1 || asc.channels > 7) {
      return absl::UnimplementedError(
          absl::StrCat("AAC channel configuration ", asc.channels, " is not supported"));
    }
    asc.sample_rate = kSampleRates[asc.sampling_index];
    media::TrackInfo track;
    track.pid = kAudioPid;
    track.codec = Codec::kAac;
    track.codec_string = asc.CodecString();
    track.sample_rate = asc.sample_rate;
    track.channels = asc.channels;
    track.aac_object_type = asc.object_type;
    track.audio_specific_config = asc.AudioSpecificConfig();
    const bool changed = !audio_ || audio_->audio_specific_config != track.audio_specific_config;
    audio_ = std::move(track);
    if (changed && sink_.on_track) sink_.on_track(*audio_);
    return absl::OkStatus();
  }
  if (body[1] != 1)
    return absl::InvalidArgumentError(absl::StrCat("AAC packet type ", int{body[1]}));
  if (!audio_ || payload.empty()) return absl::OkStatus();
  if (payload.size() + 7 > 0x1fff) {
    return absl::InvalidArgumentError(
        absl::StrCat("AAC frame of ", payload.size(), " bytes is larger than ADTS allows"));
  }
  const auto& a = *audio_;
  int sampling_index = 0;
  while (kSampleRates[sampling_index] != a.sample_rate) ++sampling_index;
  std::string data;
  data.reserve(7 + payload.size());
  data.append(AdtsHeaderFor(a.aac_object_type, sampling_index, a.channels, payload.size()));
  data.append(reinterpret_cast<const char*>(payload.data()), payload.size());
  media::Frame frame;
  frame.pid = kAudioPid;
  frame.codec = Codec::kAac;
  frame.pts = frame.dts = ms * 90;
  frame.keyframe = true;
  frame.data = std::make_shared<const std::string>(std::move(data));
  ++frames_;
  if (sink_.on_frame) sink_.on_frame(std::move(frame));
  return absl::OkStatus();
}

}  // namespace meshwork::rtmp
