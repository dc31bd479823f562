// S-10 fMP4 (CMAF) writer: init segments and fragments of real ffmpeg H.264/HEVC + AAC
// (generated at test time and demuxed with TsDemuxer) are read back and decoded by
// ffprobe/ffmpeg; box contents (tfdt, trun offsets, avcC/hvcC/esds) are checked directly.
#include "streamer/media/fmp4_writer.h"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "nlohmann/json.hpp"
#include "streamer/media/codec_parsers.h"
#include "streamer/media/ts_demuxer.h"
#include "tests/unit/streamer/media/test_files.h"

namespace meshwork::media {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr int64_t kShift = 150'000'000'000'000;  // 1.5e14 (90 kHz)

const fs::path& FmpDir() {
  static TempDir dir("meshwork-media-fmp4");
  return dir.path();
}

// A 4 s 640x360@25 video (GOP 50) + 48 kHz sine AAC MPEG-TS, generated once per codec. HEVC
// uses closed GOPs so each fragment alone decodes all its frames (with x265's default open
// GOPs the leading pictures after the CRA at 2 s need the previous fragment).
const std::string& TsFile(const std::string& vcodec) {
  static std::map<std::string, std::string> files;
  auto it = files.find(vcodec);
  if (it != files.end()) return it->second;
  fs::path out = FmpDir() / (vcodec + "-aac.ts");
  std::string params = vcodec == "libx265" ? "-x265-params log-level=error:open-gop=0 " : "";
  std::string cmd =
      "ffmpeg -hide_banner -loglevel error -y -f lavfi -i testsrc2=size=640x360:rate=25 "
      "-f lavfi -i sine=frequency=440:sample_rate=48000 -t 4 -c:v " +
      vcodec + " " + params + "-g 50 -pix_fmt yuv420p -c:a aac -b:a 96k -f mpegts " + out.string();
  REQUIRE(std::system(cmd.c_str()) == 0);
  return files.emplace(vcodec, out.string()).first->second;
}

struct LoadedSource {
  std::vector<TrackInfo> tracks;  // video first, then audio
  std::vector<Frame> frames;      // demuxer order (interleaved)
  TrackInfo video;
  TrackInfo audio;

  std::vector<Frame> Of(uint16_t pid) const {
    std::vector<Frame> out;
    for (const Frame& f : frames) {
      if (f.pid == pid) out.push_back(f);
    }
    return out;
  }
};

LoadedSource Load(const std::string& vcodec) {
  std::string ts = ReadFile(TsFile(vcodec));
  std::map<uint16_t, TrackInfo> tracks;
  LoadedSource s;
  TsDemuxer demuxer({[&](const TrackInfo& t) { tracks[t.pid] = t; },
                     [&](Frame&& f) { s.frames.push_back(std::move(f)); }});
  demuxer.Feed({reinterpret_cast<const uint8_t*>(ts.data()), ts.size()});
  demuxer.Flush();
  for (const auto& [pid, t] : tracks) {
    if (t.is_video()) s.video = t;
    if (t.is_audio()) s.audio = t;
  }
  REQUIRE(s.video.is_video());
  REQUIRE(s.audio.is_audio());
  s.tracks = {s.video, s.audio};
  return s;
}

// The frames split at the second video keyframe (2 s): [0] before, [1] from it on.
struct Split {
  std::vector<Frame> parts[2];
  std::map<uint16_t, int64_t> end_of_first;
  int64_t split_dts = 0;
  const Frame* keyframe = nullptr;
};

Split SplitAtSecondKeyframe(const LoadedSource& s) {
  Split out;
  int keys = 0;
  for (const Frame& f : s.frames) {
    if (f.pid == s.video.pid && f.keyframe && ++keys == 2) {
      out.split_dts = f.dts;
      out.keyframe = &f;
      break;
    }
  }
  REQUIRE(out.keyframe != nullptr);
  for (const Frame& f : s.frames) {
    bool second = f.dts >= out.split_dts;
    out.parts[second ? 1 : 0].push_back(f);
    if (second && !out.end_of_first.count(f.pid)) out.end_of_first[f.pid] = f.dts;
  }
  return out;
}

std::vector<Frame> Shifted(std::vector<Frame> frames, int64_t by) {
  for (Frame& f : frames) {
    f.pts += by;
    f.dts += by;
  }
  return frames;
}

// --- A minimal ISOBMFF reader for the checks ---------------------------------------------

uint32_t U32(std::string_view d, size_t at) {
  return (uint32_t{static_cast<uint8_t>(d[at])} << 24) |
         (uint32_t{static_cast<uint8_t>(d[at + 1])} << 16) |
         (uint32_t{static_cast<uint8_t>(d[at + 2])} << 8) |
         uint32_t{static_cast<uint8_t>(d[at + 3])};
}
uint64_t U64(std::string_view d, size_t at) {
  return (uint64_t{U32(d, at)} << 32) | U32(d, at + 4);
}

struct Box {
  std::string type;
  size_t start = 0;  // of the header
  size_t size = 0;
  std::string_view body;  // after the 8-byte header
};

std::vector<Box> Children(std::string_view d) {
  std::vector<Box> out;
  size_t off = 0;
  while (off + 8 <= d.size()) {
    size_t size = U32(d, off);
    REQUIRE(size >= 8);
    REQUIRE(off + size <= d.size());
    out.push_back({std::string(d.substr(off + 4, 4)), off, size, d.substr(off + 8, size - 8)});
    off += size;
  }
  CHECK(off == d.size());
  return out;
}

// All boxes at a '/'-separated path, e.g. "moof/traf/tfdt".
std::vector<Box> Find(std::string_view d, std::string_view path) {
  size_t slash = path.find('/');
  std::string_view head = path.substr(0, slash);
  std::vector<Box> out;
  for (const Box& b : Children(d)) {
    if (b.type != head) continue;
    if (slash == std::string_view::npos) {
      out.push_back(b);
    } else {
      for (Box inner : Find(b.body, path.substr(slash + 1))) {
        inner.start += static_cast<size_t>(b.body.data() - d.data());
        out.push_back(inner);
      }
    }
  }
  return out;
}

struct Trun {
  uint32_t track_id = 0;
  uint64_t tfdt = 0;
  int32_t data_offset = 0;
  struct Entry {
    uint32_t duration, size, flags;
    int32_t cto;
  };
  std::vector<Entry> samples;
};

// The traf boxes of one moof + mdat fragment.
std::vector<Trun> ParseFragment(std::string_view frag) {
  std::vector<Trun> out;
  auto trafs = Find(frag, "moof/traf");
  for (const Box& traf : trafs) {
    Trun t;
    auto tfhd = Find(traf.body, "tfhd");
    REQUIRE(tfhd.size() == 1);
    CHECK((U32(tfhd[0].body, 0) & 0xffffff) == 0x020000);
    t.track_id = U32(tfhd[0].body, 4);
    auto tfdt = Find(traf.body, "tfdt");
    REQUIRE(tfdt.size() == 1);
    REQUIRE(tfdt[0].body[0] == 1);  // version 1
    t.tfdt = U64(tfdt[0].body, 4);
    auto trun = Find(traf.body, "trun");
    REQUIRE(trun.size() == 1);
    std::string_view b = trun[0].body;
    REQUIRE(b[0] == 1);
    REQUIRE((U32(b, 0) & 0xffffff) == 0xf01);
    uint32_t n = U32(b, 4);
    t.data_offset = static_cast<int32_t>(U32(b, 8));
    REQUIRE(b.size() == 12 + size_t{n} * 16);
    for (uint32_t i = 0; i < n; ++i) {
      size_t at = 12 + i * 16;
      t.samples.push_back(
          {U32(b, at), U32(b, at + 4), U32(b, at + 8), static_cast<int32_t>(U32(b, at + 12))});
    }
    out.push_back(std::move(t));
  }
  return out;
}

// Annex B → 4-byte length-prefixed, without AUD/parameter sets (the expected sample bytes).
std::string ExpectedVideoSample(const Frame& f) {
  std::string out;
  for (std::string_view nal : SplitAnnexB(*f.data)) {
    bool drop = f.codec == Codec::kHevc ? (HevcNalType(nal) >= 32 && HevcNalType(nal) <= 35)
                                        : (H264NalType(nal) >= 7 && H264NalType(nal) <= 9);
    if (drop) continue;
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<char>(nal.size() >> s));
    out.append(nal);
  }
  return out;
}

std::vector<std::string> AdtsPayloads(const Frame& f) {
  std::vector<std::string> out;
  auto bytes = std::span(reinterpret_cast<const uint8_t*>(f.data->data()), f.data->size());
  size_t off = 0;
  while (off < bytes.size()) {
    auto h = ParseAdtsHeader(bytes.subspan(off));
    REQUIRE(h);
    out.push_back(f.data->substr(off + h->header_bytes, h->frame_bytes - h->header_bytes));
    off += h->frame_bytes;
  }
  return out;
}

json ProbeJson(const std::string& file) {
  std::string text = Capture(
      "ffprobe -v error -show_entries stream=codec_name,width,height,sample_rate,channels "
      "-show_entries format=duration,start_time -count_frames -show_entries stream=nb_read_frames "
      "-of json " +
      file);
  INFO(text);
  json j = json::parse(text, nullptr, false);
  REQUIRE(!j.is_discarded());
  return j;
}

const json* StreamOf(const json& probe, const std::string& codec) {
  for (const json& s : probe["streams"]) {
    if (s.value("codec_name", "") == codec) return &s;
  }
  return nullptr;
}

// First packet of a stream: {pts_time, dts_time}.
std::pair<double, double> FirstPacketTimes(const std::string& file, const std::string& stream) {
  std::string text = Capture("ffprobe -v error -select_streams " + stream +
                             " -show_entries packet=pts_time,dts_time -read_intervals %+#1 -of "
                             "json " +
                             file);
  INFO(text);
  json j = json::parse(text, nullptr, false);
  REQUIRE(!j.is_discarded());
  REQUIRE(!j["packets"].empty());
  const json& p = j["packets"][0];
  return {std::stod(p["pts_time"].get<std::string>()), std::stod(p["dts_time"].get<std::string>())};
}

// Checks init + both fragments (concatenated) with ffprobe/ffmpeg.
void CheckRoundTrip(const LoadedSource& s, const std::string& codec_name, const std::string& name) {
  Split split = SplitAtSecondKeyframe(s);
  Fmp4Writer writer(s.tracks);
  std::string init = writer.InitSegment();
  std::string f1 = writer.Fragment(split.parts[0], 1, split.end_of_first);
  std::string f2 = writer.Fragment(split.parts[1], 2);
  std::string file = WriteFileIn(FmpDir(), name + ".mp4", init + f1 + f2);

  json probe = ProbeJson(file);
  INFO(probe.dump());
  const json* v = StreamOf(probe, codec_name);
  const json* a = StreamOf(probe, "aac");
  REQUIRE(v != nullptr);
  REQUIRE(a != nullptr);
  CHECK((*v)["width"] == 640);
  CHECK((*v)["height"] == 360);
  CHECK((*v)["nb_read_frames"] == "100");
  CHECK((*a)["sample_rate"] == "48000");
  CHECK((*a)["channels"] == 1);
  int audio_frames = std::stoi((*a)["nb_read_frames"].get<std::string>());
  CHECK(audio_frames >= 185);
  CHECK(audio_frames <= 190);
  // The fragments keep the source timeline (tfdt), which starts at ffmpeg's 1.4 s offset:
  // ffprobe reports the duration up to the end time, i.e. start_time + ~4 s.
  double start = std::stod(probe["format"]["start_time"].get<std::string>());
  double duration = std::stod(probe["format"]["duration"].get<std::string>());
  CHECK(start == Approx(s.frames.front().dts / 90000.0).margin(0.1));
  CHECK(duration - start == Approx(4.0).margin(0.1));
  CHECK(DecodeErrors(file).empty());

  // Fragment 2 alone after the init: tfdt places it at 2 s into the source timeline.
  std::string file2 = WriteFileIn(FmpDir(), name + "-init-f2.mp4", init + f2);
  json probe2 = ProbeJson(file2);
  const json* v2 = StreamOf(probe2, codec_name);
  REQUIRE(v2 != nullptr);
  CHECK((*v2)["nb_read_frames"] == "50");
  CHECK(DecodeErrors(file2).empty());
  auto [pts, dts] = FirstPacketTimes(file2, "v:0");
  CHECK(pts == Approx(split.keyframe->pts / 90000.0).margin(0.001));
  CHECK(dts == Approx(split.keyframe->dts / 90000.0).margin(0.001));
  int64_t first_pts = INT64_MAX;
  for (const Frame& f : s.Of(s.video.pid)) first_pts = std::min(first_pts, f.pts);
  CHECK(pts - first_pts / 90000.0 == Approx(2.0).margin(0.001));

  // Fragment 1 alone too.
  std::string file1 = WriteFileIn(FmpDir(), name + "-init-f1.mp4", init + f1);
  json probe1 = ProbeJson(file1);
  const json* v1 = StreamOf(probe1, codec_name);
  REQUIRE(v1 != nullptr);
  CHECK((*v1)["nb_read_frames"] == "50");
  CHECK(DecodeErrors(file1).empty());
}

TEST_CASE("S-10 init.mp4 and fragments of real H.264+AAC read back with ffprobe") {
  LoadedSource s = Load("libx264");
  CheckRoundTrip(s, "h264", "h264");
}

TEST_CASE("S-10 HEVC init.mp4 and fragments read back with ffprobe") {
  INFO("tools/bootstrap installs ffmpeg with libx265");
  REQUIRE(HaveX265());
  LoadedSource s = Load("libx265");
  CheckRoundTrip(s, "hevc", "hevc");

  Fmp4Writer writer(s.tracks);
  std::string init = writer.InitSegment();
  auto hvc1 = Find(init, "moov/trak/mdia/minf/stbl/stsd");
  REQUIRE(hvc1.size() == 2);
  std::string_view entry = hvc1[0].body.substr(8);  // after version/flags + entry_count
  REQUIRE(entry.substr(4, 4) == "hvc1");
  auto hvcc = Find(entry.substr(8 + 78), "hvcC");
  REQUIRE(hvcc.size() == 1);
  std::string_view c = hvcc[0].body;
  std::string sps;
  for (const std::string& ps : s.video.parameter_sets) {
    if (HevcNalType(ps) == 33) sps = UnescapeRbsp(ps);
  }
  REQUIRE(sps.size() > 15);
  CHECK(c[0] == 1);
  CHECK(c.substr(1, 12) == std::string_view(sps).substr(3, 12));  // general PTL
  CHECK(static_cast<uint8_t>(c[16]) == 0xfd);                     // 4:2:0
  CHECK((static_cast<uint8_t>(c[21]) & 3) == 3);                  // 4-byte lengths
  CHECK(c[22] == 3);                                              // VPS, SPS, PPS arrays
  size_t off = 23;
  for (int type : {32, 33, 34}) {
    CHECK(static_cast<uint8_t>(c[off]) == (0x80 | type));
    CHECK(U32(c, off + 1) >> 16 == 1);
    off += 3 + 2 + ((static_cast<uint8_t>(c[off + 3]) << 8) | static_cast<uint8_t>(c[off + 4]));
  }
  CHECK(off == c.size());
}

TEST_CASE("S-10 init segment and fragment box contents") {
  LoadedSource s = Load("libx264");
  Split split = SplitAtSecondKeyframe(s);
  Fmp4Writer writer(s.tracks);
  CHECK(writer.Timescale(s.video.pid) == 90000);
  CHECK(writer.Timescale(s.audio.pid) == 48000);
  CHECK(writer.Timescale(0x1fff) == 0);

  std::string init = writer.InitSegment();
  auto top = Children(init);
  REQUIRE(top.size() == 2);
  CHECK(top[0].type == "ftyp");
  CHECK(top[0].body == std::string_view("iso6\0\0\0\0iso6cmfcdashmp41", 24));
  CHECK(top[1].type == "moov");
  auto mvhd = Find(init, "moov/mvhd");
  REQUIRE(mvhd.size() == 1);
  CHECK(U32(mvhd[0].body, 12) == 1000);
  CHECK(U32(mvhd[0].body, 96) == 3);  // next_track_ID
  auto tkhd = Find(init, "moov/trak/tkhd");
  REQUIRE(tkhd.size() == 2);
  CHECK(U32(tkhd[0].body, 0) == 3);
  CHECK(U32(tkhd[0].body, 12) == 1);
  CHECK(U32(tkhd[1].body, 12) == 2);
  CHECK(U32(tkhd[0].body, 76) == (640u << 16));
  CHECK(U32(tkhd[0].body, 80) == (360u << 16));
  auto mdhd = Find(init, "moov/trak/mdia/mdhd");
  REQUIRE(mdhd.size() == 2);
  CHECK(U32(mdhd[0].body, 12) == 90000);
  CHECK(U32(mdhd[1].body, 12) == 48000);
  auto trex = Find(init, "moov/mvex/trex");
  REQUIRE(trex.size() == 2);
  CHECK(U32(trex[1].body, 4) == 2);
  CHECK(U32(trex[1].body, 8) == 1);

  // avcC from the demuxed SPS/PPS.
  auto stsd = Find(init, "moov/trak/mdia/minf/stbl/stsd");
  REQUIRE(stsd.size() == 2);
  std::string_view avc1 = stsd[0].body.substr(8);
  REQUIRE(avc1.substr(4, 4) == "avc1");
  auto avcc = Find(avc1.substr(8 + 78), "avcC");
  REQUIRE(avcc.size() == 1);
  std::string_view c = avcc[0].body;
  REQUIRE(s.video.parameter_sets.size() == 2);
  const std::string& sps = s.video.parameter_sets[0];
  const std::string& pps = s.video.parameter_sets[1];
  REQUIRE(H264NalType(sps) == 7);
  REQUIRE(H264NalType(pps) == 8);
  CHECK(c[0] == 1);
  CHECK(c.substr(1, 3) == std::string_view(sps).substr(1, 3));
  CHECK(static_cast<uint8_t>(c[4]) == 0xff);
  CHECK(static_cast<uint8_t>(c[5]) == 0xe1);
  CHECK(c.substr(8, sps.size()) == sps);
  CHECK(c[8 + sps.size()] == 1);
  CHECK(c.substr(11 + sps.size(), pps.size()) == pps);
  // High profile: chroma format 4:2:0, 8-bit.
  CHECK(c.substr(11 + sps.size() + pps.size()) == std::string_view("\xfd\xf8\xf8\x00", 4));

  // esds: ES_Descriptor > DecoderConfigDescriptor(0x40, audio) > AudioSpecificConfig.
  std::string_view mp4a = stsd[1].body.substr(8);
  REQUIRE(mp4a.substr(4, 4) == "mp4a");
  CHECK(U32(mp4a, 8 + 16) >> 16 == 1);  // channelcount
  CHECK((U32(mp4a, 8 + 16) & 0xffff) == 16);
  CHECK(U32(mp4a, 8 + 24) == (48000u << 16));
  auto esds = Find(mp4a.substr(8 + 28), "esds");
  REQUIRE(esds.size() == 1);
  std::string_view e = esds[0].body;
  size_t dcd = e.find("\x04\x80\x80\x80");
  REQUIRE(dcd != std::string_view::npos);
  CHECK(static_cast<uint8_t>(e[dcd + 5]) == 0x40);
  CHECK(static_cast<uint8_t>(e[dcd + 6]) == 0x15);
  CHECK(e.find("\x05\x80\x80\x80\x02" + s.audio.audio_specific_config) != std::string_view::npos);

  // Fragment 1: samples, durations, flags and data offsets into the mdat.
  std::string frag = writer.Fragment(split.parts[0], 7, split.end_of_first);
  auto boxes = Children(frag);
  REQUIRE(boxes.size() == 2);
  CHECK(boxes[0].type == "moof");
  CHECK(boxes[1].type == "mdat");
  CHECK(U32(Find(frag, "moof/mfhd")[0].body, 4) == 7);
  auto trafs = ParseFragment(frag);
  REQUIRE(trafs.size() == 2);
  const Trun& vt = trafs[0];
  const Trun& at = trafs[1];
  CHECK(vt.track_id == 1);
  CHECK(at.track_id == 2);

  std::vector<Frame> video, audio;
  for (const Frame& f : split.parts[0]) (f.pid == s.video.pid ? video : audio).push_back(f);
  REQUIRE(vt.samples.size() == video.size());
  CHECK(vt.tfdt == static_cast<uint64_t>(video[0].dts));
  CHECK(vt.data_offset == static_cast<int32_t>(boxes[0].size + 8));
  size_t pos = static_cast<size_t>(vt.data_offset);
  for (size_t i = 0; i < video.size(); ++i) {
    const auto& smp = vt.samples[i];
    int64_t next = i + 1 < video.size() ? video[i + 1].dts : split.split_dts;
    CHECK(smp.duration == next - video[i].dts);
    CHECK(smp.duration == 3600);
    CHECK(smp.cto == video[i].pts - video[i].dts);
    CHECK(smp.flags == (video[i].keyframe ? 0x02000000u : 0x01010000u));
    CHECK(std::string_view(frag).substr(pos, smp.size) == ExpectedVideoSample(video[i]));
    pos += smp.size;
  }
  CHECK(at.data_offset == static_cast<int32_t>(pos));
  CHECK(at.tfdt == static_cast<uint64_t>(audio[0].dts * 48000 / 90000));
  std::vector<std::string> payloads;
  for (const Frame& f : audio) {
    for (std::string& p : AdtsPayloads(f)) payloads.push_back(std::move(p));
  }
  REQUIRE(at.samples.size() == payloads.size());
  for (size_t i = 0; i < payloads.size(); ++i) {
    CHECK(at.samples[i].duration == 1024);
    CHECK(at.samples[i].flags == 0x02000000u);
    CHECK(at.samples[i].cto == 0);
    CHECK(std::string_view(frag).substr(pos, at.samples[i].size) == payloads[i]);
    pos += at.samples[i].size;
  }
  CHECK(pos == frag.size());

  // Without end_dts the last video sample repeats the previous duration.
  std::vector<Frame> only_video(video.begin(), video.begin() + 10);
  auto t = ParseFragment(writer.Fragment(only_video, 8));
  REQUIRE(t.size() == 1);
  CHECK(t[0].track_id == 1);
  CHECK(t[0].samples.back().duration == 3600);
  // A later end_dts stretches the last sample.
  t = ParseFragment(writer.Fragment(only_video, 9, {{s.video.pid, only_video[9].dts + 5000}}));
  CHECK(t[0].samples.back().duration == 5000);
}

TEST_CASE("S-10 several ADTS frames in one PES become consecutive audio samples") {
  LoadedSource s = Load("libx264");
  std::vector<Frame> audio = s.Of(s.audio.pid);
  REQUIRE(audio.size() >= 4);
  // Merge pairs of access units into one PES frame each (at the first one's dts).
  std::vector<Frame> merged;
  for (size_t i = 0; i + 1 < 4; i += 2) {
    Frame f = audio[i];
    f.data = std::make_shared<const std::string>(*audio[i].data + *audio[i + 1].data);
    merged.push_back(f);
  }
  Fmp4Writer writer({s.audio});  // audio-only: track 1
  auto t = ParseFragment(writer.Fragment(merged, 1));
  REQUIRE(t.size() == 1);
  CHECK(t[0].track_id == 1);
  size_t expected = 0;
  for (size_t i = 0; i < 4; ++i) expected += AdtsPayloads(audio[i]).size();
  CHECK(t[0].samples.size() == expected);
  for (const auto& smp : t[0].samples) CHECK(smp.duration == 1024);
  CHECK(t[0].tfdt == static_cast<uint64_t>(audio[0].dts * 48000 / 90000));
}

TEST_CASE("S-10 large timestamps: tfdt carries the shifted decode times") {
  LoadedSource s = Load("libx264");
  Split split = SplitAtSecondKeyframe(s);
  std::vector<Frame> shifted = Shifted(split.parts[1], kShift);
  Fmp4Writer writer(s.tracks);
  std::string frag = writer.Fragment(shifted, 2);

  // The raw tfdt boxes of the output.
  std::vector<uint64_t> tfdts;
  for (size_t at = frag.find("tfdt"); at != std::string::npos; at = frag.find("tfdt", at + 4)) {
    REQUIRE(frag[at + 4] == 1);
    tfdts.push_back(U64(frag, at + 8));
  }
  REQUIRE(tfdts.size() == 2);
  int64_t first_video = -1, first_audio = -1;
  for (const Frame& f : shifted) {
    if (f.pid == s.video.pid && first_video < 0) first_video = f.dts;
    if (f.pid == s.audio.pid && first_audio < 0) first_audio = f.dts;
  }
  CHECK(first_video > kShift);
  CHECK(tfdts[0] == static_cast<uint64_t>(first_video));
  auto expected_audio = static_cast<uint64_t>(static_cast<__int128>(first_audio) * 48000 / 90000);
  CHECK(tfdts[1] == expected_audio);
  CHECK(expected_audio > 79'000'000'000'000u);

  // Composition offsets and durations are unaffected by the shift.
  auto a = ParseFragment(frag);
  auto b = ParseFragment(writer.Fragment(split.parts[1], 2));
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    REQUIRE(a[i].samples.size() == b[i].samples.size());
    for (size_t j = 0; j < a[i].samples.size(); ++j) {
      CHECK(a[i].samples[j].duration == b[i].samples[j].duration);
      CHECK(a[i].samples[j].cto == b[i].samples[j].cto);
    }
  }

  // And it still plays, at the shifted time.
  std::string file = WriteFileIn(FmpDir(), "shifted.mp4", writer.InitSegment() + frag);
  CHECK(DecodeErrors(file).empty());
  auto [pts, dts] = FirstPacketTimes(file, "v:0");
  CHECK(dts == Approx(first_video / 90000.0).epsilon(1e-12));
  (void)pts;
}

TEST_CASE("S-10 the same frames give identical bytes") {
  LoadedSource s = Load("libx264");
  Split split = SplitAtSecondKeyframe(s);
  std::vector<Frame> shifted = Shifted(split.parts[0], kShift);
  std::map<uint16_t, int64_t> end;
  for (const auto& [pid, dts] : split.end_of_first) end[pid] = dts + kShift;
  Fmp4Writer a(s.tracks);
  Fmp4Writer b(s.tracks);
  CHECK(a.InitSegment() == b.InitSegment());
  std::string fa = a.Fragment(shifted, 5, end);
  std::string fb = b.Fragment(shifted, 5, end);
  CHECK(fa == fb);
  CHECK(a.Fragment(shifted, 5, end) == fa);  // no state leaks into the output
  CHECK(a.Fragment(shifted, 6, end) != fa);
}

}  // namespace
}  // namespace meshwork::media
