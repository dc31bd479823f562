// MPEG-TS muxer for HLS segments (S-8): each segment starts with PAT and PMT; video PES with
// PCR on the video PID; audio PES; continuity counters continue across the calls of one
// muxer. Output is deterministic: the same frames give the same bytes.
//
// The PCR (on the video PID, or on the audio PID when there is no video) is sent in the
// first packet of every PES of that PID, 100 ms ahead of the frame's DTS; keyframes carry
// random_access_indicator. Video PES have PES_packet_length 0, audio PES their length. H.264
// access units get an AUD (00 00 00 01 09 F0) when they do not start with one. Timestamps
// are written modulo 2^33.
//
// Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "streamer/media/frame.h"

namespace meshwork::media {

// CRC-32/MPEG-2 (polynomial 0x04C11DB7, initial value 0xFFFFFFFF, no reflection, no final
// XOR), as used by PSI sections. A section followed by its CRC checks to 0.
uint32_t Crc32Mpeg2(const uint8_t* data, size_t size);

class TsMuxer {
 public:
  // `tracks`: at most one video and one audio track are muxed (video PID 0x100, audio
  // PID 0x101, PMT PID 0x1000, program 1).
  explicit TsMuxer(const std::vector<TrackInfo>& tracks);

  // Appends PAT + PMT to `out` (call at each segment start).
  void WriteTables(std::string& out);
  // Appends the frame as one PES (PCR on video frames) to `out`. Frames of tracks not
  // given to the constructor are ignored.
  void WriteFrame(const Frame& frame, std::string& out);

 private:
  struct Track {
    uint16_t source_pid;
    uint16_t pid;
    uint8_t stream_type;
    uint8_t stream_id;
    uint8_t cc = 0;
    Codec codec = Codec::kUnknown;
  };
  // Appends one PSI section (pointer field, section, 0xFF padding) as a packet on `pid`.
  void WriteSection(uint16_t pid, uint8_t& cc, const std::string& section, std::string& out);

  std::vector<Track> tracks_;
  uint16_t pcr_pid_ = 0x1fff;
  uint8_t pat_cc_ = 0;
  uint8_t pmt_cc_ = 0;
};

}  // namespace meshwork::media
