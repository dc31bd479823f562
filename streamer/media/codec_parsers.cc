#include "streamer/media/codec_parsers.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "streamer/media/bit_reader.h"

namespace meshwork::media {

bool H264ProfileHasChromaInfo(uint32_t profile_idc) {
  switch (profile_idc) {
    case 100:
    case 110:
    case 122:
    case 244:
    case 44:
    case 83:
    case 86:
    case 118:
    case 128:
    case 138:
    case 139:
    case 134:
    case 135:
      return true;
    default:
      return false;
  }
}

namespace {

// The start of a VUI, the same in H.264 and HEVC: aspect ratio, overscan, video signal type
// and chroma location, none of which a playlist needs.
void SkipVuiHead(BitReader& br) {
  if (br.Bit()) {  // aspect_ratio_info_present_flag
    if (br.Bits(8) == 255) br.Skip(32);
  }
  if (br.Bit()) br.Bit();  // overscan
  if (br.Bit()) {          // video_signal_type_present_flag
    br.Skip(4);
    if (br.Bit()) br.Skip(24);
  }
  if (br.Bit()) {  // chroma_loc_info_present_flag
    br.Ue();
    br.Ue();
  }
}

void SkipH264ScalingList(BitReader& br, int size) {
  int last = 8;
  int next = 8;
  for (int j = 0; j < size && !br.failed(); ++j) {
    if (next != 0) {
      int32_t delta = br.Se();
      if (delta < -128 || delta > 127) {
        br.Skip(~size_t{0});  // fail
        return;
      }
      next = (last + delta + 256) % 256;
    }
    last = next == 0 ? last : next;
  }
}

bool PlausibleSize(int64_t w, int64_t h) { return w > 0 && h > 0 && w <= 65536 && h <= 65536; }

}  // namespace

namespace {

// The first 00 00 01 at or after `from`, or data.size(). P-7: every video byte passes here
// (the fMP4 writer splits each frame into its NAL units); in H.264 slice data 0x01 is common
// (~1.5 % of bytes), so a memchr for it stops every ~70 bytes. SSE2 (x86-64's baseline)
// tests 16 positions at once: 3× faster on x264 output.
size_t FindStartCode(std::string_view data, size_t from) {
  const size_t n = data.size();
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t i = from;
#if defined(__SSE2__)
  const __m128i zero = _mm_setzero_si128();
  const __m128i one = _mm_set1_epi8(1);
  // Positions i..i+15 read bytes up to i+17.
  for (; i + 18 <= n; i += 16) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 1));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 2));
    const __m128i hit = _mm_and_si128(
        _mm_and_si128(_mm_cmpeq_epi8(a, zero), _mm_cmpeq_epi8(b, zero)), _mm_cmpeq_epi8(c, one));
    const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(hit));
    if (mask != 0) return i + static_cast<size_t>(__builtin_ctz(mask));
  }
#endif
  for (; i + 3 <= n; ++i) {
    if (p[i] == 0 && p[i + 1] == 0 && p[i + 2] == 1) return i;
  }
  return n;
}

}  // namespace

bool NextAnnexBNal(std::string_view data, size_t* pos, std::string_view* nal) {
  return NextAnnexBNalUntil(data, pos, nal, nullptr);
}

bool NextAnnexBNalUntil(std::string_view data, size_t* pos, std::string_view* nal,
                        bool (*last)(uint8_t header)) {
  const size_t n = data.size();
  // The first call finds the first start code; later ones start at the one the last call found.
  size_t sc = *pos == 0 ? FindStartCode(data, 0) : *pos;
  while (sc < n) {
    size_t begin = sc + 3;
    if (last && begin < n && last(static_cast<uint8_t>(data[begin]))) {
      *pos = n;  // the rest is this NAL unit's: not searched
      *nal = data.substr(begin);
      return true;
    }
    size_t next = FindStartCode(data, begin);
    size_t end = next;
    // Zero bytes before the next start code (a 4-byte start code's leading zero or
    // trailing_zero_8bits) are not part of the NAL unit.
    while (end > begin && data[end - 1] == 0) --end;
    sc = next;
    if (end > begin) {
      *pos = next;  // > 0: a start code found after a NAL unit's first byte
      *nal = data.substr(begin, end - begin);
      return true;
    }
  }
  *pos = n;
  return false;
}

AccessUnitHead ScanAccessUnitHead(std::string_view au, bool hevc) {
  AccessUnitHead head;
  size_t pos = 0;
  std::string_view nal;
  // at most kMaxParameterSets sets and kMaxParameterSetBytes in all, as from RTMP and
  // MP4 (an init's avcC/hvcC holds 8- and 16-bit counts and lengths); the rest are left out.
  size_t set_bytes = 0;
  auto keep_set = [&](std::string_view set) {
    if (head.parameter_sets.size() >= kMaxParameterSets ||
        set_bytes + set.size() > kMaxParameterSetBytes) {
      return false;
    }
    set_bytes += set.size();
    head.parameter_sets.emplace_back(set);
    return true;
  };
  // A VCL NAL unit (HEVC types 0…31) or a coded slice (H.264 types 1…5) ends the scan.
  auto vcl = hevc ? +[](uint8_t h) { return ((h >> 1) & 0x3f) <= 31; }
                  : +[](uint8_t h) { return (h & 0x1f) >= 1 && (h & 0x1f) <= 5; };
  while (NextAnnexBNalUntil(au, &pos, &nal, vcl)) {
    if (hevc) {
      int t = HevcNalType(nal);
      if (t >= 16 && t <= 23) head.keyframe = true;
      if (t >= 32 && t <= 34 && keep_set(nal) && t == 33 && head.sps.empty()) head.sps = nal;
      if (t >= 0 && t <= 31) break;  // a VCL NAL unit
    } else {
      int t = H264NalType(nal);
      if (t == 5) head.keyframe = true;
      if ((t == 7 || t == 8) && keep_set(nal) && t == 7 && head.sps.empty()) head.sps = nal;
      if (t >= 1 && t <= 5) break;  // a coded slice
    }
  }
  return head;
}

std::vector<std::string_view> SplitAnnexB(std::string_view data) {
  std::vector<std::string_view> nals;
  size_t pos = 0;
  std::string_view nal;
  while (NextAnnexBNal(data, &pos, &nal)) nals.push_back(nal);
  return nals;
}

std::string UnescapeRbsp(std::string_view nal) {
  std::string out;
  out.reserve(nal.size());
  int zeros = 0;
  for (char c : nal) {
    uint8_t b = static_cast<uint8_t>(c);
    if (zeros >= 2 && b == 3) {
      zeros = 0;
      continue;
    }
    out.push_back(c);
    zeros = b == 0 ? zeros + 1 : 0;
  }
  return out;
}

std::optional<VideoInfo> ParseH264Sps(std::string_view nal) {
  if (nal.size() < 4 || H264NalType(nal) != 7 || (nal[0] & 0x80)) return std::nullopt;
  std::string rbsp = UnescapeRbsp(nal.substr(1));
  BitReader br(rbsp);
  uint32_t profile_idc = br.Bits(8);
  uint32_t constraints = br.Bits(8);
  uint32_t level_idc = br.Bits(8);
  br.UeMax(31);  // seq_parameter_set_id
  uint32_t chroma_format_idc = 1;
  bool separate_colour_plane = false;
  if (H264ProfileHasChromaInfo(profile_idc)) {
    chroma_format_idc = br.UeMax(3);
    if (chroma_format_idc == 3) separate_colour_plane = br.Bit();
    br.UeMax(6);     // bit_depth_luma_minus8
    br.UeMax(6);     // bit_depth_chroma_minus8
    br.Bit();        // qpprime_y_zero_transform_bypass_flag
    if (br.Bit()) {  // seq_scaling_matrix_present_flag
      int lists = chroma_format_idc != 3 ? 8 : 12;
      for (int i = 0; i < lists && !br.failed(); ++i) {
        if (br.Bit()) SkipH264ScalingList(br, i < 6 ? 16 : 64);
      }
    }
  }
  br.UeMax(12);  // log2_max_frame_num_minus4
  uint32_t poc_type = br.UeMax(2);
  if (poc_type == 0) {
    br.UeMax(12);  // log2_max_pic_order_cnt_lsb_minus4
  } else if (poc_type == 1) {
    br.Bit();  // delta_pic_order_always_zero_flag
    br.Se();   // offset_for_non_ref_pic
    br.Se();   // offset_for_top_to_bottom_field
    uint32_t cycle = br.UeMax(255);
    for (uint32_t i = 0; i < cycle && !br.failed(); ++i) br.Se();
  }
  br.Ue();   // max_num_ref_frames
  br.Bit();  // gaps_in_frame_num_value_allowed_flag
  uint32_t width_mbs = br.UeMax(4096) + 1;
  uint32_t height_map_units = br.UeMax(4096) + 1;
  bool frame_mbs_only = br.Bit();
  if (!frame_mbs_only) br.Bit();  // mb_adaptive_frame_field_flag
  br.Bit();                       // direct_8x8_inference_flag
  uint32_t crop_left = 0, crop_right = 0, crop_top = 0, crop_bottom = 0;
  if (br.Bit()) {
    crop_left = br.UeMax(65536);
    crop_right = br.UeMax(65536);
    crop_top = br.UeMax(65536);
    crop_bottom = br.UeMax(65536);
  }
  if (br.failed()) return std::nullopt;

  int chroma_array_type = separate_colour_plane ? 0 : static_cast<int>(chroma_format_idc);
  int64_t crop_unit_x = 1;
  int64_t crop_unit_y = 2 - frame_mbs_only;
  if (chroma_array_type != 0) {
    int sub_width = (chroma_array_type == 1 || chroma_array_type == 2) ? 2 : 1;
    int sub_height = chroma_array_type == 1 ? 2 : 1;
    crop_unit_x = sub_width;
    crop_unit_y = sub_height * (2 - frame_mbs_only);
  }
  int64_t width = int64_t{width_mbs} * 16 - crop_unit_x * (int64_t{crop_left} + crop_right);
  int64_t height = int64_t{2 - frame_mbs_only} * height_map_units * 16 -
                   crop_unit_y * (int64_t{crop_top} + crop_bottom);
  if (!PlausibleSize(width, height)) return std::nullopt;

  VideoInfo info;
  char codec[32];
  std::snprintf(codec, sizeof codec, "avc1.%02x%02x%02x", profile_idc, constraints, level_idc);
  info.codec_string = codec;
  info.width = static_cast<int>(width);
  info.height = static_cast<int>(height);

  // VUI: only the timing is wanted; a truncated VUI leaves the frame rate unknown.
  if (br.Bit()) {
    SkipVuiHead(br);
    if (br.Bit()) {  // timing_info_present_flag
      uint32_t num_units_in_tick = br.Bits(32);
      uint32_t time_scale = br.Bits(32);
      if (!br.failed() && num_units_in_tick > 0 && time_scale > 0) {
        info.frame_rate = static_cast<double>(time_scale) / (2.0 * num_units_in_tick);
      }
    }
  }
  return info;
}

namespace {

// profile_tier_level(1, max_sub_layers_minus1) of an HEVC SPS/VPS.
struct HevcPtl {
  uint32_t profile_space = 0;
  uint32_t tier = 0;
  uint32_t profile_idc = 0;
  uint32_t compat_flags = 0;
  std::array<uint8_t, 6> constraints{};
  uint32_t level_idc = 0;
};

HevcPtl ParseHevcPtl(BitReader& br, uint32_t max_sub_layers_minus1) {
  HevcPtl ptl;
  ptl.profile_space = br.Bits(2);
  ptl.tier = br.Bit();
  ptl.profile_idc = br.Bits(5);
  ptl.compat_flags = br.Bits(32);
  for (auto& b : ptl.constraints) b = static_cast<uint8_t>(br.Bits(8));
  ptl.level_idc = br.Bits(8);
  std::array<bool, 8> profile_present{}, level_present{};
  for (uint32_t i = 0; i < max_sub_layers_minus1; ++i) {
    profile_present[i] = br.Bit();
    level_present[i] = br.Bit();
  }
  if (max_sub_layers_minus1 > 0) {
    for (uint32_t i = max_sub_layers_minus1; i < 8; ++i) br.Skip(2);
  }
  for (uint32_t i = 0; i < max_sub_layers_minus1; ++i) {
    if (profile_present[i]) br.Skip(88);
    if (level_present[i]) br.Skip(8);
  }
  return ptl;
}

std::string HevcCodecString(const HevcPtl& ptl) {
  std::string s = "hvc1.";
  if (ptl.profile_space > 0) s.push_back(static_cast<char>('A' + ptl.profile_space - 1));
  s += std::to_string(ptl.profile_idc);
  uint32_t reversed = 0;
  for (int i = 0; i < 32; ++i) {
    if (ptl.compat_flags & (1u << i)) reversed |= 1u << (31 - i);
  }
  char buf[16];
  std::snprintf(buf, sizeof buf, ".%X", reversed);
  s += buf;
  s += ptl.tier ? ".H" : ".L";
  s += std::to_string(ptl.level_idc);
  size_t n = ptl.constraints.size();
  while (n > 0 && ptl.constraints[n - 1] == 0) --n;
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, ".%X", ptl.constraints[i]);
    s += buf;
  }
  return s;
}

void SkipHevcScalingListData(BitReader& br) {
  for (int size_id = 0; size_id < 4; ++size_id) {
    for (int matrix_id = 0; matrix_id < 6; matrix_id += (size_id == 3) ? 3 : 1) {
      if (br.failed()) return;
      if (!br.Bit()) {        // scaling_list_pred_mode_flag
        br.UeMax(matrix_id);  // scaling_list_pred_matrix_id_delta
      } else {
        int coefs = std::min(64, 1 << (4 + (size_id << 1)));
        if (size_id > 1) br.Se();  // scaling_list_dc_coef_minus8
        for (int i = 0; i < coefs && !br.failed(); ++i) br.Se();
      }
    }
  }
}

// The delta POCs of one st_ref_pic_set (what later sets may predict from).
struct StRps {
  std::vector<int32_t> negative;  // DeltaPocS0, decreasing
  std::vector<int32_t> positive;  // DeltaPocS1, increasing
};

bool ParseStRefPicSet(BitReader& br, uint32_t idx, std::vector<StRps>& sets) {
  StRps rps;
  bool inter = idx != 0 && br.Bit();
  if (inter) {
    // In the SPS delta_idx_minus1 is absent (inferred 0): predict from the previous set.
    const StRps& ref = sets[idx - 1];
    bool sign = br.Bit();
    uint32_t abs_delta = br.UeMax(32767) + 1;
    int32_t delta_rps = sign ? -static_cast<int32_t>(abs_delta) : static_cast<int32_t>(abs_delta);
    size_t num_delta = ref.negative.size() + ref.positive.size();
    std::vector<bool> use(num_delta + 1, true);
    for (size_t j = 0; j <= num_delta && !br.failed(); ++j) {
      bool used_by_curr = br.Bit();
      if (!used_by_curr) use[j] = br.Bit();
    }
    if (br.failed()) return false;
    const size_t nneg = ref.negative.size();
    const size_t npos = ref.positive.size();
    // (7-61) and (7-62) of H.265.
    for (size_t k = npos; k-- > 0;) {
      int32_t d = ref.positive[k] + delta_rps;
      if (d < 0 && use[nneg + k]) rps.negative.push_back(d);
    }
    if (delta_rps < 0 && use[num_delta]) rps.negative.push_back(delta_rps);
    for (size_t k = 0; k < nneg; ++k) {
      int32_t d = ref.negative[k] + delta_rps;
      if (d < 0 && use[k]) rps.negative.push_back(d);
    }
    for (size_t k = nneg; k-- > 0;) {
      int32_t d = ref.negative[k] + delta_rps;
      if (d > 0 && use[k]) rps.positive.push_back(d);
    }
    if (delta_rps > 0 && use[num_delta]) rps.positive.push_back(delta_rps);
    for (size_t k = 0; k < npos; ++k) {
      int32_t d = ref.positive[k] + delta_rps;
      if (d > 0 && use[nneg + k]) rps.positive.push_back(d);
    }
    if (rps.negative.size() > 16 || rps.positive.size() > 16) return false;
  } else {
    uint32_t num_negative = br.UeMax(16);
    uint32_t num_positive = br.UeMax(16);
    int32_t poc = 0;
    for (uint32_t i = 0; i < num_negative && !br.failed(); ++i) {
      poc -= static_cast<int32_t>(br.UeMax(32767) + 1);
      br.Bit();  // used_by_curr_pic_s0_flag
      rps.negative.push_back(poc);
    }
    poc = 0;
    for (uint32_t i = 0; i < num_positive && !br.failed(); ++i) {
      poc += static_cast<int32_t>(br.UeMax(32767) + 1);
      br.Bit();  // used_by_curr_pic_s1_flag
      rps.positive.push_back(poc);
    }
  }
  if (br.failed()) return false;
  sets.push_back(std::move(rps));
  return true;
}

}  // namespace

std::optional<VideoInfo> ParseHevcSps(std::string_view nal) {
  if (nal.size() < 4 || HevcNalType(nal) != 33 || (nal[0] & 0x80)) return std::nullopt;
  std::string rbsp = UnescapeRbsp(nal.substr(2));
  BitReader br(rbsp);
  br.Skip(4);  // sps_video_parameter_set_id
  uint32_t max_sub_layers_minus1 = br.Bits(3);
  if (max_sub_layers_minus1 > 6) return std::nullopt;
  br.Bit();  // sps_temporal_id_nesting_flag
  HevcPtl ptl = ParseHevcPtl(br, max_sub_layers_minus1);
  br.UeMax(15);  // sps_seq_parameter_set_id
  uint32_t chroma_format_idc = br.UeMax(3);
  bool separate_colour_plane = false;
  if (chroma_format_idc == 3) separate_colour_plane = br.Bit();
  uint32_t pic_width = br.UeMax(65536);
  uint32_t pic_height = br.UeMax(65536);
  uint32_t win_left = 0, win_right = 0, win_top = 0, win_bottom = 0;
  if (br.Bit()) {
    win_left = br.UeMax(65536);
    win_right = br.UeMax(65536);
    win_top = br.UeMax(65536);
    win_bottom = br.UeMax(65536);
  }
  if (br.failed()) return std::nullopt;
  int chroma_array_type = separate_colour_plane ? 0 : static_cast<int>(chroma_format_idc);
  int64_t sub_width = (chroma_array_type == 1 || chroma_array_type == 2) ? 2 : 1;
  int64_t sub_height = chroma_array_type == 1 ? 2 : 1;
  int64_t width = int64_t{pic_width} - sub_width * (int64_t{win_left} + win_right);
  int64_t height = int64_t{pic_height} - sub_height * (int64_t{win_top} + win_bottom);
  if (!PlausibleSize(width, height)) return std::nullopt;

  VideoInfo info;
  info.codec_string = HevcCodecString(ptl);
  info.width = static_cast<int>(width);
  info.height = static_cast<int>(height);

  // The rest only leads to the VUI timing; any failure leaves the frame rate unknown.
  br.UeMax(8);  // bit_depth_luma_minus8
  br.UeMax(8);  // bit_depth_chroma_minus8
  uint32_t log2_max_poc_lsb = br.UeMax(12) + 4;
  bool ordering_info_present = br.Bit();
  for (uint32_t i = ordering_info_present ? 0 : max_sub_layers_minus1;
       i <= max_sub_layers_minus1 && !br.failed(); ++i) {
    br.Ue();  // sps_max_dec_pic_buffering_minus1
    br.Ue();  // sps_max_num_reorder_pics
    br.Ue();  // sps_max_latency_increase_plus1
  }
  br.Ue();                                      // log2_min_luma_coding_block_size_minus3
  br.Ue();                                      // log2_diff_max_min_luma_coding_block_size
  br.Ue();                                      // log2_min_luma_transform_block_size_minus2
  br.Ue();                                      // log2_diff_max_min_luma_transform_block_size
  br.Ue();                                      // max_transform_hierarchy_depth_inter
  br.Ue();                                      // max_transform_hierarchy_depth_intra
  if (br.Bit()) {                               // scaling_list_enabled_flag
    if (br.Bit()) SkipHevcScalingListData(br);  // sps_scaling_list_data_present_flag
  }
  br.Bit();        // amp_enabled_flag
  br.Bit();        // sample_adaptive_offset_enabled_flag
  if (br.Bit()) {  // pcm_enabled_flag
    br.Skip(8);
    br.Ue();
    br.Ue();
    br.Bit();
  }
  uint32_t num_st_rps = br.UeMax(64);
  std::vector<StRps> sets;
  for (uint32_t i = 0; i < num_st_rps && !br.failed(); ++i) {
    if (!ParseStRefPicSet(br, i, sets)) return info;
  }
  if (br.Bit()) {  // long_term_ref_pics_present_flag
    uint32_t num_lt = br.UeMax(32);
    for (uint32_t i = 0; i < num_lt && !br.failed(); ++i) {
      br.Skip(log2_max_poc_lsb);
      br.Bit();
    }
  }
  br.Bit();                                   // sps_temporal_mvp_enabled_flag
  br.Bit();                                   // strong_intra_smoothing_enabled_flag
  if (br.failed() || !br.Bit()) return info;  // vui_parameters_present_flag
  SkipVuiHead(br);
  br.Bit();        // neutral_chroma_indication_flag
  br.Bit();        // field_seq_flag
  br.Bit();        // frame_field_info_present_flag
  if (br.Bit()) {  // default_display_window_flag
    br.Ue();
    br.Ue();
    br.Ue();
    br.Ue();
  }
  if (br.Bit()) {  // vui_timing_info_present_flag
    uint32_t num_units_in_tick = br.Bits(32);
    uint32_t time_scale = br.Bits(32);
    if (!br.failed() && num_units_in_tick > 0 && time_scale > 0) {
      info.frame_rate = static_cast<double>(time_scale) / num_units_in_tick;
    }
  }
  return info;
}

namespace {
constexpr std::array<int, 13> kAacSampleRates = {96000, 88200, 64000, 48000, 44100, 32000, 24000,
                                                 22050, 16000, 12000, 11025, 8000,  7350};
}  // namespace

std::optional<AdtsHeader> ParseAdtsHeader(std::span<const uint8_t> d) {
  if (d.size() < 7) return std::nullopt;
  if (d[0] != 0xff || (d[1] & 0xf0) != 0xf0) return std::nullopt;
  if ((d[1] & 0x06) != 0) return std::nullopt;  // layer must be 0
  bool protection_absent = d[1] & 0x01;
  AdtsHeader h;
  h.object_type = ((d[2] >> 6) & 0x03) + 1;
  h.sampling_index = (d[2] >> 2) & 0x0f;
  if (h.sampling_index >= static_cast<int>(kAacSampleRates.size())) return std::nullopt;
  h.sample_rate = kAacSampleRates[h.sampling_index];
  h.channels = ((d[2] & 0x01) << 2) | ((d[3] >> 6) & 0x03);
  h.header_bytes = protection_absent ? 7 : 9;
  h.frame_bytes = (static_cast<size_t>(d[3] & 0x03) << 11) | (static_cast<size_t>(d[4]) << 3) |
                  ((d[5] >> 5) & 0x07);
  if (h.frame_bytes < h.header_bytes) return std::nullopt;
  return h;
}

std::string AdtsHeader::AudioSpecificConfig() const {
  uint16_t v = static_cast<uint16_t>(((object_type & 0x1f) << 11) | ((sampling_index & 0x0f) << 7) |
                                     ((channels & 0x0f) << 3));
  return std::string{static_cast<char>(v >> 8), static_cast<char>(v & 0xff)};
}

std::string AdtsHeader::CodecString() const { return "mp4a.40." + std::to_string(object_type); }

AdtsRun ScanAdtsFrames(std::string_view data) {
  AdtsRun run;
  while (run.bytes < data.size()) {
    auto rest = data.substr(run.bytes);
    auto h = ParseAdtsHeader({reinterpret_cast<const uint8_t*>(rest.data()), rest.size()});
    if (!h) break;
    if (h->frame_bytes > rest.size()) {
      run.cut = true;
      break;
    }
    if (!run.first) run.first = h;
    run.bytes += h->frame_bytes;
    ++run.frames;
  }
  return run;
}

namespace {

__int128 FloorDiv128(__int128 a, __int128 b) { return a / b - ((a % b != 0) && (a < 0)); }

// The 90 kHz time of the sample `samples` after the one `t` falls on, at `rate` Hz: rounded
// up, so that rounding down to the sample rate comes back to that sample.
int64_t AacSampleTime(int64_t t, int64_t samples, int rate) {
  if (rate <= 0 || rate > 90000) return t;
  const __int128 sample = FloorDiv128(static_cast<__int128>(t) * rate, 90000) + samples;
  return static_cast<int64_t>(-FloorDiv128(-sample * 90000, rate));
}

}  // namespace

int64_t AdtsEnd(const Frame& frame) {
  if (!frame.data) return frame.dts;
  AdtsRun run = ScanAdtsFrames(*frame.data);
  if (!run.first) return frame.dts;
  return AacSampleTime(frame.dts, int64_t{run.frames} * 1024, run.first->sample_rate);
}

std::optional<Frame> SplitAdtsAt(Frame& frame, int64_t at) {
  if (!frame.data) return std::nullopt;
  if (frame.dts >= at) {
    Frame whole = std::move(frame);
    frame.data.reset();
    return whole;
  }
  std::string_view d(*frame.data);
  size_t off = 0;
  int64_t samples = 0;
  while (off < d.size()) {
    auto h = ParseAdtsHeader({reinterpret_cast<const uint8_t*>(d.data()) + off, d.size() - off});
    if (!h || h->frame_bytes > d.size() - off) return std::nullopt;  // not ADTS: kept whole
    const int64_t starts = AacSampleTime(frame.dts, samples, h->sample_rate);
    if (samples > 0 && starts >= at) {
      Frame rest = frame;
      rest.dts = starts;
      rest.pts = frame.pts + (starts - frame.dts);
      rest.data = std::make_shared<const std::string>(d.substr(off));
      frame.data = std::make_shared<const std::string>(d.substr(0, off));
      return rest;
    }
    off += h->frame_bytes;
    samples += 1024;
  }
  return std::nullopt;
}

}  // namespace meshwork::media
