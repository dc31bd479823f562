// S-1 RTMP FLV tag bodies → frames, S-5 the timestamps. The parameter sets are real encoder
// output (ffmpeg -f lavfi -i testsrc2=size=320x240:rate=25 with -c:v libx264 -f h264 and
// -c:v libx265 -f hevc); the records and tag bodies around them are written by hand from
// ISO/IEC 14496-15 (AVC/HEVC decoder configuration records), the FLV specification (video
// and audio tag headers) and Enhanced RTMP (the ExHeader form with a FourCC).
#include "streamer/rtmp/flv.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/escaping.h"
#include "streamer/media/codec_parsers.h"
#include "streamer/media/fmp4_writer.h"
#include "tests/unit/streamer/rtmp/bytes_util.h"

namespace meshwork::rtmp {
namespace {

using test::Span;
using test::U16;
using test::U24;
using test::U8;

using media::Codec;

std::string Hex(const char* hex) { return absl::HexStringToBytes(hex); }

// libx264, High profile (0x64) level 1.3, 320x240.
const std::string kAvcSps = Hex("6764000dacd94141fb011000000300100000030320f1429960");
const std::string kAvcPps = Hex("68ebe3cb22c0");
// libx265, Main profile, level 2 (general_level_idc 60), 320x240.
const std::string kVps = Hex("40010c01ffff01600000030090000003000003003c959809");
const std::string kHevcSps =
    Hex("42010101600000030090000003000003003ca00a080f165959a4932bc05a020000030002000003003210");
const std::string kHevcPps = Hex("4401c172b46240");
// Stand-in slices: the depacketizer looks at the NAL header only.
const std::string kAvcIdr = Hex("658880402ffe");  // H.264 type 5
const std::string kNonIdr = Hex("419a2144");      // H.264 type 1
const std::string kHevcIdr = Hex("2601af0c4e");   // HEVC type 19 (IDR_W_RADL)
const std::string kHevcTrail = Hex("0201d01a");   // HEVC type 1 (TRAIL_R)
const std::string kStart("\0\0\0\1", 4);

// AVCDecoderConfigurationRecord: version 1, profile, compatibility, level (from the SPS),
// 0xFC | lengthSizeMinusOne, 0xE0 | numSPS, (u16 length, SPS)…, numPPS, (u16 length, PPS)….
std::string AvcRecord(const std::string& sps, const std::string& pps, int length_size = 4) {
  std::string r;
  U8(r, 1);
  r += sps.substr(1, 3);
  U8(r, 0xFC | (length_size - 1));
  U8(r, 0xE1);
  U16(r, sps.size());
  r += sps;
  U8(r, 1);
  U16(r, pps.size());
  r += pps;
  return r;
}

// HEVCDecoderConfigurationRecord: 22 bytes of profile/tier/level and format fields (byte 21
// ends in lengthSizeMinusOne), numOfArrays, then per array: completeness|type, u16 count,
// (u16 length, NAL unit)….
std::string HevcRecord() {
  std::string r;
  U8(r, 1);
  U8(r, 0x01);               // profile space 0, tier 0, Main
  r += Hex("60000000");      // compatibility flags
  r += Hex("900000000000");  // constraint flags
  U8(r, 60);                 // level
  r += Hex("f000fcfdf8f8");  // segmentation, parallelism, chroma, depths
  U16(r, 0);                 // avgFrameRate
  U8(r, 0x0F);               // lengthSizeMinusOne 3
  U8(r, 3);                  // numOfArrays
  for (const auto* nal : {&kVps, &kHevcSps, &kHevcPps}) {
    U8(r, 0x80 | media::HevcNalType(*nal));
    U16(r, 1);
    U16(r, nal->size());
    r += *nal;
  }
  return r;
}

std::string LengthPrefixed(const std::vector<std::string>& nals, int length_size = 4) {
  std::string b;
  for (const auto& n : nals) {
    for (int i = length_size - 1; i >= 0; --i) U8(b, (n.size() >> (8 * i)) & 0xFF);
    b += n;
  }
  return b;
}

// Legacy FLV video tag body: FrameType(4) CodecID(4), AVCPacketType, SI24 composition time.
std::string Legacy(int frame_type, int packet_type, int32_t cts, const std::string& data,
                   int codec_id = 7) {
  std::string b;
  U8(b, (frame_type << 4) | codec_id);
  U8(b, packet_type);
  U24(b, static_cast<uint32_t>(cts) & 0xFFFFFF);
  return b + data;
}

// Enhanced RTMP: IsExHeader(1) FrameType(3) PacketType(4), FourCC, [SI24 for type 1], data.
std::string Enhanced(int frame_type, int packet_type, std::string_view fourcc,
                     const std::string& data, int32_t cts = 0) {
  std::string b;
  U8(b, 0x80 | (frame_type << 4) | packet_type);
  b += fourcc;
  if (packet_type == 1) U24(b, static_cast<uint32_t>(cts) & 0xFFFFFF);
  return b + data;
}

struct Capture {
  std::vector<media::TrackInfo> tracks;
  std::vector<media::Frame> frames;
  FlvDepacketizer::Sink Sink() {
    return {[this](const media::TrackInfo& t) { tracks.push_back(t); },
            [this](media::Frame&& f) { frames.push_back(std::move(f)); }};
  }
};

const std::string kAud264 = kStart + Hex("09f0");
const std::string kAudHevc = kStart + Hex("460150");

TEST_CASE("S-1 RTMP FLV: ParseDecoderConfig reads AVC and HEVC records and refuses broken ones") {
  DecoderConfig c;
  REQUIRE(ParseDecoderConfig(Codec::kH264, Span(AvcRecord(kAvcSps, kAvcPps)), c).ok());
  CHECK(c.nal_length_size == 4);
  CHECK(c.parameter_sets == std::vector<std::string>{kAvcSps, kAvcPps});
  REQUIRE(ParseDecoderConfig(Codec::kH264, Span(AvcRecord(kAvcSps, kAvcPps, 2)), c).ok());
  CHECK(c.nal_length_size == 2);
  REQUIRE(ParseDecoderConfig(Codec::kHevc, Span(HevcRecord()), c).ok());
  CHECK(c.nal_length_size == 4);
  CHECK(c.parameter_sets == std::vector<std::string>{kVps, kHevcSps, kHevcPps});

  const std::string avc = AvcRecord(kAvcSps, kAvcPps), hevc = HevcRecord();
  for (size_t n = 0; n < avc.size(); ++n) {
    CHECK(ParseDecoderConfig(Codec::kH264, Span(avc).first(n), c).code() ==
          absl::StatusCode::kInvalidArgument);
  }
  for (size_t n = 0; n < hevc.size(); ++n) {
    CHECK(ParseDecoderConfig(Codec::kHevc, Span(hevc).first(n), c).code() ==
          absl::StatusCode::kInvalidArgument);
  }
  std::string v0 = avc;
  v0[0] = 0;
  CHECK(ParseDecoderConfig(Codec::kH264, Span(v0), c).code() == absl::StatusCode::kInvalidArgument);
  const absl::Status three =
      ParseDecoderConfig(Codec::kH264, Span(AvcRecord(kAvcSps, kAvcPps, 3)), c);
  CHECK(three.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(three.message()).find("NAL length size 3") != std::string::npos);
}

// An AVC record with one SPS and `pps` copies of `pps_bytes` (each PPS NAL header byte 0x68).
std::string AvcRecordWithPps(size_t pps, size_t pps_bytes) {
  std::string r = AvcRecord(kAvcSps, kAvcPps);
  r.resize(r.size() - 3 - kAvcPps.size());  // drop the one PPS and its count
  U8(r, static_cast<int>(pps));
  for (size_t i = 0; i < pps; ++i) {
    U16(r, static_cast<int>(pps_bytes));
    r += std::string(1, '\x68') + std::string(pps_bytes - 1, '\x01');
  }
  return r;
}

TEST_CASE(
    "R-3 RTMP FLV: a decoder configuration past 32 parameter sets or 16 KiB of them is "
    "refused, not copied before every keyframe") {
  DecoderConfig c;
  // 31 PPS + the SPS = 32 sets: taken; 32 PPS: refused, naming why.
  REQUIRE(ParseDecoderConfig(Codec::kH264, Span(AvcRecordWithPps(31, 16)), c).ok());
  CHECK(c.parameter_sets.size() == media::kMaxParameterSets);
  absl::Status many = ParseDecoderConfig(Codec::kH264, Span(AvcRecordWithPps(32, 16)), c);
  CHECK(many.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(many.message()).find("parameter sets") != std::string::npos);
  // Two 8 KiB PPS are past 16 KiB with the SPS; 255 × 64 KiB (the amplification) as well.
  CHECK_FALSE(ParseDecoderConfig(Codec::kH264, Span(AvcRecordWithPps(2, 8192)), c).ok());
  CHECK(ParseDecoderConfig(Codec::kH264, Span(AvcRecordWithPps(2, 4096)), c).ok());
  CHECK_FALSE(ParseDecoderConfig(Codec::kH264, Span(AvcRecordWithPps(255, 65535)), c).ok());
}

TEST_CASE("S-1 RTMP FLV: an H.264 sequence header announces the video track once per change") {
  Capture cap;
  FlvDepacketizer d(cap.Sink());
  const std::string header = Legacy(1, 0, 0, AvcRecord(kAvcSps, kAvcPps));
  REQUIRE(d.OnVideo(0, Span(header)).ok());
  REQUIRE(cap.tracks.size() == 1);
  const auto& t = cap.tracks[0];
  CHECK(t.pid == kVideoPid);
  CHECK(t.codec == Codec::kH264);
  CHECK(t.codec_string == "avc1.64000d");
  CHECK(t.width == 320);
  CHECK(t.height == 240);
  CHECK(t.parameter_sets == std::vector<std::string>{kAvcSps, kAvcPps});
  REQUIRE(d.OnVideo(40, Span(header)).ok());  // the same again: nothing new
  CHECK(cap.tracks.size() == 1);
  const std::string pps2 = Hex("68ebe3cb2c");
  REQUIRE(d.OnVideo(80, Span(Legacy(1, 0, 0, AvcRecord(kAvcSps, pps2)))).ok());
  REQUIRE(cap.tracks.size() == 2);
  CHECK(cap.tracks[1].parameter_sets == std::vector<std::string>{kAvcSps, pps2});
  CHECK(cap.frames.empty());
}

TEST_CASE("S-1 RTMP FLV: an H.264 key frame leaves as Annex B with AUD, SPS, PPS and the IDR") {
  Capture cap;
  FlvDepacketizer d(cap.Sink());
  REQUIRE(d.OnVideo(0, Span(Legacy(1, 0, 0, AvcRecord(kAvcSps, kAvcPps)))).ok());
  REQUIRE(d.OnVideo(0, Span(Legacy(1, 1, 0, LengthPrefixed({kAvcIdr})))).ok());
  REQUIRE(d.OnVideo(40, Span(Legacy(2, 1, 0, LengthPrefixed({kNonIdr})))).ok());
  REQUIRE(cap.frames.size() == 2);
  const auto& key = cap.frames[0];
  CHECK(key.pid == kVideoPid);
  CHECK(key.codec == Codec::kH264);
  CHECK(key.keyframe);
  CHECK(absl::BytesToHexString(*key.data) ==
        absl::BytesToHexString(Hex("0000000109f0") + kStart + kAvcSps + kStart + kAvcPps + kStart +
                               kAvcIdr));
  const auto& delta = cap.frames[1];
  CHECK_FALSE(delta.keyframe);
  CHECK(absl::BytesToHexString(*delta.data) == absl::BytesToHexString(kAud264 + kStart + kNonIdr));
  CHECK(d.frames() == 2);
}

TEST_CASE("S-1 RTMP FLV: in-band AUD and parameter sets are not repeated in a key frame") {
  Capture cap;
  FlvDepacketizer d(cap.Sink());
  REQUIRE(d.OnVideo(0, Span(Legacy(1, 0, 0, AvcRecord(kAvcSps, kAvcPps, 2)))).ok());
  const std::string body = LengthPrefixed({Hex("09f0"), kAvcSps, kAvcPps, "", kAvcIdr}, 2);
  REQUIRE(d.OnVideo(0, Span(Legacy(1, 1, 0, body))).ok());
  REQUIRE(cap.frames.size() == 1);
  CHECK(absl::BytesToHexString(*cap.frames[0].data) ==
        absl::BytesToHexString(kAud264 + kStart + kAvcSps + kStart + kAvcPps + kStart + kAvcIdr));
}

TEST_CASE("P-7 RTMP FLV: the NAL units a frame names are the ones a start-code search finds") {
  // The fMP4 writer uses them instead of searching; with them or without, the same fragment.
  for (Codec codec : {Codec::kH264, Codec::kHevc}) {
    INFO("HEVC " << (codec == Codec::kHevc));
    Capture cap;
    FlvDepacketizer d(cap.Sink());
    const bool hevc = codec == Codec::kHevc;
    const std::string& idr = hevc ? kHevcIdr : kAvcIdr;
    const std::string& delta = hevc ? kHevcTrail : kNonIdr;
    auto video = [&](int frame_type, uint32_t ms, const std::string& nals) {
      return hevc ? Enhanced(frame_type, 1, "hvc1", nals) : Legacy(frame_type, 1, 0, nals);
    };
    REQUIRE(d.OnVideo(0, Span(hevc ? Enhanced(1, 0, "hvc1", HevcRecord())
                                   : Legacy(1, 0, 0, AvcRecord(kAvcSps, kAvcPps))))
                .ok());
    REQUIRE(d.OnVideo(0, Span(video(1, 0, LengthPrefixed({idr})))).ok());  // + parameter sets
    REQUIRE(d.OnVideo(40, Span(video(2, 40, LengthPrefixed({delta, "", delta})))).ok());
    const std::vector<std::string> many(media::Frame::kMaxKnownNals, delta);  // 8 + the AUD
    REQUIRE(d.OnVideo(80, Span(video(2, 80, LengthPrefixed(many)))).ok());
    REQUIRE(cap.frames.size() == 3);
    CHECK(cap.frames[2].nal_count == 0);  // too many to name: searched
    for (const media::Frame& f : cap.frames) {
      std::vector<std::string_view> found;
      size_t pos = 0;
      std::string_view nal;
      while (media::NextAnnexBNal(*f.data, &pos, &nal)) found.push_back(nal);
      if (f.nal_count == 0) continue;
      REQUIRE(found.size() == f.nal_count);
      for (size_t i = 0; i < found.size(); ++i) {
        CHECK(found[i].data() == f.data->data() + f.nals[i].offset);
        CHECK(found[i].size() == f.nals[i].size);
      }
    }
    CHECK(cap.frames[0].nal_count == (hevc ? 5 : 4));  // AUD, (VPS,) SPS, PPS, IDR
    CHECK(cap.frames[1].nal_count == 3);
    std::vector<media::Frame> unnamed = cap.frames;
    for (media::Frame& f : unnamed) f.nal_count = 0;
    media::Fmp4Writer named_writer(cap.tracks), searching_writer(cap.tracks);
    CHECK(named_writer.Fragment(cap.frames, 1) == searching_writer.Fragment(unnamed, 1));
  }
}

TEST_CASE("S-5 RTMP timestamps: pts is (timestamp + composition offset) x 90, dts timestamp x 90") {
  Capture cap;
  FlvDepacketizer d(cap.Sink());
  REQUIRE(d.OnVideo(1000, Span(Legacy(1, 0, 0, AvcRecord(kAvcSps, kAvcPps)))).ok());
  REQUIRE(d.OnVideo(1000, Span(Legacy(1, 1, 80, LengthPrefixed({kAvcIdr})))).ok());
  REQUIRE(d.OnVideo(1040, Span(Legacy(2, 1, -40, LengthPrefixed({kNonIdr})))).ok());
  REQUIRE(d.OnVideo(1080, Span(Legacy(2, 1, -0x800000, LengthPrefixed({kNonIdr})))).ok());
  REQUIRE(cap.frames.size() == 3);
  CHECK(cap.frames[0].dts == 1000 * 90);
  CHECK(cap.frames[0].pts == 1080 * 90);
  CHECK(cap.frames[1].dts == 1040 * 90);
  CHECK(cap.frames[1].pts == 1000 * 90);
  CHECK(cap.frames[2].pts == (1080 - 0x800000) * int64_t{90});
}

TEST_CASE("S-1 RTMP FLV: video and audio frames before their sequence header are dropped") {
  Capture cap;
  FlvDepacketizer d(cap.Sink());
  CHECK(d.OnVideo(0, Span(Legacy(1, 1, 0, LengthPrefixed({kAvcIdr})))).ok());
  CHECK(d.OnVideo(0, Span(Enhanced(1, 1, "hvc1", LengthPrefixed({kHevcIdr})))).ok());
  CHECK(d.OnAudio(0, Span(Hex("af01") + "raw")).ok());
  // An H.264 configuration does not make HEVC frames decodable.
  REQUIRE(d.OnVideo(0, Span(Legacy(1, 0, 0, AvcRecord(kAvcSps, kAvcPps)))).ok());
  CHECK(d.OnVideo(0, Span(Enhanced(1, 3, "hvc1", LengthPrefixed({kHevcIdr})))).ok());
  CHECK(cap.frames.empty());
  CHECK(d.frames() == 0);
}

TEST_CASE(
    "S-1 RTMP FLV: malformed video bodies are InvalidArgument and other codecs Unimplemented") {
  Capture cap;
  FlvDepacketizer d(cap.Sink());
  REQUIRE(d.OnVideo(0, Span(Legacy(1, 0, 0, AvcRecord(kAvcSps, kAvcPps)))).ok());
  std::string overrun = LengthPrefixed({kAvcIdr});
  overrun[3] = static_cast<char>(kAvcIdr.size() + 1);  // one byte past the message
  const absl::Status s = d.OnVideo(0, Span(Legacy(1, 1, 0, overrun)));
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(s.message()).find("overruns") != std::string::npos);
  const std::string cut = LengthPrefixed({kAvcIdr}) + Hex("0000");  // half a length prefix
  CHECK(d.OnVideo(0, Span(Legacy(1, 1, 0, cut))).code() == absl::StatusCode::kInvalidArgument);
  CHECK(d.OnVideo(0, {}).code() == absl::StatusCode::kInvalidArgument);
  CHECK(d.OnVideo(0, Span(Hex("1701"))).code() == absl::StatusCode::kInvalidArgument);
  CHECK(d.OnVideo(0, Span(Legacy(1, 3, 0, ""))).code() == absl::StatusCode::kInvalidArgument);
  CHECK(d.OnVideo(0, Span(Legacy(1, 0, 0, AvcRecord(kAvcPps, kAvcPps)))).code() ==
        absl::StatusCode::kInvalidArgument);  // no SPS
  CHECK(d.OnVideo(0, Span(Legacy(1, 1, 0, "", 2))).code() ==
        absl::StatusCode::kUnimplemented);  // Sorenson H.263
  CHECK(cap.frames.empty());
  CHECK(cap.tracks.size() == 1);
}

TEST_CASE("S-1 RTMP FLV: Enhanced RTMP hvc1 announces HEVC and frames carry VPS, SPS and PPS") {
  Capture cap;
  FlvDepacketizer d(cap.Sink());
  REQUIRE(d.OnVideo(0, Span(Enhanced(1, 0, "hvc1", HevcRecord()))).ok());
  REQUIRE(cap.tracks.size() == 1);
  const auto& t = cap.tracks[0];
  CHECK(t.pid == kVideoPid);
  CHECK(t.codec == Codec::kHevc);
  CHECK(t.codec_string == "hvc1.1.6.L60.90");
  CHECK(t.width == 320);
  CHECK(t.height == 240);
  CHECK(t.parameter_sets == std::vector<std::string>{kVps, kHevcSps, kHevcPps});
  REQUIRE(d.OnVideo(10, Span(Enhanced(1, 0, "hvc1", HevcRecord()))).ok());
  CHECK(cap.tracks.size() == 1);

  // CodedFrames: SI24 composition offset. CodedFramesX: offset 0.
  REQUIRE(d.OnVideo(100, Span(Enhanced(1, 1, "hvc1", LengthPrefixed({kHevcIdr}), 40))).ok());
  REQUIRE(d.OnVideo(140, Span(Enhanced(2, 1, "hvc1", LengthPrefixed({kHevcTrail}), -20))).ok());
  REQUIRE(d.OnVideo(180, Span(Enhanced(2, 3, "hvc1", LengthPrefixed({kHevcTrail})))).ok());
  REQUIRE(cap.frames.size() == 3);
  const auto& key = cap.frames[0];
  CHECK(key.codec == Codec::kHevc);
  CHECK(key.keyframe);
  CHECK(absl::BytesToHexString(*key.data) ==
        absl::BytesToHexString(Hex("00000001460150") + kStart + kVps + kStart + kHevcSps + kStart +
                               kHevcPps + kStart + kHevcIdr));
  CHECK(key.dts == 100 * 90);
  CHECK(key.pts == 140 * 90);
  CHECK_FALSE(cap.frames[1].keyframe);
  CHECK(absl::BytesToHexString(*cap.frames[1].data) ==
        absl::BytesToHexString(kAudHevc + kStart + kHevcTrail));
  CHECK(cap.frames[1].dts == 140 * 90);
  CHECK(cap.frames[1].pts == 120 * 90);
  CHECK(cap.frames[2].dts == 180 * 90);
  CHECK(cap.frames[2].pts == 180 * 90);
  // Sequence end and metadata are accepted and produce nothing.
  CHECK(d.OnVideo(200, Span(Enhanced(1, 2, "hvc1", ""))).ok());
  CHECK(d.OnVideo(200, Span(Enhanced(1, 4, "hvc1", Hex("0200")))).ok());
  CHECK(cap.frames.size() == 3);
}

TEST_CASE("S-1 RTMP FLV: an HEVC access unit is a key frame exactly when it has an IRAP NAL") {
  Capture cap;
  FlvDepacketizer d(cap.Sink());
  REQUIRE(d.OnVideo(0, Span(Enhanced(1, 0, "hvc1", HevcRecord()))).ok());
  for (int type = 0; type <= 31; ++type) {
    std::string nal = kHevcTrail;
    nal[0] = static_cast<char>(type << 1);
    REQUIRE(d.OnVideo(0, Span(Enhanced(2, 3, "hvc1", LengthPrefixed({nal})))).ok());
    REQUIRE(cap.frames.size() == static_cast<size_t>(type + 1));
    INFO("NAL type " << type);
    CHECK(cap.frames.back().keyframe == (type >= 16 && type <= 23));
  }
}

TEST_CASE("S-1 RTMP FLV: Enhanced RTMP avc1 frames match the legacy H.264 form") {
  Capture legacy, enhanced;
  FlvDepacketizer a(legacy.Sink()), b(enhanced.Sink());
  REQUIRE(a.OnVideo(0, Span(Legacy(1, 0, 0, AvcRecord(kAvcSps, kAvcPps)))).ok());
  REQUIRE(a.OnVideo(0, Span(Legacy(1, 1, 33, LengthPrefixed({kAvcIdr})))).ok());
  REQUIRE(b.OnVideo(0, Span(Enhanced(1, 0, "avc1", AvcRecord(kAvcSps, kAvcPps)))).ok());
  REQUIRE(b.OnVideo(0, Span(Enhanced(1, 1, "avc1", LengthPrefixed({kAvcIdr}), 33))).ok());
  REQUIRE(legacy.frames.size() == 1);
  REQUIRE(enhanced.frames.size() == 1);
  CHECK(*legacy.frames[0].data == *enhanced.frames[0].data);
  CHECK(legacy.frames[0].pts == enhanced.frames[0].pts);
  CHECK(enhanced.tracks.at(0).codec_string == "avc1.64000d");
}

TEST_CASE("S-1 RTMP FLV: an Enhanced RTMP FourCC other than hvc1 or avc1 is Unimplemented") {
  Capture cap;
  FlvDepacketizer d(cap.Sink());
  for (std::string_view fourcc : {"av01", "vp09", "hev1"}) {
    INFO(fourcc);
    CHECK(d.OnVideo(0, Span(Enhanced(1, 0, fourcc, "\x81"))).code() ==
          absl::StatusCode::kUnimplemented);
  }
  CHECK(d.OnVideo(0, Span(Hex("9068"))).code() == absl::StatusCode::kInvalidArgument);  // short
  CHECK(cap.tracks.empty());
}

const std::string kAscHeader = Hex("af001210");  // AAC-LC, 44100 Hz, 2 channels

TEST_CASE("S-1 RTMP FLV: an AAC AudioSpecificConfig announces the audio track once per change") {
  Capture cap;
  FlvDepacketizer d(cap.Sink());
  REQUIRE(d.OnAudio(0, Span(Hex("af00"))).ok());  // empty: not known yet, nothing announced
  CHECK(cap.tracks.empty());
  REQUIRE(d.OnAudio(0, Span(kAscHeader)).ok());
  REQUIRE(cap.tracks.size() == 1);
  const auto& t = cap.tracks[0];
  CHECK(t.pid == kAudioPid);
  CHECK(t.codec == Codec::kAac);
  CHECK(t.codec_string == "mp4a.40.2");
  CHECK(t.sample_rate == 44100);
  CHECK(t.channels == 2);
  CHECK(t.aac_object_type == 2);
  CHECK(t.audio_specific_config == Hex("1210"));
  REQUIRE(d.OnAudio(20, Span(kAscHeader)).ok());
  CHECK(cap.tracks.size() == 1);
  REQUIRE(d.OnAudio(40, Span(Hex("af001188"))).ok());  // AAC-LC, 48000 Hz, 1 channel
  REQUIRE(cap.tracks.size() == 2);
  CHECK(cap.tracks[1].sample_rate == 48000);
  CHECK(cap.tracks[1].channels == 1);
}

TEST_CASE("S-1 RTMP FLV: a raw AAC frame gets an ADTS header that parses back the same") {
  Capture cap;
  FlvDepacketizer d(cap.Sink());
  REQUIRE(d.OnAudio(0, Span(kAscHeader)).ok());
  const std::string raw(100, '\x21');
  REQUIRE(d.OnAudio(1234, Span(Hex("af01") + raw)).ok());
  REQUIRE(cap.frames.size() == 1);
  const auto& f = cap.frames[0];
  CHECK(f.pid == kAudioPid);
  CHECK(f.codec == Codec::kAac);
  CHECK(f.keyframe);
  CHECK(f.pts == 1234 * 90);
  CHECK(f.dts == 1234 * 90);
  // Sync FFF, MPEG-4, no CRC; profile 1 (LC), index 4, channels 2; length 107; fullness 7FF.
  CHECK(absl::BytesToHexString(f.data->substr(0, 7)) == "fff150800d7ffc");
  CHECK(f.data->substr(7) == raw);
  auto h = media::ParseAdtsHeader(Span(*f.data));
  REQUIRE(h);
  CHECK(h->object_type == 2);
  CHECK(h->sample_rate == 44100);
  CHECK(h->channels == 2);
  CHECK(h->header_bytes == 7);
  CHECK(h->frame_bytes == 107);
}

TEST_CASE("S-1 RTMP FLV: AdtsHeaderFor round trips every rate, channel count and a large frame") {
  for (int index = 0; index <= 12; ++index) {
    for (int channels = 1; channels <= 7; ++channels) {
      for (size_t payload : {size_t{0}, size_t{1}, size_t{0x1fff - 7}}) {
        const std::string h = AdtsHeaderFor(2, index, channels, payload);
        REQUIRE(h.size() == 7);
        auto parsed = media::ParseAdtsHeader(Span(h));
        REQUIRE(parsed);
        CHECK(parsed->object_type == 2);
        CHECK(parsed->sampling_index == index);
        CHECK(parsed->channels == channels);
        CHECK(parsed->frame_bytes == payload + 7);
      }
    }
  }
}

TEST_CASE("S-1 RTMP FLV: MP3 is Unimplemented and a bad AAC configuration is refused") {
  Capture cap;
  FlvDepacketizer d(cap.Sink());
  CHECK(d.OnAudio(0, Span(Hex("2f00ff"))).code() == absl::StatusCode::kUnimplemented);  // MP3
  CHECK(d.OnAudio(0, Span(Hex("af001690"))).code() ==
        absl::StatusCode::kInvalidArgument);                   // sampling index 13
  const absl::Status s = d.OnAudio(0, Span(Hex("af001790")));  // index 15: explicit rate
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(s.message()).find("sampling frequency index 15") != std::string::npos);
  CHECK(d.OnAudio(0, Span(Hex("af0012"))).code() == absl::StatusCode::kInvalidArgument);
  CHECK(d.OnAudio(0, Span(Hex("af02"))).code() == absl::StatusCode::kInvalidArgument);
  CHECK(d.OnAudio(0, {}).code() == absl::StatusCode::kInvalidArgument);
  CHECK(cap.tracks.empty());
  REQUIRE(d.OnAudio(0, Span(kAscHeader)).ok());
  const std::string huge(0x1fff - 6, 'x');  // one byte more than a 13-bit ADTS length holds
  CHECK(d.OnAudio(0, Span(Hex("af01") + huge)).code() == absl::StatusCode::kInvalidArgument);
  CHECK(cap.frames.empty());
}

TEST_CASE("R-2 RTMP timestamps: a clock stepped by 2^31 ms again and again starts over, bounded") {
  TimestampExtender x;
  uint32_t ms = 0;
  int64_t extended = x.Extend(ms);
  int64_t largest = extended;
  for (int i = 0; i < 2000; ++i) {
    ms += 0x7fffffffu;
    extended = x.Extend(ms);
    largest = std::max(largest, extended);
  }
  CHECK(largest <= TimestampExtender::kMaxMs);
  CHECK(largest > TimestampExtender::kMaxMs - 0x80000000LL);  // it did run up to the bound
  CHECK(extended >= 0);
}

TEST_CASE("S-5 RTMP timestamps: TimestampExtender is monotonic and continues across the wrap") {
  TimestampExtender x;
  CHECK(x.Extend(5000) == 5000);  // the first value is kept
  CHECK(x.Extend(5040) == 5040);
  CHECK(x.Extend(0x80000000u) == 0x80000000ll);  // forward steps under 2^31
  CHECK(x.Extend(0xFFFFFF00u) == 0xFFFFFF00ll);
  CHECK(x.Extend(0x00000100u) == 0xFFFFFF00ll + 512);  // the wrap moves forward
  CHECK(x.Extend(0x00000200u) == 0xFFFFFF00ll + 768);
  CHECK(x.Extend(0x80000100u) == 0x180000100ll);
  CHECK(x.Extend(0xFFFFFFF0u) == 0x1FFFFFFF0ll);
  CHECK(x.Extend(0x00000010u) == 0x200000010ll);  // and again, 2^33 on
  TimestampExtender y;                            // a clock starting just before the wrap
  const int64_t before = y.Extend(0xFFFFFF00u);
  CHECK(before == 0xFFFFFF00ll);
  CHECK(y.Extend(0x00000100u) - before == 512);
  TimestampExtender z;  // 40 ms steps across the wrap never go back
  z.Extend(0xFFFFF000u);
  for (uint32_t i = 1; i <= 400; ++i) {
    CHECK(z.Extend(0xFFFFF000u + 40 * i) == 0xFFFFF000ll + 40 * i);
  }
}

TEST_CASE("S-5 RTMP timestamps: a small backward step moves the clock back by that amount only") {
  TimestampExtender x;
  CHECK(x.Extend(1000) == 1000);
  CHECK(x.Extend(1040) == 1040);  // video
  CHECK(x.Extend(1023) == 1023);  // audio a little behind
  CHECK(x.Extend(1080) == 1080);
  CHECK(x.Extend(0x00000005u) == 5);  // far back, still less than 2^31: back
  TimestampExtender w;
  CHECK(w.Extend(0x00000010u) == 0x10);
  CHECK(w.Extend(0xFFFFFFF0u) == -0x10);  // just before the start: backward, not 49 days on
}

TEST_CASE("S-5 RTMP timestamps: frame timestamps keep increasing across the 32-bit wrap") {
  Capture cap;
  FlvDepacketizer d(cap.Sink());
  REQUIRE(d.OnAudio(0xFFFFFFC0u, Span(kAscHeader)).ok());
  REQUIRE(d.OnVideo(0xFFFFFFC0u, Span(Legacy(1, 0, 0, AvcRecord(kAvcSps, kAvcPps)))).ok());
  REQUIRE(d.OnVideo(0xFFFFFFE0u, Span(Legacy(1, 1, 40, LengthPrefixed({kAvcIdr})))).ok());
  REQUIRE(d.OnAudio(0x00000010u, Span(Hex("af01") + "a")).ok());
  REQUIRE(d.OnVideo(0x00000008u, Span(Legacy(2, 1, 0, LengthPrefixed({kNonIdr})))).ok());
  REQUIRE(cap.frames.size() == 3);
  CHECK(cap.frames[0].dts == 0xFFFFFFE0ll * 90);
  CHECK(cap.frames[0].pts == (0xFFFFFFE0ll + 40) * 90);
  CHECK(cap.frames[1].dts == 0x100000010ll * 90);
  CHECK(cap.frames[2].dts == 0x100000008ll * 90);
}

}  // namespace
}  // namespace meshwork::rtmp
