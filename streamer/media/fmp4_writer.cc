// fMP4 / CMAF writer: box layouts of ISO/IEC 14496-12 (ISOBMFF) and 14496-15 (avcC, hvcC),
// esds of ISO/IEC 14496-1/-14.
#include "streamer/media/fmp4_writer.h"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <string_view>

#include "streamer/media/codec_parsers.h"
#include "streamer/media/mp4_boxes.h"

namespace meshwork::media {
namespace {

using namespace mp4_boxes;  // NOLINT: the box helpers of this writer, split out for size

constexpr int64_t kVideoTimescale = 90000;
constexpr uint32_t kAacFrameSamples = 1024;
constexpr uint32_t kSyncSampleFlags = 0x02000000;     // depends_on = 2 (no other samples)
constexpr uint32_t kNonSyncSampleFlags = 0x01010000;  // depends_on = 1, is_non_sync_sample

}  // namespace

// One sample of a fragment, in its track's timescale.
// A sample's bytes are views into its frame (alive for the Fragment call) and are written
// into the mdat once, there (P-7: no intermediate copy): video NAL units each behind a 4-byte
// length, audio one raw AAC frame.
struct Fmp4Writer::Sample {
  int64_t dts = 0;
  int64_t cto = 0;
  uint32_t duration = 0;
  uint32_t flags = 0;
  std::vector<std::string_view> nals;  // video: written length-prefixed
  std::string_view raw;                // audio: written as it is
  size_t size = 0;                     // bytes in the mdat
};

Fmp4Writer::Fmp4Writer(const std::vector<TrackInfo>& tracks) {
  bool have_video = false;
  bool have_audio = false;
  for (const TrackInfo& info : tracks) {
    if (info.is_video() && !have_video) {
      have_video = true;
    } else if (info.is_audio() && !have_audio) {
      have_audio = true;
    } else {
      continue;
    }
    Track t;
    t.info = info;
    t.id = static_cast<uint32_t>(tracks_.size() + 1);
    if (info.is_video()) {
      t.timescale = kVideoTimescale;
    } else {
      t.timescale = info.sample_rate > 0 ? static_cast<uint32_t>(info.sample_rate) : 90000;
    }
    tracks_.push_back(std::move(t));
  }
}

uint32_t Fmp4Writer::Timescale(uint16_t pid) const {
  for (const Track& t : tracks_) {
    if (t.info.pid == pid) return t.timescale;
  }
  return 0;
}

std::string Fmp4Writer::InitSegment() const {
  Writer w;
  w.Begin("ftyp");
  w.FourCc("iso6");
  w.U32(0);  // minor_version
  w.FourCc("iso6");
  w.FourCc("cmfc");
  w.FourCc("dash");
  w.FourCc("mp41");
  w.End();

  w.Begin("moov");
  w.BeginFull("mvhd", 0, 0);
  w.U32(0);           // creation_time
  w.U32(0);           // modification_time
  w.U32(1000);        // timescale
  w.U32(0);           // duration
  w.U32(0x00010000);  // rate 1.0
  w.U16(0x0100);      // volume 1.0
  w.Zeros(2 + 8);     // reserved
  WriteMatrix(w);
  w.Zeros(24);                                       // pre_defined
  w.U32(static_cast<uint32_t>(tracks_.size() + 1));  // next_track_ID
  w.End();

  for (const Track& t : tracks_) {
    const bool video = t.info.is_video();
    w.Begin("trak");
    w.BeginFull("tkhd", 0, 3);  // enabled, in movie
    w.U32(0);                   // creation_time
    w.U32(0);                   // modification_time
    w.U32(t.id);
    w.U32(0);  // reserved
    w.U32(0);  // duration
    w.Zeros(8);
    w.U16(0);                   // layer
    w.U16(0);                   // alternate_group
    w.U16(video ? 0 : 0x0100);  // volume
    w.U16(0);
    WriteMatrix(w);
    w.U32(video ? static_cast<uint32_t>(std::max(t.info.width, 0)) << 16 : 0);
    w.U32(video ? static_cast<uint32_t>(std::max(t.info.height, 0)) << 16 : 0);
    w.End();

    w.Begin("mdia");
    w.BeginFull("mdhd", 0, 0);
    w.U32(0);
    w.U32(0);
    w.U32(t.timescale);
    w.U32(0);       // duration
    w.U16(0x55c4);  // language "und"
    w.U16(0);
    w.End();
    w.BeginFull("hdlr", 0, 0);
    w.U32(0);  // pre_defined
    if (video) {
      w.FourCc("vide");
    } else {
      w.FourCc("soun");
    }
    w.Zeros(12);
    w.Bytes(video ? std::string_view("VideoHandler", 13) : std::string_view("SoundHandler", 13));
    w.End();

    w.Begin("minf");
    if (video) {
      w.BeginFull("vmhd", 0, 1);
      w.Zeros(8);  // graphicsmode, opcolor
    } else {
      w.BeginFull("smhd", 0, 0);
      w.Zeros(4);  // balance, reserved
    }
    w.End();
    w.Begin("dinf");
    w.BeginFull("dref", 0, 0);
    w.U32(1);
    w.BeginFull("url ", 0, 1);  // self-contained
    w.End();
    w.End();
    w.End();

    w.Begin("stbl");
    w.BeginFull("stsd", 0, 0);
    w.U32(1);
    if (video) {
      const bool hevc = t.info.codec == Codec::kHevc;
      if (hevc) {
        w.Begin("hvc1");
      } else {
        w.Begin("avc1");
      }
      w.Zeros(6);
      w.U16(1);     // data_reference_index
      w.Zeros(16);  // pre_defined, reserved
      w.U16(static_cast<uint32_t>(std::clamp(t.info.width, 0, 0xffff)));
      w.U16(static_cast<uint32_t>(std::clamp(t.info.height, 0, 0xffff)));
      w.U32(0x00480000);  // 72 dpi
      w.U32(0x00480000);
      w.U32(0);       // reserved
      w.U16(1);       // frame_count
      w.Zeros(32);    // compressorname
      w.U16(0x0018);  // depth
      w.U16(0xffff);  // pre_defined -1
      if (hevc) {
        WriteHvcC(w, t.info);
      } else {
        WriteAvcC(w, t.info);
      }
      w.End();
    } else {
      w.Begin("mp4a");
      w.Zeros(6);
      w.U16(1);  // data_reference_index
      w.Zeros(8);
      w.U16(t.info.channels > 0 ? static_cast<uint32_t>(t.info.channels) : 2);
      w.U16(16);  // samplesize
      w.U16(0);   // pre_defined
      w.U16(0);   // reserved
      w.U32(t.timescale <= 0xffff ? t.timescale << 16 : 0);
      WriteEsds(w, t.info, t.id);
      w.End();
    }
    w.End();  // stsd
    // Empty sample tables: the samples are in the fragments.
    w.BeginFull("stts", 0, 0);
    w.U32(0);  // entry_count
    w.End();
    w.BeginFull("stsc", 0, 0);
    w.U32(0);
    w.End();
    w.BeginFull("stsz", 0, 0);
    w.U32(0);  // sample_size
    w.U32(0);  // sample_count
    w.End();
    w.BeginFull("stco", 0, 0);
    w.U32(0);
    w.End();
    w.End();  // stbl
    w.End();  // minf
    w.End();  // mdia
    w.End();  // trak
  }

  w.Begin("mvex");
  for (const Track& t : tracks_) {
    w.BeginFull("trex", 0, 0);
    w.U32(t.id);
    w.U32(1);  // default_sample_description_index
    w.U32(0);  // default_sample_duration
    w.U32(0);  // default_sample_size
    w.U32(0);  // default_sample_flags
    w.End();
  }
  w.End();
  w.End();  // moov
  return w.Take();
}

std::vector<Fmp4Writer::Sample> Fmp4Writer::VideoSamples(Track& track,
                                                         const std::vector<const Frame*>& frames,
                                                         std::optional<int64_t> end_dts) {
  const bool hevc = track.info.codec == Codec::kHevc;
  std::vector<Sample> samples;
  samples.reserve(frames.size());
  for (const Frame* f : frames) {
    Sample s;
    if (f->data) {
      // Annex B → 4-byte length prefixes, without AUD and parameter sets (they are in the
      // init segment).
      auto take = [&](std::string_view nal) {
        const int t = hevc ? HevcNalType(nal) : H264NalType(nal);
        if (hevc ? (t >= 32 && t <= 35) : (t == 7 || t == 8 || t == 9)) return;
        s.nals.push_back(nal);
        s.size += 4 + nal.size();
      };
      const std::string_view data(*f->data);
      if (f->nal_count > 0) {  // framed by the source (P-7: no search)
        for (size_t i = 0; i < f->nal_count; ++i) {
          take(data.substr(f->nals[i].offset, f->nals[i].size));
        }
      } else {
        size_t pos = 0;
        std::string_view nal;
        while (NextAnnexBNal(data, &pos, &nal)) take(nal);
      }
    }
    if (s.size == 0) continue;  // its time goes to the previous sample
    s.dts = f->dts;
    s.cto = f->pts - f->dts;
    s.flags = f->keyframe ? kSyncSampleFlags : kNonSyncSampleFlags;
    samples.push_back(std::move(s));
  }
  for (size_t i = 0; i + 1 < samples.size(); ++i) {
    samples[i].duration = ClampU32(samples[i + 1].dts - samples[i].dts);
  }
  if (!samples.empty()) {
    Sample& last = samples.back();
    int64_t d = 0;
    if (end_dts && *end_dts > last.dts) {
      d = *end_dts - last.dts;
    } else if (samples.size() >= 2) {
      d = samples[samples.size() - 2].duration;
    } else if (track.last_duration > 0) {
      d = track.last_duration;
    } else if (track.info.frame_rate > 0) {
      d = static_cast<int64_t>(kVideoTimescale / track.info.frame_rate + 0.5);
    } else {
      d = kVideoTimescale / 25;
    }
    last.duration = ClampU32(d);
    if (last.duration > 0) track.last_duration = last.duration;
  }
  return samples;
}

std::vector<Fmp4Writer::Sample> Fmp4Writer::AudioSamples(Track& track,
                                                         const std::vector<const Frame*>& frames,
                                                         std::optional<int64_t> end_dts) {
  const uint32_t ts = track.timescale;
  // A gap longer than this between the end of a PES's frames and the next PES (a
  // discontinuity in the source) extends the last sample so the timeline keeps the gap.
  const int64_t slack = kAacFrameSamples / 2;
  std::vector<Sample> samples;
  int64_t next_start = 0;
  for (size_t fi = 0; fi < frames.size(); ++fi) {
    const Frame* f = frames[fi];
    if (!f->data) continue;
    int64_t start = Rescale(f->dts, ts);
    if (!samples.empty() && start - next_start > slack) {
      samples.back().duration = ClampU32(start - samples.back().dts);
    }
    std::string_view d(*f->data);
    size_t off = 0;
    int64_t t = start;
    while (off < d.size()) {
      auto h = ParseAdtsHeader({reinterpret_cast<const uint8_t*>(d.data()) + off, d.size() - off});
      if (!h || h->frame_bytes > d.size() - off) break;
      Sample s;
      s.dts = t;
      s.duration = kAacFrameSamples;
      s.flags = kSyncSampleFlags;
      s.raw = d.substr(off + h->header_bytes, h->frame_bytes - h->header_bytes);
      s.size = s.raw.size();
      samples.push_back(std::move(s));
      off += h->frame_bytes;
      t += kAacFrameSamples;
    }
    if (t != start) next_start = t;
  }
  if (!samples.empty() && end_dts) {
    int64_t end = Rescale(*end_dts, ts);
    if (end - next_start > slack) samples.back().duration = ClampU32(end - samples.back().dts);
  }
  if (!samples.empty()) track.last_duration = samples.back().duration;
  return samples;
}

std::string Fmp4Writer::Fragment(std::span<const Frame> frames, uint32_t sequence_number,
                                 const std::map<uint16_t, int64_t>& end_dts) {
  struct Traf {
    const Track* track;
    std::vector<Sample> samples;
    size_t data_offset_at = 0;  // position of the trun data_offset field in the output
  };
  std::vector<Traf> trafs;
  for (Track& t : tracks_) {
    std::vector<const Frame*> own;
    for (const Frame& f : frames) {
      if (f.pid == t.info.pid) own.push_back(&f);
    }
    if (own.empty()) continue;
    std::optional<int64_t> end;
    if (auto it = end_dts.find(t.info.pid); it != end_dts.end()) end = it->second;
    std::vector<Sample> samples =
        t.info.is_video() ? VideoSamples(t, own, end) : AudioSamples(t, own, end);
    if (samples.empty()) continue;
    trafs.push_back({&t, std::move(samples)});
  }

  size_t payload = 0;
  size_t sample_count = 0;
  for (const Traf& traf : trafs) {
    for (const Sample& s : traf.samples) payload += s.size;
    sample_count += traf.samples.size();
  }
  Writer w;
  // moof: mfhd, and per track traf/tfhd/tfdt/trun headers (well under 256 bytes) and 16 bytes
  // per sample; then the mdat (P-7: written once, without regrowing the string).
  w.Reserve(64 + 256 * trafs.size() + 16 * sample_count + 8 + payload);
  const size_t moof_start = w.size();
  w.Begin("moof");
  w.BeginFull("mfhd", 0, 0);
  w.U32(sequence_number);
  w.End();
  for (Traf& traf : trafs) {
    w.Begin("traf");
    w.BeginFull("tfhd", 0, 0x020000);  // default-base-is-moof
    w.U32(traf.track->id);
    w.End();
    w.BeginFull("tfdt", 1, 0);
    w.U64(static_cast<uint64_t>(std::max<int64_t>(traf.samples.front().dts, 0)));
    w.End();
    // data-offset, sample-duration, sample-size, sample-flags, composition-time-offset.
    w.BeginFull("trun", 1, 0x000f01);
    w.U32(static_cast<uint32_t>(traf.samples.size()));
    traf.data_offset_at = w.size();
    w.U32(0);
    for (const Sample& s : traf.samples) {
      w.U32(s.duration);
      w.U32(static_cast<uint32_t>(s.size));
      w.U32(s.flags);
      w.U32(static_cast<uint32_t>(ClampI32(s.cto)));
    }
    w.End();
    w.End();
  }
  w.End();  // moof

  const size_t mdat_header = 8;
  size_t offset = w.size() - moof_start + mdat_header;
  for (Traf& traf : trafs) {
    w.PatchU32(traf.data_offset_at, static_cast<uint32_t>(offset));
    for (const Sample& s : traf.samples) offset += s.size;
  }
  w.U32(static_cast<uint32_t>(mdat_header + payload));
  w.FourCc("mdat");
  for (const Traf& traf : trafs) {
    for (const Sample& s : traf.samples) {
      for (std::string_view nal : s.nals) {
        w.U32(static_cast<uint32_t>(nal.size()));
        w.Bytes(nal);
      }
      w.Bytes(s.raw);
    }
  }
  return w.Take();
}

}  // namespace meshwork::media
