// fMP4 / CMAF writer: box layouts of ISO/IEC 14496-12 (ISOBMFF) and 14496-15 (avcC, hvcC),
// esds of ISO/IEC 14496-1/-14.
#include "streamer/media/fmp4_writer.h"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <string_view>

#include "streamer/media/bit_reader.h"
#include "streamer/media/codec_parsers.h"

namespace meshwork::media {
namespace {

constexpr int64_t kVideoTimescale = 90000;
constexpr uint32_t kAacFrameSamples = 1024;
constexpr uint32_t kSyncSampleFlags = 0x02000000;     // depends_on = 2 (no other samples)
constexpr uint32_t kNonSyncSampleFlags = 0x01010000;  // depends_on = 1, is_non_sync_sample

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

struct ChromaInfo {
  uint32_t chroma_format = 1;
  uint32_t bit_depth_luma_minus8 = 0;
  uint32_t bit_depth_chroma_minus8 = 0;
};

// chroma_format_idc and bit depths of a high-profile H.264 SPS (NAL header included).
std::optional<ChromaInfo> H264Chroma(std::string_view sps) {
  std::string rbsp = UnescapeRbsp(sps);
  if (rbsp.size() < 5) return std::nullopt;
  BitReader r(std::string_view(rbsp).substr(4));
  ChromaInfo c;
  r.Ue();  // seq_parameter_set_id
  c.chroma_format = r.Ue();
  if (c.chroma_format == 3) r.Bits(1);  // separate_colour_plane_flag
  c.bit_depth_luma_minus8 = r.Ue();
  c.bit_depth_chroma_minus8 = r.Ue();
  if (r.failed() || c.chroma_format > 3 || c.bit_depth_luma_minus8 > 7 ||
      c.bit_depth_chroma_minus8 > 7) {
    return std::nullopt;
  }
  return c;
}

struct HevcSpsFields {
  // profile_space(2) tier(1) profile_idc(5), compatibility flags(32), constraint flags(48),
  // level_idc(8): the 12 bytes of general_profile_tier_level.
  std::string general_ptl;
  uint32_t max_sub_layers_minus1 = 0;
  bool temporal_id_nesting = false;
  ChromaInfo chroma;
};

std::optional<HevcSpsFields> ParseHevcSpsFields(std::string_view sps) {
  std::string rbsp = UnescapeRbsp(sps);
  // 2 bytes NAL header, 1 byte vps id/max_sub_layers/nesting, 12 bytes general PTL.
  if (rbsp.size() < 15) return std::nullopt;
  HevcSpsFields f;
  uint8_t b = static_cast<uint8_t>(rbsp[2]);
  f.max_sub_layers_minus1 = (b >> 1) & 0x07;
  f.temporal_id_nesting = b & 0x01;
  f.general_ptl = rbsp.substr(3, 12);
  // The rest is only for chroma format / bit depth; defaults (4:2:0, 8 bit) if it fails.
  BitReader r(std::string_view(rbsp).substr(15));
  const uint32_t n = f.max_sub_layers_minus1;
  std::array<bool, 8> profile_present{};
  std::array<bool, 8> level_present{};
  for (uint32_t i = 0; i < n; ++i) {
    profile_present[i] = r.Bits(1);
    level_present[i] = r.Bits(1);
  }
  if (n > 0) {
    for (uint32_t i = n; i < 8; ++i) r.Bits(2);
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (profile_present[i]) r.Skip(88);
    if (level_present[i]) r.Skip(8);
  }
  ChromaInfo c;
  r.Ue();  // sps_seq_parameter_set_id
  c.chroma_format = r.Ue();
  if (c.chroma_format == 3) r.Bits(1);
  r.Ue();  // pic_width_in_luma_samples
  r.Ue();  // pic_height_in_luma_samples
  if (r.Bits(1)) {
    for (int i = 0; i < 4; ++i) r.Ue();  // conformance window offsets
  }
  c.bit_depth_luma_minus8 = r.Ue();
  c.bit_depth_chroma_minus8 = r.Ue();
  if (!r.failed() && c.chroma_format <= 3 && c.bit_depth_luma_minus8 <= 7 &&
      c.bit_depth_chroma_minus8 <= 7) {
    f.chroma = c;
  }
  return f;
}

std::vector<std::string_view> NalsOfType(const TrackInfo& info, int type) {
  std::vector<std::string_view> out;
  for (const std::string& ps : info.parameter_sets) {
    int t = info.codec == Codec::kHevc ? HevcNalType(ps) : H264NalType(ps);
    if (t == type) out.emplace_back(ps);
  }
  return out;
}

void WriteAvcC(Writer& w, const TrackInfo& info) {
  auto sps = NalsOfType(info, 7);
  auto pps = NalsOfType(info, 8);
  w.Begin("avcC");
  w.U8(1);  // configurationVersion
  uint8_t profile = 0;
  if (!sps.empty() && sps[0].size() >= 4) {
    profile = static_cast<uint8_t>(sps[0][1]);
    w.U8(profile);
    w.U8(static_cast<uint8_t>(sps[0][2]));
    w.U8(static_cast<uint8_t>(sps[0][3]));
  } else {
    w.Zeros(3);
  }
  w.U8(0xfc | 3);  // reserved + lengthSizeMinusOne
  size_t nsps = std::min<size_t>(sps.size(), 31);
  w.U8(0xe0 | static_cast<uint32_t>(nsps));
  for (size_t i = 0; i < nsps; ++i) {
    w.U16(static_cast<uint32_t>(sps[i].size()));
    w.Bytes(sps[i]);
  }
  size_t npps = std::min<size_t>(pps.size(), 255);
  w.U8(static_cast<uint32_t>(npps));
  for (size_t i = 0; i < npps; ++i) {
    w.U16(static_cast<uint32_t>(pps[i].size()));
    w.Bytes(pps[i]);
  }
  if (!sps.empty() && H264ProfileHasChromaInfo(profile)) {
    if (auto c = H264Chroma(sps[0])) {
      w.U8(0xfc | c->chroma_format);
      w.U8(0xf8 | c->bit_depth_luma_minus8);
      w.U8(0xf8 | c->bit_depth_chroma_minus8);
      w.U8(0);  // numOfSequenceParameterSetExt
    }
  }
  w.End();
}

void WriteHvcC(Writer& w, const TrackInfo& info) {
  auto vps = NalsOfType(info, 32);
  auto sps = NalsOfType(info, 33);
  auto pps = NalsOfType(info, 34);
  std::optional<HevcSpsFields> f;
  if (!sps.empty()) f = ParseHevcSpsFields(sps[0]);
  if (!f) {
    f.emplace();
    f->general_ptl.assign(12, '\0');
  }
  w.Begin("hvcC");
  w.U8(1);  // configurationVersion
  w.Bytes(f->general_ptl);
  w.U16(0xf000);                         // reserved + min_spatial_segmentation_idc 0
  w.U8(0xfc);                            // reserved + parallelismType 0 (unknown)
  w.U8(0xfc | f->chroma.chroma_format);  // reserved + chromaFormat
  w.U8(0xf8 | f->chroma.bit_depth_luma_minus8);
  w.U8(0xf8 | f->chroma.bit_depth_chroma_minus8);
  w.U16(0);  // avgFrameRate unknown
  // constantFrameRate 0, numTemporalLayers, temporalIdNested, lengthSizeMinusOne 3.
  w.U8(((f->max_sub_layers_minus1 + 1) << 3) | (f->temporal_id_nesting ? 0x04 : 0) | 3);
  std::array<std::pair<int, const std::vector<std::string_view>*>, 3> arrays{
      {{32, &vps}, {33, &sps}, {34, &pps}}};
  uint32_t count = 0;
  for (const auto& [type, nals] : arrays) count += nals->empty() ? 0 : 1;
  w.U8(count);
  for (const auto& [type, nals] : arrays) {
    if (nals->empty()) continue;
    w.U8(0x80 | static_cast<uint32_t>(type));  // array_completeness 1
    size_t n = std::min<size_t>(nals->size(), 0xffff);
    w.U16(static_cast<uint32_t>(n));
    for (size_t i = 0; i < n; ++i) {
      w.U16(static_cast<uint32_t>((*nals)[i].size()));
      w.Bytes((*nals)[i]);
    }
  }
  w.End();
}

// An MPEG-4 descriptor: tag + expandable size (4 bytes, as is customary) + body.
void Descriptor(Writer& w, uint8_t tag, const std::string& body) {
  w.U8(tag);
  size_t n = body.size();
  w.U8(0x80 | ((n >> 21) & 0x7f));
  w.U8(0x80 | ((n >> 14) & 0x7f));
  w.U8(0x80 | ((n >> 7) & 0x7f));
  w.U8(n & 0x7f);
  w.Bytes(body);
}

// The AudioSpecificConfig of the track, or one built from its ADTS-derived fields.
std::string AudioConfig(const TrackInfo& info) {
  if (!info.audio_specific_config.empty()) return info.audio_specific_config;
  static constexpr std::array<int, 13> kRates{96000, 88200, 64000, 48000, 44100, 32000, 24000,
                                              22050, 16000, 12000, 11025, 8000,  7350};
  AdtsHeader h;
  h.object_type = info.aac_object_type > 0 ? info.aac_object_type : 2;
  h.sampling_index = 15;
  for (size_t i = 0; i < kRates.size(); ++i) {
    if (kRates[i] == info.sample_rate) h.sampling_index = static_cast<int>(i);
  }
  if (h.sampling_index == 15) return {};  // explicit rates are not supported here
  h.channels = info.channels;
  return h.AudioSpecificConfig();
}

void WriteEsds(Writer& w, const TrackInfo& info, uint32_t track_id) {
  Writer dsi;
  Descriptor(dsi, 0x05, AudioConfig(info));
  Writer dcd;
  dcd.U8(0x40);             // objectTypeIndication: MPEG-4 Audio
  dcd.U8((0x05 << 2) | 1);  // streamType audio, upStream 0, reserved 1
  dcd.U24(0);               // bufferSizeDB
  dcd.U32(0);               // maxBitrate
  dcd.U32(0);               // avgBitrate
  dcd.Bytes(dsi.Take());
  Writer sl;
  sl.U8(0x02);  // SLConfigDescriptor predefined: MP4
  Writer es;
  es.U16(track_id);  // ES_ID
  es.U8(0);          // no dependency, URL or OCR stream
  Descriptor(es, 0x04, dcd.Take());
  Descriptor(es, 0x06, sl.Take());
  w.BeginFull("esds", 0, 0);
  Descriptor(w, 0x03, es.Take());
  w.End();
}

void WriteMatrix(Writer& w) {
  for (uint32_t v : {0x00010000u, 0u, 0u, 0u, 0x00010000u, 0u, 0u, 0u, 0x40000000u}) w.U32(v);
}

// floor(a / b) for b > 0.
__int128 FloorDiv(__int128 a, __int128 b) {
  __int128 q = a / b;
  if ((a % b != 0) && (a < 0)) --q;
  return q;
}

// 90 kHz → `timescale`, exact (floor), without overflow.
int64_t Rescale(int64_t t90k, uint32_t timescale) {
  if (timescale == kVideoTimescale) return t90k;
  return static_cast<int64_t>(FloorDiv(static_cast<__int128>(t90k) * timescale, kVideoTimescale));
}

uint32_t ClampU32(int64_t v) {
  return static_cast<uint32_t>(std::clamp<int64_t>(v, 0, std::numeric_limits<uint32_t>::max()));
}

int32_t ClampI32(int64_t v) {
  return static_cast<int32_t>(std::clamp<int64_t>(v, std::numeric_limits<int32_t>::min(),
                                                  std::numeric_limits<int32_t>::max()));
}

// Annex B → 4-byte length prefixes, without AUD and parameter sets.
std::string ToLengthPrefixed(std::string_view annexb, bool hevc) {
  std::string out;
  out.reserve(annexb.size() + 16);
  for (std::string_view nal : SplitAnnexB(annexb)) {
    if (nal.empty()) continue;
    if (hevc) {
      int t = HevcNalType(nal);
      if (t >= 32 && t <= 35) continue;  // VPS, SPS, PPS, AUD
    } else {
      int t = H264NalType(nal);
      if (t == 7 || t == 8 || t == 9) continue;  // SPS, PPS, AUD
    }
    uint32_t n = static_cast<uint32_t>(nal.size());
    for (int i = 3; i >= 0; --i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
    out.append(nal);
  }
  return out;
}

}  // namespace

// One sample of a fragment, in its track's timescale.
struct Fmp4Writer::Sample {
  int64_t dts = 0;
  int64_t cto = 0;
  uint32_t duration = 0;
  uint32_t flags = 0;
  std::string data;
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
    s.data = f->data ? ToLengthPrefixed(*f->data, hevc) : std::string();
    if (s.data.empty()) continue;  // its time goes to the previous sample
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
      s.data.assign(d.substr(off + h->header_bytes, h->frame_bytes - h->header_bytes));
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

  Writer w;
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
      w.U32(static_cast<uint32_t>(s.data.size()));
      w.U32(s.flags);
      w.U32(static_cast<uint32_t>(ClampI32(s.cto)));
    }
    w.End();
    w.End();
  }
  w.End();  // moof

  size_t payload = 0;
  for (const Traf& traf : trafs) {
    for (const Sample& s : traf.samples) payload += s.data.size();
  }
  const size_t mdat_header = 8;
  size_t offset = w.size() - moof_start + mdat_header;
  for (Traf& traf : trafs) {
    w.PatchU32(traf.data_offset_at, static_cast<uint32_t>(offset));
    for (const Sample& s : traf.samples) offset += s.data.size();
  }
  w.U32(static_cast<uint32_t>(mdat_header + payload));
  w.FourCc("mdat");
  for (const Traf& traf : trafs) {
    for (const Sample& s : traf.samples) w.Bytes(s.data);
  }
  return w.Take();
}

}  // namespace meshwork::media
