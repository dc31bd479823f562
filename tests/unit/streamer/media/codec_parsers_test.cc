// S-3 codec parsers, checked against real encoder output: ffmpeg (libx264, libx265, aac)
// produces the bitstreams at test time, ffprobe and ffmpeg's trace_headers bitstream filter
// say what they contain.
#include "streamer/media/codec_parsers.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/unit/streamer/media/test_files.h"

namespace meshwork::media {
namespace {

namespace fs = std::filesystem;

const fs::path& CodecDir() {
  static TempDir dir("meshwork-media-codec");
  return dir.path();
}

bool HaveEncoder(const std::string& name) {
  return Capture("ffmpeg -hide_banner -encoders 2>/dev/null").find(" " + name + " ") !=
         std::string::npos;
}

// Runs ffmpeg to write `name` in the temp dir; returns its path, or "" when ffmpeg failed.
std::string Generate(const std::string& name, const std::string& args) {
  fs::path out = CodecDir() / name;
  std::string cmd = "ffmpeg -hide_banner -loglevel error -y " + args + " " + out.string();
  if (std::system(cmd.c_str()) != 0 || !fs::exists(out)) return "";
  return out.string();
}

double Rate(const std::string& fraction) {
  auto slash = fraction.find('/');
  if (slash == std::string::npos) return std::stod(fraction);
  return std::stod(fraction.substr(0, slash)) / std::stod(fraction.substr(slash + 1));
}

// The first SPS as ffmpeg's trace_headers bitstream filter decodes it: field name → value,
// and bit position → the bits of the field that starts there.
struct TracedSps {
  std::map<std::string, long long> fields;
  std::map<int, std::string> bits;
  // The bits [from, from + count) of the NAL unit, from the traced fields.
  uint64_t Bits(int from, int count) const {
    uint64_t v = 0;
    for (int i = from; i < from + count; ++i) {
      auto it = bits.upper_bound(i);
      REQUIRE(it != bits.begin());
      --it;
      int off = i - it->first;
      REQUIRE(off < static_cast<int>(it->second.size()));
      v = (v << 1) | (it->second[off] == '1');
    }
    return v;
  }
};

TracedSps TraceSps(const std::string& file) {
  std::string text = Capture("ffmpeg -hide_banner -i " + file +
                             " -c:v copy -an -frames:v 1 -bsf:v trace_headers -f null - 2>&1");
  static const std::regex field(R"(\]\s+(\d+)\s+(\S+)\s+([01]+) = (-?\d+)\s*$)");
  TracedSps sps;
  std::istringstream in(text);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.find("Sequence Parameter Set") != std::string::npos) {
      if (!sps.fields.empty()) break;
      inside = true;
      continue;
    }
    if (!inside) continue;
    std::smatch m;
    if (!std::regex_search(line, m, field)) {
      if (!sps.fields.empty()) break;
      continue;
    }
    sps.fields.emplace(m[2].str(), std::stoll(m[4].str()));
    sps.bits.emplace(std::stoi(m[1].str()), m[3].str());
  }
  return sps;
}

std::string FirstNal(const std::string& annexb, bool hevc, int type) {
  for (std::string_view nal : SplitAnnexB(annexb)) {
    if ((hevc ? HevcNalType(nal) : H264NalType(nal)) == type) return std::string(nal);
  }
  return "";
}

int H264ProfileIdc(const std::string& name) {
  static const std::map<std::string, int> kProfiles = {
      {"Baseline", 66},    {"Constrained Baseline", 66},
      {"Main", 77},        {"Extended", 88},
      {"High", 100},       {"High 10", 110},
      {"High 4:2:2", 122}, {"High 4:4:4 Predictive", 244}};
  auto it = kProfiles.find(name);
  return it == kProfiles.end() ? -1 : it->second;
}

std::string Lavfi(const std::string& size, const std::string& rate) {
  return "-f lavfi -i testsrc2=size=" + size + ":rate=" + rate + " -frames:v 3";
}

}  // namespace

TEST_CASE("S-3 SplitAnnexB splits on 3- and 4-byte start codes") {
  const std::string data(
      "\x00\x00\x00\x01\x67\x64\x00\x00\x01\x68\xee\x00\x00\x00\x01\x65\x88"
      "\x00\x00\x03\x01\x00\x00",
      23);
  auto nals = SplitAnnexB(data);
  REQUIRE(nals.size() == 3);
  CHECK(nals[0] == std::string_view("\x67\x64", 2));
  CHECK(nals[1] == std::string_view("\x68\xee", 2));
  // Trailing zero bytes belong to no NAL unit; an emulation-prevented 00 00 03 01 is no
  // start code.
  CHECK(nals[2] == std::string_view("\x65\x88\x00\x00\x03\x01", 6));
  CHECK(SplitAnnexB("").empty());
  CHECK(SplitAnnexB(std::string("\x00\x00\x01", 3)).empty());
  CHECK(SplitAnnexB("no start code here").empty());
  // Bytes before the first start code are not a NAL unit.
  const std::string leading("\xaa\xbb\x00\x00\x01\x09\xf0", 7);
  auto lead = SplitAnnexB(leading);
  REQUIRE(lead.size() == 1);
  CHECK(lead[0] == std::string_view("\x09\xf0", 2));
}

TEST_CASE("P-7 NextAnnexBNal walks the NAL units one at a time and can stop early") {
  const std::string data(
      "\x00\x00\x00\x01\x67\x64\x00\x00\x01\x68\xee\x00\x00\x00\x01\x65\x88"
      "\x00\x00\x03\x01\x00\x00\x01\x41\x9a",
      26);
  std::vector<std::string_view> walked;
  size_t pos = 0;
  std::string_view nal;
  while (NextAnnexBNal(data, &pos, &nal)) walked.push_back(nal);
  CHECK(walked == SplitAnnexB(data));
  REQUIRE(walked.size() == 4);
  // Stopping at the first slice (type 5) leaves the rest unread; the walk resumes from there.
  pos = 0;
  int seen = 0;
  while (NextAnnexBNal(data, &pos, &nal)) {
    ++seen;
    if ((nal[0] & 0x1f) == 5) break;
  }
  CHECK(seen == 3);
  REQUIRE(NextAnnexBNal(data, &pos, &nal));
  CHECK(nal == std::string_view("\x41\x9a", 2));
  CHECK_FALSE(NextAnnexBNal(data, &pos, &nal));
  CHECK_FALSE(NextAnnexBNal(data, &pos, &nal));  // stays at the end
  pos = 0;
  CHECK_FALSE(NextAnnexBNal("no start code", &pos, &nal));

  // Until a slice: the NAL units before it as usual, then the slice with everything after it
  // (its end not searched), then the end.
  auto slice = +[](uint8_t h) { return (h & 0x1f) >= 1 && (h & 0x1f) <= 5; };
  pos = 0;
  std::vector<std::string_view> until;
  while (NextAnnexBNalUntil(data, &pos, &nal, slice)) until.push_back(nal);
  REQUIRE(until.size() == 3);
  CHECK(until[0] == walked[0]);
  CHECK(until[1] == walked[1]);
  CHECK(until[2] == std::string_view(data).substr(15));  // 65 88 … 41 9a
  CHECK(pos == data.size());
  // A stream without a slice is walked whole.
  pos = 0;
  const std::string params("\x00\x00\x01\x67\x64\x00\x00\x01\x68\xee", 10);
  int count = 0;
  while (NextAnnexBNalUntil(params, &pos, &nal, slice)) ++count;
  CHECK(count == 2);
}

TEST_CASE("R-3 ScanAccessUnitHead keeps at most 32 parameter sets and 16 KiB of them") {
  std::string au = std::string("\x00\x00\x00\x01\x67\x64\x00\x1f", 8);            // the SPS
  for (int i = 0; i < 40; ++i) au += std::string("\x00\x00\x01\x68\xee\x3c", 6);  // 40 PPS
  au += std::string("\x00\x00\x01\x65\x88\x84", 6);                               // IDR slice
  auto many = ScanAccessUnitHead(au, /*hevc=*/false);
  CHECK(many.keyframe);
  CHECK(many.parameter_sets.size() == kMaxParameterSets);
  CHECK_FALSE(many.sps.empty());
  // One PPS bigger than the whole bound: left out; the SPS stays.
  std::string big = std::string("\x00\x00\x00\x01\x67\x64\x00\x1f\x00\x00\x01\x68", 12) +
                    std::string(kMaxParameterSetBytes + 10, 'p') +
                    std::string("\x00\x00\x01\x65\x88\x84", 6);
  auto huge = ScanAccessUnitHead(big, false);
  REQUIRE(huge.parameter_sets.size() == 1);
  size_t bytes = 0;
  for (const auto& set : huge.parameter_sets) bytes += set.size();
  CHECK(bytes <= kMaxParameterSetBytes);
}

TEST_CASE("S-3 P-7 ScanAccessUnitHead: keyframe, SPS and parameter sets up to the first slice") {
  // H.264: AUD, SPS, PPS, an IDR slice, then what looks like a second SPS after it: slice
  // data as far as the scan goes (it stops at the first slice), so neither SPS nor parameter
  // set.
  const std::string idr(
      "\x00\x00\x00\x01\x09\xf0"
      "\x00\x00\x00\x01\x67\x64\x00\x1f"
      "\x00\x00\x01\x68\xee\x3c"
      "\x00\x00\x01\x65\x88\x84"
      "\x00\x00\x01\x67\x42",
      31);
  auto head = ScanAccessUnitHead(idr, /*hevc=*/false);
  CHECK(head.keyframe);
  CHECK(head.sps == std::string_view("\x67\x64\x00\x1f", 4));
  REQUIRE(head.parameter_sets.size() == 2);
  CHECK(head.parameter_sets[1] == std::string("\x68\xee\x3c", 3));
  // An SPS after the first slice is slice data as far as the scan goes: not seen.
  const std::string p_frame("\x00\x00\x01\x41\x9a\x00\x00\x01\x67\x64", 10);
  auto p = ScanAccessUnitHead(p_frame, false);
  CHECK_FALSE(p.keyframe);
  CHECK(p.sps.empty());
  CHECK(p.parameter_sets.empty());
  // HEVC: VPS (32), SPS (33), PPS (34), an IDR_W_RADL slice (19).
  const std::string hevc(
      "\x00\x00\x01\x40\x01\x0c"
      "\x00\x00\x01\x42\x01\x01"
      "\x00\x00\x01\x44\x01\xc1"
      "\x00\x00\x01\x26\x01\xaf",
      24);
  auto h = ScanAccessUnitHead(hevc, /*hevc=*/true);
  CHECK(h.keyframe);
  CHECK(h.sps == std::string_view("\x42\x01\x01", 3));
  CHECK(h.parameter_sets.size() == 3);
  // Read as H.264 the same bytes hold no slice type 5 and no SPS (types 0, 2, 4, 6).
  CHECK_FALSE(ScanAccessUnitHead(hevc, false).keyframe);
  CHECK(ScanAccessUnitHead("", false).parameter_sets.empty());
}

TEST_CASE("S-10 an AAC access unit of several ADTS frames is cut between them, on the sample") {
  // Three 16-byte frames at 44.1 kHz (sampling index 4): 1024 samples is 2089.8 ticks of
  // 90 kHz, so each cut time must round to the tick that rescales back to its sample.
  std::string one("\xff\xf1\x50\x80\x02\x1f\xfc", 7);
  one.append(9, '\x11');
  for (int64_t dts : {int64_t{0}, int64_t{123'457}, int64_t{153'003'915'852'704}}) {
    INFO("dts " << dts);
    auto rescale = [](int64_t t) {
      return static_cast<int64_t>(static_cast<__int128>(t) * 44'100 / 90'000);
    };
    Frame f;
    f.codec = Codec::kAac;
    f.dts = dts;
    f.pts = dts + 10;
    f.data = std::make_shared<const std::string>(one + one + one);
    const int64_t end = AdtsEnd(f);
    CHECK(rescale(end) == rescale(dts) + 3 * 1024);
    // Cut just after the second frame starts: the first stays, the other two come back.
    auto rest = SplitAdtsAt(f, dts + 2000);
    REQUIRE(rest);
    CHECK(*f.data == one);
    CHECK(*rest->data == one + one);
    CHECK(rescale(rest->dts) == rescale(dts) + 1024);
    CHECK(rest->pts - rest->dts == 10);
    CHECK(AdtsEnd(*rest) == end);
    CHECK(AdtsEnd(f) == rest->dts);  // no gap, no overlap
    // Nothing starts at or after a time past the last frame's start; all of it at or before
    // the first.
    Frame g = *rest;
    CHECK_FALSE(SplitAdtsAt(g, end));
    CHECK(*g.data == one + one);
    auto whole = SplitAdtsAt(g, g.dts);
    REQUIRE(whole);
    CHECK(*whole->data == one + one);
    CHECK_FALSE(g.data);
  }
  // Not ADTS: kept whole.
  Frame junk;
  junk.codec = Codec::kAac;
  junk.data = std::make_shared<const std::string>("not adts at all");
  CHECK_FALSE(SplitAdtsAt(junk, 1));
  CHECK(*junk.data == "not adts at all");
}

TEST_CASE("S-3 ScanAdtsFrames: whole frames, a frame cut at the end, garbage after frames") {
  // AAC-LC 48 kHz stereo, no CRC, 16-byte frames (7 header bytes + 9 payload bytes).
  std::string frame("\xff\xf1\x4c\x80\x02\x1f\xfc", 7);
  frame.append(9, '\x11');
  auto run = ScanAdtsFrames(frame + frame + frame);
  CHECK(run.bytes == 48);
  CHECK(run.frames == 3);
  CHECK_FALSE(run.cut);
  REQUIRE(run.first);
  CHECK(run.first->sample_rate == 48000);
  CHECK(run.first->channels == 2);
  // The third frame continues in the next PES: cut, starting at `bytes`.
  auto cut = ScanAdtsFrames(frame + frame + frame.substr(0, 10));
  CHECK(cut.bytes == 32);
  CHECK(cut.frames == 2);
  CHECK(cut.cut);
  // A frame cut before any whole one: nothing whole, cut at 0.
  auto lone = ScanAdtsFrames(frame.substr(0, 12));
  CHECK(lone.frames == 0);
  CHECK(lone.bytes == 0);
  CHECK(lone.cut);
  // Garbage after a frame ends the run there, not cut.
  auto junk = ScanAdtsFrames(frame + "garbage!");
  CHECK(junk.bytes == 16);
  CHECK(junk.frames == 1);
  CHECK_FALSE(junk.cut);
  CHECK(ScanAdtsFrames("").frames == 0);
}

// The NAL units of `data` found one byte at a time: what SplitAnnexB must return however it
// searches.
std::vector<std::string_view> SplitAnnexBByBytes(std::string_view data) {
  std::vector<size_t> codes;
  for (size_t i = 0; i + 3 <= data.size(); ++i) {
    if (data[i] == 0 && data[i + 1] == 0 && data[i + 2] == 1) codes.push_back(i);
  }
  std::vector<std::string_view> nals;
  for (size_t k = 0; k < codes.size(); ++k) {
    size_t begin = codes[k] + 3;
    size_t end = k + 1 < codes.size() ? codes[k + 1] : data.size();
    if (end < begin) continue;  // 00 00 01 01 ...: overlapping codes
    while (end > begin && data[end - 1] == 0) --end;
    if (end > begin) nals.push_back(data.substr(begin, end - begin));
  }
  return nals;
}

TEST_CASE("P-7 the start-code search agrees with a byte-by-byte one at every offset") {
  std::mt19937 rng(20261206);
  for (int round = 0; round < 20000; ++round) {
    // Bytes 0..2 only, so start codes are dense and fall across every 16-byte block edge.
    std::string data(rng() % 80, '\0');
    for (char& c : data) c = static_cast<char>(rng() % (round % 2 ? 3 : 256));
    INFO("round " << round << " size " << data.size());
    REQUIRE(SplitAnnexB(data) == SplitAnnexBByBytes(data));
  }
}

TEST_CASE("S-3 UnescapeRbsp removes emulation-prevention bytes") {
  CHECK(UnescapeRbsp(std::string("\x00\x00\x03\x01", 4)) == std::string("\x00\x00\x01", 3));
  CHECK(UnescapeRbsp(std::string("\x00\x00\x03\x00\x00\x03", 6)) ==
        std::string("\x00\x00\x00\x00", 4));
  CHECK(UnescapeRbsp(std::string("\x00\x03\x00\x00", 4)) == std::string("\x00\x03\x00\x00", 4));
  CHECK(UnescapeRbsp("abc") == "abc");
}

TEST_CASE("S-3 H.264 SPS of real libx264 output gives the codec string ffprobe implies") {
  struct Case {
    std::string name;
    std::string args;
  };
  const std::vector<Case> cases = {
      {"baseline", Lavfi("640x360", "25") + " -c:v libx264 -profile:v baseline -pix_fmt yuv420p"},
      {"main", Lavfi("640x360", "25") + " -c:v libx264 -profile:v main -pix_fmt yuv420p"},
      {"high", Lavfi("640x360", "25") + " -c:v libx264 -profile:v high -pix_fmt yuv420p"},
      {"high-cqm", Lavfi("1280x720", "50") +
                       " -c:v libx264 -profile:v high -pix_fmt yuv420p -x264-params cqm=jvt"},
      {"interlaced",
       Lavfi("640x360", "25") + " -c:v libx264 -pix_fmt yuv420p -x264-params interlaced=1"},
      {"high444", Lavfi("320x240", "30") + " -c:v libx264 -pix_fmt yuv444p"},
      {"high422", Lavfi("320x240", "24") + " -c:v libx264 -pix_fmt yuv422p"},
      {"high10", Lavfi("320x240", "25") + " -c:v libx264 -pix_fmt yuv420p10le"},
      {"cropped-ntsc", Lavfi("634x354", "30000/1001") + " -c:v libx264 -pix_fmt yuv420p"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      std::string file = Generate("sps-" + c.name + ".h264", c.args + " -f h264");
      INFO("ffmpeg (from tools/bootstrap) encodes " << c.name);
      REQUIRE_FALSE(file.empty());
      std::string sps = FirstNal(ReadFile(file), false, 7);
      REQUIRE(!sps.empty());
      auto probe = ProbeVideo(file);
      TracedSps traced = TraceSps(file);
      REQUIRE(traced.fields.count("profile_idc"));
      int profile_idc = static_cast<int>(traced.fields["profile_idc"]);
      int level_idc = static_cast<int>(traced.fields["level_idc"]);
      CHECK(profile_idc == H264ProfileIdc(probe["profile"]));
      CHECK(std::to_string(level_idc) == probe["level"]);
      int constraints = 0;
      for (int i = 0; i < 6; ++i) {
        if (traced.fields["constraint_set" + std::to_string(i) + "_flag"]) {
          constraints |= 0x80 >> i;
        }
      }
      if (probe["profile"] == "Constrained Baseline") CHECK((constraints & 0x40) != 0);
      char expected[32];
      std::snprintf(expected, sizeof expected, "avc1.%02x%02x%02x", profile_idc, constraints,
                    level_idc);

      auto info = ParseH264Sps(sps);
      REQUIRE(info);
      INFO(c.name << " → " << info->codec_string);
      CHECK(info->codec_string == expected);
      CHECK(std::to_string(info->width) == probe["width"]);
      CHECK(std::to_string(info->height) == probe["height"]);
      CHECK(info->frame_rate == Approx(Rate(probe["r_frame_rate"])).epsilon(0.001));
    }
  }
}

TEST_CASE("S-3 HEVC SPS of real libx265 output gives the hvc1 codec string ffprobe implies") {
  INFO("tools/bootstrap installs ffmpeg with libx265");
  REQUIRE(HaveEncoder("libx265"));
  struct Case {
    std::string name;
    std::string args;
  };
  const std::string x265 = " -c:v libx265 -x265-params log-level=error";
  const std::vector<Case> cases = {
      {"main", Lavfi("640x360", "25") + x265 + " -pix_fmt yuv420p"},
      {"main10", Lavfi("640x360", "50") + x265 + " -pix_fmt yuv420p10le"},
      {"rext444", Lavfi("320x240", "30") + x265 + " -pix_fmt yuv444p"},
      {"cropped-ntsc", Lavfi("634x354", "30000/1001") + x265 + " -pix_fmt yuv420p"},
      {"scaling-list",
       Lavfi("320x240", "25") + " -c:v libx265 -x265-params log-level=error:scaling-list=default"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      std::string file = Generate("sps-" + c.name + ".hevc", c.args + " -f hevc");
      INFO("ffmpeg (from tools/bootstrap) encodes " << c.name);
      REQUIRE_FALSE(file.empty());
      std::string sps = FirstNal(ReadFile(file), true, 33);
      REQUIRE(!sps.empty());
      auto probe = ProbeVideo(file);
      TracedSps traced = TraceSps(file);
      REQUIRE(traced.fields.count("general_profile_idc"));
      REQUIRE(traced.fields["sps_max_sub_layers_minus1"] == 0);
      // profile_tier_level() starts at bit 24 of the NAL unit (after the 2-byte header and
      // the first SPS byte) when there are no sub-layers.
      uint64_t profile_space = traced.Bits(24, 2);
      uint64_t tier = traced.Bits(26, 1);
      uint64_t profile_idc = traced.Bits(27, 5);
      CHECK(profile_idc == static_cast<uint64_t>(traced.fields["general_profile_idc"]));
      uint64_t compat_reversed = 0;
      for (int j = 0; j < 32; ++j) compat_reversed |= traced.Bits(32 + j, 1) << j;
      uint64_t level_idc = traced.Bits(112, 8);
      CHECK(level_idc == static_cast<uint64_t>(traced.fields["general_level_idc"]));
      CHECK(std::to_string(level_idc) == probe["level"]);
      std::string expected = "hvc1.";
      if (profile_space) expected.push_back(static_cast<char>('A' + profile_space - 1));
      char buf[32];
      std::snprintf(buf, sizeof buf, "%d.%X.%c%d", static_cast<int>(profile_idc),
                    static_cast<unsigned>(compat_reversed), tier ? 'H' : 'L',
                    static_cast<int>(level_idc));
      expected += buf;
      std::vector<int> constraint_bytes;
      for (int i = 0; i < 6; ++i) {
        constraint_bytes.push_back(static_cast<int>(traced.Bits(64 + 8 * i, 8)));
      }
      while (!constraint_bytes.empty() && constraint_bytes.back() == 0) {
        constraint_bytes.pop_back();
      }
      for (int b : constraint_bytes) {
        std::snprintf(buf, sizeof buf, ".%X", b);
        expected += buf;
      }

      auto info = ParseHevcSps(sps);
      REQUIRE(info);
      INFO(c.name << " → " << info->codec_string);
      CHECK(info->codec_string == expected);
      CHECK(std::to_string(info->width) == probe["width"]);
      CHECK(std::to_string(info->height) == probe["height"]);
      if (traced.fields.count("vui_time_scale")) {
        CHECK(info->frame_rate == Approx(Rate(probe["r_frame_rate"])).epsilon(0.001));
      }
    }
  }
}

TEST_CASE("S-3 the main-profile HEVC codec string has the documented shape") {
  INFO("tools/bootstrap installs ffmpeg with libx265");
  REQUIRE(HaveEncoder("libx265"));
  std::string file =
      Generate("shape.hevc", Lavfi("640x360", "25") +
                                 " -c:v libx265 -x265-params log-level=error -pix_fmt yuv420p "
                                 "-f hevc");
  REQUIRE(!file.empty());
  auto info = ParseHevcSps(FirstNal(ReadFile(file), true, 33));
  REQUIRE(info);
  // Main profile, compatible with Main and Main 10, main tier, progressive frames.
  CHECK(info->codec_string.rfind("hvc1.1.6.L", 0) == 0);
  CHECK(info->codec_string.substr(info->codec_string.rfind('.')) == ".90");
}

TEST_CASE("S-3 ADTS headers of real ffmpeg AAC: sample rate, channels, object type, sizes") {
  struct Case {
    std::string name;
    std::string args;
    int sample_rate;
    int sampling_index;
    int channels;
    std::string asc;
  };
  const std::vector<Case> cases = {
      {"48k-mono", "-f lavfi -i sine=frequency=440:sample_rate=48000 -t 1 -ac 1", 48000, 3, 1,
       std::string("\x11\x88", 2)},
      {"44k-stereo", "-f lavfi -i sine=frequency=440:sample_rate=44100 -t 1 -ac 2", 44100, 4, 2,
       std::string("\x12\x10", 2)},
      {"22k-5.1", "-f lavfi -i sine=frequency=440:sample_rate=22050 -t 1 -ac 6", 22050, 7, 6,
       std::string("\x13\xb0", 2)},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      std::string file = Generate("adts-" + c.name + ".aac", c.args + " -c:a aac -f adts");
      REQUIRE(!file.empty());
      std::string data = ReadFile(file);
      auto bytes = std::span(reinterpret_cast<const uint8_t*>(data.data()), data.size());
      size_t off = 0;
      int frames = 0;
      while (off < bytes.size()) {
        auto h = ParseAdtsHeader(bytes.subspan(off));
        REQUIRE(h);
        CHECK(h->object_type == 2);
        CHECK(h->sample_rate == c.sample_rate);
        CHECK(h->sampling_index == c.sampling_index);
        CHECK(h->channels == c.channels);
        CHECK(h->header_bytes == 7);
        CHECK(h->AudioSpecificConfig() == c.asc);
        CHECK(h->CodecString() == "mp4a.40.2");
        off += h->frame_bytes;
        ++frames;
      }
      // The frames tile the file exactly and last about one second.
      CHECK(off == bytes.size());
      CHECK(frames * 1024.0 / c.sample_rate == Approx(1.0).margin(0.1));
    }
  }
}

TEST_CASE("S-3 ADTS with CRC, and malformed ADTS headers") {
  // protection_absent = 0: 9-byte header; profile field 1 → object type 2 (AAC-LC).
  const uint8_t with_crc[] = {0xff, 0xf0, 0x4c, 0x80, 0x20, 0x1f, 0xfc, 0x00, 0x00};
  auto h = ParseAdtsHeader(with_crc);
  REQUIRE(h);
  CHECK(h->header_bytes == 9);
  CHECK(h->object_type == 2);
  CHECK(h->sample_rate == 48000);
  CHECK(h->channels == 2);
  CHECK(h->frame_bytes == 0x100);
  const uint8_t bad_sync[] = {0xff, 0xe1, 0x4c, 0x80, 0x20, 0x1f, 0xfc};
  CHECK_FALSE(ParseAdtsHeader(bad_sync));
  const uint8_t bad_rate[] = {0xff, 0xf1, 0x7c, 0x80, 0x20, 0x1f, 0xfc};  // index 15
  CHECK_FALSE(ParseAdtsHeader(bad_rate));
  const uint8_t too_short_frame[] = {0xff, 0xf1, 0x4c, 0x80, 0x00, 0x1f, 0xfc};  // length 0
  CHECK_FALSE(ParseAdtsHeader(too_short_frame));
  CHECK_FALSE(ParseAdtsHeader(std::span(with_crc, 6)));
}

TEST_CASE("S-3 codec parsers reject garbage and truncated input") {
  std::string file =
      Generate("trunc.h264", Lavfi("640x360", "25") + " -c:v libx264 -pix_fmt yuv420p -f h264");
  REQUIRE(!file.empty());
  std::string sps = FirstNal(ReadFile(file), false, 7);
  REQUIRE(ParseH264Sps(sps));
  // Every truncation either fails or still parses the size (the VUI is optional).
  for (size_t n = 0; n < sps.size(); ++n) {
    auto info = ParseH264Sps(sps.substr(0, n));
    if (info) {
      CHECK(info->width == 640);
      CHECK(info->height == 360);
    }
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    std::string junk(rng() % 64, '\0');
    for (char& ch : junk) ch = static_cast<char>(rng());
    if (!junk.empty()) junk[0] = static_cast<char>(i % 2 ? 0x67 : 0x42);
    (void)ParseH264Sps(junk);
    if (junk.size() > 1) junk[1] = 0x01;
    (void)ParseHevcSps(junk);
    (void)ParseAdtsHeader(std::span(reinterpret_cast<const uint8_t*>(junk.data()), junk.size()));
    (void)SplitAnnexB(junk);
  }
  CHECK_FALSE(ParseH264Sps(std::string("\x68\x00\x00\x00", 4)));  // a PPS is no SPS
  CHECK_FALSE(ParseHevcSps(std::string("\x40\x01\x0c\x01", 4)));  // a VPS is no SPS
}

}  // namespace meshwork::media
