// Box layouts from ISO/IEC 14496-12 (ISOBMFF: moov, trak, tkhd, mdia, mdhd, hdlr, minf, stbl,
// stsd, moof, traf, tfhd, tfdt), 14496-15 (avcC, hvcC) and 14496-1/-3 (esds, AudioSpecificConfig);
// codec strings per RFC 6381 and ISO/IEC 14496-15 annex E.
#include "streamer/media/mp4_probe.h"

#include <cctype>
#include <cstdio>
#include <string>

#include "streamer/media/codec_parsers.h"
#include "streamer/media/mp4_reader.h"

namespace meshwork::media {
namespace {

using mp4_reader::Box;
using mp4_reader::Child;
using mp4_reader::Children;
using mp4_reader::Reader;

std::string Hex2(uint64_t v) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "%02X", static_cast<unsigned>(v & 0xff));
  return buf;
}

// "avc1.PPCCLL" from an avcC payload.
std::string AvcCodec(std::string_view fourcc, std::string_view avcc) {
  Reader r(avcc);
  r.Skip(1);  // configurationVersion
  uint64_t profile = r.Uint(1), compat = r.Uint(1), level = r.Uint(1);
  if (!r.ok()) return "";
  std::string s = std::string(fourcc) + "." + Hex2(profile) + Hex2(compat) + Hex2(level);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "hvc1.P.C.TL.B…" from an hvcC payload (14496-15 E.3).
std::string HevcCodec(std::string_view fourcc, std::string_view hvcc) {
  Reader r(hvcc);
  r.Skip(1);  // configurationVersion
  uint64_t b = r.Uint(1);
  uint64_t compat = r.Uint(4);
  uint64_t constraints[6];
  for (auto& c : constraints) c = r.Uint(1);
  uint64_t level = r.Uint(1);
  if (!r.ok()) return "";
  uint64_t space = b >> 6, tier = (b >> 5) & 1, profile = b & 0x1f;
  std::string s(fourcc);
  s += ".";
  if (space > 0) s += static_cast<char>('A' + space - 1);
  s += std::to_string(profile);
  // The compatibility flags in reverse bit order, as hex without leading zeros.
  uint32_t reversed = 0;
  for (int i = 0; i < 32; ++i) reversed |= ((compat >> i) & 1u) << (31 - i);
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%X", reversed);
  s += ".";
  s += buf;
  s += tier ? ".H" : ".L";
  s += std::to_string(level);
  int last = 5;
  while (last >= 0 && constraints[last] == 0) --last;
  for (int i = 0; i <= last; ++i) s += "." + Hex2(constraints[i]);
  return s;
}

// The AudioSpecificConfig in an esds payload (ES_Descriptor → DecoderConfigDescriptor →
// DecoderSpecificInfo); empty when not found.
std::string_view AudioSpecificConfig(std::string_view esds) {
  Reader r(esds);
  r.Skip(4);  // version, flags
  // Descriptors: tag, then a length in up to four 7-bit groups.
  auto descriptor = [&r](uint64_t* tag) -> size_t {
    *tag = r.Uint(1);
    size_t length = 0;
    for (int i = 0; i < 4; ++i) {
      uint64_t b = r.Uint(1);
      length = (length << 7) | (b & 0x7f);
      if (!(b & 0x80)) break;
    }
    return r.ok() ? length : 0;
  };
  uint64_t tag = 0;
  descriptor(&tag);
  if (tag != 0x03) return {};
  r.Skip(2);  // ES_ID
  uint64_t flags = r.Uint(1);
  if (flags & 0x80) r.Skip(2);          // dependsOn_ES_ID
  if (flags & 0x40) r.Skip(r.Uint(1));  // URL
  if (flags & 0x20) r.Skip(2);          // OCR_ES_Id
  descriptor(&tag);
  if (tag != 0x04) return {};
  uint64_t object_type = r.Uint(1);
  if (object_type != 0x40 && object_type != 0x66 && object_type != 0x67) return {};
  r.Skip(12);  // stream type, buffer size, bitrates
  size_t length = descriptor(&tag);
  if (tag != 0x05 || !r.ok() || length == 0) return {};
  return r.Rest().substr(0, length);
}

// The AAC object type an AudioSpecificConfig names, 0 when it is too short.
int AacObjectType(std::string_view asc) {
  if (asc.empty()) return 0;
  uint64_t first = static_cast<uint8_t>(asc[0]);
  int aot = static_cast<int>(first >> 3);
  if (aot == 31) {
    if (asc.size() < 2) return 0;
    aot = 32 + static_cast<int>(((first & 7) << 3) | (static_cast<uint8_t>(asc[1]) >> 5));
  }
  return aot;
}

// `count` NAL units, each after its 16-bit length, appended to `out`; false when truncated or
// (`*over` set) when `out` would pass the R-3 bounds on parameter sets (kMaxParameterSets and
// kMaxParameterSetBytes).
bool ReadNalUnits(Reader& r, uint64_t count, std::vector<std::string>& out, bool* over) {
  size_t bytes = 0;
  for (const auto& ps : out) bytes += ps.size();
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t n = r.Uint(2);
    if (!r.ok() || !r.Has(n)) return false;
    bytes += n;
    if (out.size() == kMaxParameterSets || bytes > kMaxParameterSetBytes) {
      *over = true;
      return false;
    }
    out.emplace_back(r.Rest().substr(0, n));
    r.Skip(n);
  }
  return true;
}

// The parameter sets (SPS, PPS) of an avcC payload, without start codes (those read before
// a truncation); nullopt past the R-3 bounds.
std::optional<std::vector<std::string>> AvcParameterSets(std::string_view avcc) {
  std::vector<std::string> out;
  bool over = false;
  Reader r(avcc);
  r.Skip(5);  // version, profile, compatibility, level, length size
  for (int kind = 0; kind < 2 && r.ok(); ++kind) {
    uint64_t count = r.Uint(1) & (kind == 0 ? 0x1f : 0xff);
    if (!ReadNalUnits(r, count, out, &over)) break;
  }
  if (over) return std::nullopt;
  return out;
}

// The parameter sets (VPS, SPS, PPS, …) of an hvcC payload, as above.
std::optional<std::vector<std::string>> HevcParameterSets(std::string_view hvcc) {
  std::vector<std::string> out;
  bool over = false;
  Reader r(hvcc);
  r.Skip(22);
  uint64_t arrays = r.Uint(1);
  for (uint64_t a = 0; a < arrays && r.ok(); ++a) {
    r.Skip(1);  // completeness, type
    uint64_t count = r.Uint(2);
    if (!ReadNalUnits(r, count, out, &over)) break;
  }
  if (over) return std::nullopt;
  return out;
}

std::optional<ProbedTrack> ProbeTrack(std::string_view trak) {
  ProbedTrack t;
  auto tkhd = Child(trak, "tkhd");
  auto mdia = Child(trak, "mdia");
  if (!tkhd || !mdia) return std::nullopt;
  {
    Reader r(*tkhd);
    uint64_t version = r.Uint(1);
    r.Skip(3 + (version == 1 ? 16 : 8));  // flags, creation and modification times
    t.track_id = static_cast<uint32_t>(r.Uint(4));
    if (!r.ok()) return std::nullopt;
  }
  auto mdhd = Child(*mdia, "mdhd");
  auto hdlr = Child(*mdia, "hdlr");
  if (!mdhd || !hdlr) return std::nullopt;
  {
    Reader r(*mdhd);
    uint64_t version = r.Uint(1);
    r.Skip(3 + (version == 1 ? 16 : 8));
    t.timescale = static_cast<uint32_t>(r.Uint(4));
  }
  std::string_view handler = hdlr->size() >= 12 ? hdlr->substr(8, 4) : std::string_view();
  if (handler != "vide" && handler != "soun") return std::nullopt;
  auto minf = Child(*mdia, "minf");
  auto stbl = minf ? Child(*minf, "stbl") : std::nullopt;
  auto stsd = stbl ? Child(*stbl, "stsd") : std::nullopt;
  if (!stsd || stsd->size() < 8) return std::nullopt;
  auto entries = Children(stsd->substr(8));  // version, flags, entry_count
  if (entries.empty()) return std::nullopt;
  const Box& entry = entries.front();
  if (handler == "vide") {
    // VisualSampleEntry: 6 reserved, data_reference_index, 16 pre-defined/reserved, width,
    // height, then 50 more bytes before its child boxes.
    Reader r(entry.payload);
    r.Skip(24);
    t.info.width = static_cast<int>(r.Uint(2));
    t.info.height = static_cast<int>(r.Uint(2));
    std::string_view children = entry.payload.size() > 78 ? entry.payload.substr(78) : "";
    if (entry.type == "avc1" || entry.type == "avc3") {
      t.info.codec = Codec::kH264;
      if (auto avcc = Child(children, "avcC")) {
        t.info.codec_string = AvcCodec(entry.type, *avcc);
        auto sets = AvcParameterSets(*avcc);
        if (!sets) return std::nullopt;  // more parameter sets than any encoder makes
        t.info.parameter_sets = *std::move(sets);
      }
    } else if (entry.type == "hvc1" || entry.type == "hev1") {
      t.info.codec = Codec::kHevc;
      if (auto hvcc = Child(children, "hvcC")) {
        t.info.codec_string = HevcCodec(entry.type, *hvcc);
        auto sets = HevcParameterSets(*hvcc);
        if (!sets) return std::nullopt;
        t.info.parameter_sets = *std::move(sets);
      }
    }
  } else {
    // AudioSampleEntry: 6 reserved, data_reference_index, 8 reserved, channelcount,
    // samplesize, 4 pre-defined/reserved, samplerate (16.16), then child boxes.
    Reader r(entry.payload);
    r.Skip(16);
    t.info.channels = static_cast<int>(r.Uint(2));
    r.Skip(6);
    t.info.sample_rate = static_cast<int>(r.Uint(4) >> 16);
    if (entry.type == "mp4a") {
      t.info.codec = Codec::kAac;
      std::string_view children = entry.payload.size() > 28 ? entry.payload.substr(28) : "";
      if (auto esds = Child(children, "esds")) {
        t.info.audio_specific_config = std::string(AudioSpecificConfig(*esds));
      }
      int aot = AacObjectType(t.info.audio_specific_config);
      t.info.aac_object_type = aot;
      t.info.codec_string = "mp4a.40." + std::to_string(aot > 0 ? aot : 2);
    }
  }
  return t;
}

}  // namespace

std::vector<ProbedTrack> ProbeInitSegment(std::string_view init) {
  std::vector<ProbedTrack> out;
  auto moov = Child(init, "moov");
  if (!moov) return out;
  for (const Box& b : Children(*moov)) {
    if (b.type != "trak") continue;
    if (auto t = ProbeTrack(b.payload)) out.push_back(std::move(*t));
  }
  return out;
}

std::optional<FragmentStart> ProbeFragmentStart(std::string_view fragment) {
  for (const Box& top : Children(fragment)) {
    if (top.type != "moof") continue;
    auto traf = Child(top.payload, "traf");
    if (!traf) return std::nullopt;
    auto tfhd = Child(*traf, "tfhd");
    auto tfdt = Child(*traf, "tfdt");
    if (!tfhd || !tfdt) return std::nullopt;
    FragmentStart f;
    Reader h(*tfhd);
    h.Skip(4);
    f.track_id = static_cast<uint32_t>(h.Uint(4));
    Reader d(*tfdt);
    uint64_t version = d.Uint(1);
    d.Skip(3);
    f.base_media_decode_time = d.Uint(version == 1 ? 8 : 4);
    if (!h.ok() || !d.ok()) return std::nullopt;
    return f;
  }
  return std::nullopt;
}

}  // namespace meshwork::media
