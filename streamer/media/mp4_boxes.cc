// Box pieces of the fMP4 writer: layouts of ISO/IEC 14496-12 (ISOBMFF) and 14496-15 (avcC,
// hvcC), esds of ISO/IEC 14496-1/-14.
#include "streamer/media/mp4_boxes.h"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>

#include "streamer/media/bit_reader.h"
#include "streamer/media/codec_parsers.h"

namespace meshwork::media::mp4_boxes {

namespace {
constexpr int64_t kVideoTimescale = 90000;
}  // namespace

namespace {

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

}  // namespace

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
namespace {

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

}  // namespace

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

namespace {

// floor(a / b) for b > 0.
__int128 FloorDiv(__int128 a, __int128 b) {
  __int128 q = a / b;
  if ((a % b != 0) && (a < 0)) --q;
  return q;
}

}  // namespace

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

}  // namespace meshwork::media::mp4_boxes
