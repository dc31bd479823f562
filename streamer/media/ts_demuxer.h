// MPEG-TS demuxer (S-3): PAT/PMT (program changes mid-stream), PES reassembly, H.264/HEVC
// and AAC (ADTS) elementary streams, 33-bit PTS/DTS unwrapping, continuity-counter errors
// counted, packets with transport_error_indicator dropped. Garbage, truncated packets and
// lost sync never crash or stall it: it resynchronises on the next 0x47 that starts a run of
// packets. Memory is bounded: a PES larger than kMaxPesBytes is dropped.
//
// Details: sync is (re)acquired on a 0x47 whose successor 188 bytes later is 0x47 too (at
// the end of the input, after Flush, a lone packet is accepted); a PES that loses data to a
// continuity gap is dropped, not emitted damaged; video frames are emitted once their track
// has been announced (from the first parseable SPS: earlier frames cannot be decoded), audio
// frames once an ADTS header was seen; an ADTS frame split across PES packets is carried over
// to the next PES. Callbacks run inside Feed/Flush and must not call Reset.
//
// A packet is decided on (handled, or skipped as damage) only once the 376 bytes from its
// start are in (its successor's sync byte, a restart inside it), or at Flush: the same input
// gives the same frames and counts however it is cut into reads, and a packet at the end of a
// read waits for the next read (one datagram of a UDP source).
//
// Not thread-safe: one demuxer per source, fed from one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "streamer/media/frame.h"

namespace meshwork::media {

class TsDemuxer {
 public:
  static constexpr size_t kMaxPesBytes = 8 * 1024 * 1024;

  struct Callbacks {
    // A track appeared or changed (first SPS/ADTS header seen, resolution change, PMT change).
    std::function<void(const TrackInfo&)> on_track;
    std::function<void(Frame&&)> on_frame;
  };
  struct Stats {
    uint64_t packets = 0;
    uint64_t cc_errors = 0;
    uint64_t tei_dropped = 0;
    uint64_t resyncs = 0;
    uint64_t bytes_skipped = 0;
    uint64_t pes_dropped = 0;  // oversized or malformed
    uint64_t frames = 0;
  };

  explicit TsDemuxer(Callbacks callbacks);
  ~TsDemuxer();

  // Any chunking: bytes may split packets anywhere.
  void Feed(std::span<const uint8_t> bytes);
  // Emits what is buffered (the last PES of each stream), e.g. at the end of an input.
  void Flush();
  // Forgets all state (PIDs, timestamps, buffered bytes), as for a new, unrelated source.
  // The statistics keep counting.
  void Reset();

  const Stats& stats() const { return stats_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  Stats stats_;
  Callbacks callbacks_;
};

}  // namespace meshwork::media
