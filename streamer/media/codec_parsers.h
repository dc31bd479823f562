// Bitstream parsers for the codec information a playlist needs (S-3): H.264 and HEVC SPS →
// resolution, frame rate, profile/level and the RFC 6381 codec string; AAC ADTS headers →
// sample rate, channels, object type. All are robust to garbage (return nullopt/false) and
// never read past their input.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "streamer/media/frame.h"

namespace meshwork::media {

// The most parameter sets (VPS, SPS, PPS, …) one track's decoder configuration may carry, and
// their most bytes in all. A real encoder's are a handful of tens of bytes; each keyframe
// is sent with all of them (MPEG-TS, Annex B), so a configuration past these is refused rather
// than multiplied into every keyframe.
inline constexpr size_t kMaxParameterSets = 32;
inline constexpr size_t kMaxParameterSetBytes = 16 * 1024;

// Splits an Annex B byte stream into NAL units (without start codes).
std::vector<std::string_view> SplitAnnexB(std::string_view data);

// The NAL units of an Annex B byte stream one at a time, for a caller that may stop early
// (P-7: the demuxer needs the NAL units before the first slice only, not the slice data).
// `*pos` starts at 0; each call stores the next non-empty NAL unit (without its start code) in
// `*nal` and returns true, or returns false at the end.
bool NextAnnexBNal(std::string_view data, size_t* pos, std::string_view* nal);
// The same, except that a NAL unit whose header byte `last` accepts ends the iteration: it is
// returned with the rest of `data`, its end not searched (the demuxer stops at the first
// slice, whose type is all it needs: the slice data is most of a frame's bytes, P-7).
bool NextAnnexBNalUntil(std::string_view data, size_t* pos, std::string_view* nal,
                        bool (*last)(uint8_t header));

// What a video access unit (Annex B, H.264 or HEVC) says up to its first slice: whether it
// is a keyframe (an IDR or IRAP slice comes first), its first SPS (a view into `au`; empty
// when it has none) and its parameter sets in order (H.264 SPS and PPS; HEVC VPS, SPS and
// PPS). The slice data — most of the bytes — is not scanned (P-7).
struct AccessUnitHead {
  bool keyframe = false;
  std::string_view sps;
  std::vector<std::string> parameter_sets;
};
AccessUnitHead ScanAccessUnitHead(std::string_view au, bool hevc);

// Removes emulation-prevention bytes (00 00 03 → 00 00).
std::string UnescapeRbsp(std::string_view nal);

struct VideoInfo {
  std::string codec_string;
  int width = 0;
  int height = 0;
  double frame_rate = 0;  // 0 when the SPS has no timing info
};

// `nal`: one SPS NAL unit including its NAL header.
std::optional<VideoInfo> ParseH264Sps(std::string_view nal);
std::optional<VideoInfo> ParseHevcSps(std::string_view nal);

// H.264 profiles whose SPS carries chroma_format_idc and bit depths (high profiles).
bool H264ProfileHasChromaInfo(uint32_t profile_idc);

// NAL unit type helpers.
inline int H264NalType(std::string_view nal) { return nal.empty() ? -1 : nal[0] & 0x1f; }
inline int HevcNalType(std::string_view nal) { return nal.empty() ? -1 : (nal[0] >> 1) & 0x3f; }

struct AdtsHeader {
  int object_type = 0;  // 2 = AAC-LC
  int sample_rate = 0;
  int sampling_index = 0;
  int channels = 0;
  size_t header_bytes = 0;  // 7 or 9
  size_t frame_bytes = 0;   // header + payload
  std::string AudioSpecificConfig() const;
  std::string CodecString() const;  // "mp4a.40.<object_type>"
};
std::optional<AdtsHeader> ParseAdtsHeader(std::span<const uint8_t> data);

// The whole ADTS frames at the start of `data`: `bytes` of them, `frames` in number, the first
// one's header. The scan stops at a byte that starts no frame, or at a frame that runs past
// the end (`cut`: it starts at `bytes`, the rest of `data`).
struct AdtsRun {
  size_t bytes = 0;
  int frames = 0;
  std::optional<AdtsHeader> first;
  bool cut = false;
};
AdtsRun ScanAdtsFrames(std::string_view data);

// An AAC access unit (`Frame` holding one or more ADTS frames, as a PES often does: ffmpeg's
// MPEG-TS muxer packs ~0.2 s of audio in one) cut in time. `AdtsEnd` is where its last ADTS
// frame ends (90 kHz, from its dts), its dts when it holds none. `SplitAdtsAt` keeps in
// `frame` the ADTS frames that start before `at` and returns the others as a frame of their
// own (dts and pts advanced by the samples kept), or nullopt when every frame starts before
// `at` or the data is not whole ADTS frames (kept as it is); a frame none of whose ADTS frames
// starts before `at` is returned whole (`frame` is then left without data). The times are
// rounded up to the 90 kHz tick at or after the sample, so that rescaling them to the sample
// rate (rounding down, as the fMP4 writer does) finds that sample exactly, at 44.1 kHz too.
int64_t AdtsEnd(const Frame& frame);
std::optional<Frame> SplitAdtsAt(Frame& frame, int64_t at);

}  // namespace meshwork::media
