// The pieces of an fMP4 (CMAF) init segment and fragment that Fmp4Writer assembles: a
// big-endian box writer, the codec configuration boxes (avcC and hvcC of ISO/IEC 14496-15,
// esds of ISO/IEC 14496-1/-14), the movie matrix and the sample-data conversions. Pure
// functions; std only (the media core also builds in the fuzz configuration).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "streamer/media/frame.h"

namespace meshwork::media::mp4_boxes {

// Big-endian byte writer with nested boxes whose sizes are patched when they end.
class Writer {
 public:
  void U8(uint32_t v) { out_.push_back(static_cast<char>(v & 0xff)); }
  void U16(uint32_t v) {
    U8(v >> 8);
    U8(v);
  }
  void U24(uint32_t v) {
    U8(v >> 16);
    U16(v);
  }
  void U32(uint32_t v) {
    U16(v >> 16);
    U16(v);
  }
  void U64(uint64_t v) {
    U32(static_cast<uint32_t>(v >> 32));
    U32(static_cast<uint32_t>(v));
  }
  void Zeros(size_t n) { out_.append(n, '\0'); }
  void Bytes(std::string_view b) { out_.append(b); }
  // Room for `n` more bytes, so that a box of known size is written without regrowing.
  void Reserve(size_t n) { out_.reserve(out_.size() + n); }
  void FourCc(const char (&cc)[5]) { out_.append(cc, 4); }

  void Begin(const char (&type)[5]) {
    open_.push_back(out_.size());
    U32(0);
    FourCc(type);
  }
  void BeginFull(const char (&type)[5], uint8_t version, uint32_t flags) {
    Begin(type);
    U8(version);
    U24(flags);
  }
  void End() {
    size_t start = open_.back();
    open_.pop_back();
    PatchU32(start, static_cast<uint32_t>(out_.size() - start));
  }

  size_t size() const { return out_.size(); }
  void PatchU32(size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) out_[at + i] = static_cast<char>((v >> (24 - 8 * i)) & 0xff);
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
  std::vector<size_t> open_;
};

// avcC (AVCDecoderConfigurationRecord) from the track's SPS and PPS.
void WriteAvcC(Writer& w, const TrackInfo& info);
// hvcC (HEVCDecoderConfigurationRecord) from the track's VPS, SPS and PPS.
void WriteHvcC(Writer& w, const TrackInfo& info);
// esds with the AudioSpecificConfig of the track's AAC.
void WriteEsds(Writer& w, const TrackInfo& info, uint32_t track_id);
// The unity matrix of mvhd and tkhd.
void WriteMatrix(Writer& w);
// 90 kHz → `timescale`, exact (floor), without overflow.
int64_t Rescale(int64_t t90k, uint32_t timescale);
uint32_t ClampU32(int64_t v);
int32_t ClampI32(int64_t v);

}  // namespace meshwork::media::mp4_boxes
