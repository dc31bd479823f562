// Fuzzes TsDemuxer (S-3) with arbitrary bytes, fed in chunks whose sizes come from the
// input's first bytes (the whole input, those bytes included, is the stream).
//
// Properties (a violation traps):
//  * every input byte is accounted for: after Flush, packets × 188 + bytes_skipped equals
//    the input size;
//  * every emitted frame has data, a known codec and a PID announced by on_track first;
//    announced video tracks have a size and a codec string;
//  * frames are counted, memory stays bounded (kMaxPesBytes), and Reset gives a demuxer
//    that behaves like a new one;
//  * the chunking does not matter: the input read in chunks and in one piece gives the same
//    frames (timestamps, flags, bytes) and the same counts.

#include <cstddef>
#include <cstdint>
#include <set>
#include <span>

#include "streamer/media/codec_parsers.h"
#include "streamer/media/ts_demuxer.h"

namespace {

using meshwork::media::Codec;
using meshwork::media::Frame;
using meshwork::media::TrackInfo;
using meshwork::media::TsDemuxer;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

struct Observer {
  std::set<uint16_t> announced;
  uint64_t frames = 0;
  uint64_t digest = 14695981039346656037u;  // FNV-1a over the frames since the last reset

  void Mix(const void* p, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      digest = (digest ^ static_cast<const uint8_t*>(p)[i]) * 1099511628211u;
    }
  }

  TsDemuxer::Callbacks Callbacks() {
    return {[this](const TrackInfo& t) {
              Check(t.pid < 0x2000);
              Check(t.is_video() || t.is_audio());
              if (t.is_video()) {
                Check(t.width > 0 && t.height > 0 && t.frame_rate >= 0);
                Check(t.codec_string.rfind(t.codec == Codec::kH264 ? "avc1." : "hvc1.", 0) == 0);
                Check(!t.parameter_sets.empty());
                Check(t.parameter_sets.size() <= meshwork::media::kMaxParameterSets);
              } else {
                Check(t.sample_rate > 0 && t.audio_specific_config.size() == 2);
                Check(t.codec_string.rfind("mp4a.40.", 0) == 0);
              }
              announced.insert(t.pid);
            },
            [this](Frame&& f) {
              Check(f.data != nullptr);
              Check(f.data->size() <= TsDemuxer::kMaxPesBytes);
              Check(f.codec != Codec::kUnknown);
              Check(announced.count(f.pid) == 1);
              if (f.codec == Codec::kAac) Check(f.keyframe && f.pts == f.dts);
              ++frames;
              const int64_t fields[] = {f.pid, f.pts, f.dts, f.keyframe ? 1 : 0};
              Mix(fields, sizeof(fields));
              Mix(f.data->data(), f.data->size());
            }};
  }
};

void Run(TsDemuxer& demuxer, const uint8_t* data, size_t size, bool chunked) {
  const size_t nsizes = size < 4 ? size : 4;
  size_t off = 0;
  size_t k = 0;
  while (off < size) {
    size_t n = chunked ? 1 + size_t{data[k++ % nsizes]} * 16 : size;
    if (n > size - off) n = size - off;
    demuxer.Feed(std::span<const uint8_t>(data + off, n));
    off += n;
  }
  demuxer.Flush();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Observer observer;
  TsDemuxer demuxer(observer.Callbacks());
  Run(demuxer, data, size, /*chunked=*/true);
  const TsDemuxer::Stats first = demuxer.stats();
  Check(first.packets * 188 + first.bytes_skipped == size);
  Check(first.frames == observer.frames);
  Check(first.tei_dropped <= first.packets);

  // After Reset the same input in one piece: the stats keep counting from where they were.
  const uint64_t chunked_digest = observer.digest;
  observer.digest = 14695981039346656037u;
  observer.announced.clear();
  demuxer.Reset();
  Run(demuxer, data, size, /*chunked=*/false);
  const TsDemuxer::Stats& second = demuxer.stats();
  Check((second.packets - first.packets) * 188 + (second.bytes_skipped - first.bytes_skipped) ==
        size);
  Check(second.frames == observer.frames);
  Check(observer.digest == chunked_digest);
  Check(second.packets - first.packets == first.packets);
  Check(second.bytes_skipped - first.bytes_skipped == first.bytes_skipped);
  Check(second.frames - first.frames == first.frames);
  Check(second.resyncs - first.resyncs == first.resyncs);
  Check(second.cc_errors - first.cc_errors == first.cc_errors);
  Check(second.pes_dropped - first.pes_dropped == first.pes_dropped);
  Check(second.tei_dropped - first.tei_dropped == first.tei_dropped);
  return 0;
}
