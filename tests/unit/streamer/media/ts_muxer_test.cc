// S-8 MPEG-TS muxing for HLS segments: frames demuxed from real ffmpeg output are muxed
// again; ffprobe/ffmpeg validate the result and TsDemuxer gets the same frames back.
#include "streamer/media/ts_muxer.h"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "streamer/media/codec_parsers.h"
#include "streamer/media/ts_demuxer.h"
#include "tests/unit/streamer/media/test_files.h"

namespace meshwork::media {
namespace {

namespace fs = std::filesystem;

constexpr size_t kTsPacket = 188;

const fs::path& MuxDir() {
  static TempDir dir("meshwork-media-mux");
  return dir.path();
}

// A 4 s test file with the given video encoder arguments, generated once per name.
std::string MuxSource(const std::string& name, const std::string& video_args) {
  fs::path out = MuxDir() / name;
  if (!fs::exists(out)) {
    std::string cmd =
        "ffmpeg -hide_banner -loglevel error -y -f lavfi -i testsrc2=size=640x360:rate=25 "
        "-f lavfi -i sine=frequency=440:sample_rate=48000 -t 4 " +
        video_args + " -c:a aac -b:a 96k -f mpegts " + out.string();
    REQUIRE(std::system(cmd.c_str()) == 0);
  }
  return out.string();
}

std::string H264Source() {
  return MuxSource("h264-aac.ts", "-c:v libx264 -g 50 -profile:v high -pix_fmt yuv420p");
}

struct MuxDemuxed {
  std::map<uint16_t, TrackInfo> tracks;
  std::vector<Frame> frames;
  TsDemuxer::Stats stats;

  std::vector<Frame> Of(Codec codec) const {
    std::vector<Frame> out;
    for (const Frame& f : frames) {
      if (f.codec == codec) out.push_back(f);
    }
    return out;
  }
  std::vector<TrackInfo> TrackList() const {
    std::vector<TrackInfo> out;
    for (const auto& [pid, t] : tracks) out.push_back(t);
    return out;
  }
};

MuxDemuxed MuxDemux(const std::string& data) {
  MuxDemuxed out;
  TsDemuxer demuxer({[&](const TrackInfo& t) { out.tracks[t.pid] = t; },
                     [&](Frame&& f) { out.frames.push_back(std::move(f)); }});
  demuxer.Feed({reinterpret_cast<const uint8_t*>(data.data()), data.size()});
  demuxer.Flush();
  out.stats = demuxer.stats();
  return out;
}

// Frames in decode-time order across tracks, as a packager would write them.
std::vector<Frame> ByDts(std::vector<Frame> frames) {
  std::stable_sort(frames.begin(), frames.end(),
                   [](const Frame& a, const Frame& b) { return a.dts < b.dts; });
  return frames;
}

// Same timestamps, flags and bytes, per codec (PIDs differ: the muxer renumbers them).
void CheckSameFrames(const MuxDemuxed& got, const MuxDemuxed& want, Codec codec) {
  auto a = got.Of(codec);
  auto b = want.Of(codec);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("frame " << i);
    CHECK(a[i].pts == b[i].pts);
    CHECK(a[i].dts == b[i].dts);
    CHECK(a[i].keyframe == b[i].keyframe);
    CHECK(*a[i].data == *b[i].data);
  }
}

// ffprobe's view of the streams (in order) and the format, e.g. "codec_name" → {"h264",
// "aac"}. The flat writer names top-level streams "streams.stream.N.…" (the copies listed
// under programs are skipped).
std::map<std::string, std::vector<std::string>> ProbeFlat(const std::string& file) {
  std::string text = Capture(
      "ffprobe -v error -show_entries stream=codec_name,width,height -show_entries "
      "format=duration -of flat " +
      file);
  std::map<std::string, std::vector<std::string>> kv;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("streams.", 0) != 0 && line.rfind("format.", 0) != 0) continue;
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = line.substr(0, eq);
    std::string value = line.substr(eq + 1);
    if (value.size() >= 2 && value.front() == '"') value = value.substr(1, value.size() - 2);
    kv[key.substr(key.rfind('.') + 1)].push_back(value);
  }
  return kv;
}

struct PacketView {
  const uint8_t* p;
  uint16_t pid() const { return static_cast<uint16_t>(((p[1] & 0x1f) << 8) | p[2]); }
  bool pusi() const { return p[1] & 0x40; }
  bool has_af() const { return p[3] & 0x20; }
  int af_length() const { return has_af() ? p[4] : -1; }
  bool pcr() const { return has_af() && p[4] > 0 && (p[5] & 0x10); }
  bool random_access() const { return has_af() && p[4] > 0 && (p[5] & 0x40); }
  int64_t pcr_base() const {
    return (int64_t{p[6]} << 25) | (int64_t{p[7]} << 17) | (int64_t{p[8]} << 9) |
           (int64_t{p[9]} << 1) | (p[10] >> 7);
  }
};

PacketView PacketAt(const std::string& ts, size_t i) {
  return {reinterpret_cast<const uint8_t*>(ts.data()) + i * kTsPacket};
}

// Segments cut at each video keyframe (or every 50 audio frames without video), each
// starting with the tables.
std::vector<std::string> MuxSegments(TsMuxer& muxer, const std::vector<Frame>& frames) {
  std::vector<std::string> segments;
  bool has_video = std::any_of(frames.begin(), frames.end(),
                               [](const Frame& f) { return f.codec != Codec::kAac; });
  int audio_count = 0;
  for (const Frame& f : frames) {
    bool cut = has_video ? (f.codec != Codec::kAac && f.keyframe) : (audio_count++ % 50 == 0);
    if (cut || segments.empty()) {
      segments.emplace_back();
      muxer.WriteTables(segments.back());
    }
    muxer.WriteFrame(f, segments.back());
  }
  return segments;
}

std::string Join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += p;
  return out;
}

}  // namespace

TEST_CASE("S-8 TsMuxer round trip of ffmpeg H.264 + AAC: ffprobe validates, same frames back") {
  std::string source = H264Source();
  MuxDemuxed reference = MuxDemux(ReadFile(source));
  REQUIRE(reference.tracks.size() == 2);

  TsMuxer muxer(reference.TrackList());
  auto segments = MuxSegments(muxer, ByDts(reference.frames));
  REQUIRE(segments.size() == 2);  // keyframes at 0 s and 2 s
  for (size_t s = 0; s < segments.size(); ++s) {
    INFO("segment " << s);
    const std::string& seg = segments[s];
    REQUIRE(seg.size() % kTsPacket == 0);
    REQUIRE(seg.size() / kTsPacket > 3);
    // PAT, PMT, then the keyframe's first packet with PCR and random_access_indicator.
    CHECK(PacketAt(seg, 0).pid() == 0);
    CHECK(PacketAt(seg, 0).pusi());
    CHECK(PacketAt(seg, 1).pid() == 0x1000);
    CHECK(PacketAt(seg, 1).pusi());
    CHECK(PacketAt(seg, 2).pid() == 0x100);
    CHECK(PacketAt(seg, 2).pusi());
    CHECK(PacketAt(seg, 2).pcr());
    CHECK(PacketAt(seg, 2).random_access());
    // Each segment alone is a valid stream too.
    std::string file = WriteFileIn(MuxDir(), "segment" + std::to_string(s) + ".ts", seg);
    CHECK(DecodeErrors(file).empty());
    auto probe = ProbeFlat(file);
    CHECK(probe["codec_name"] == std::vector<std::string>{"h264", "aac"});
  }

  std::string joined = Join(segments);
  std::string file = WriteFileIn(MuxDir(), "roundtrip.ts", joined);
  auto probe = ProbeFlat(file);
  CHECK(probe["codec_name"] == std::vector<std::string>{"h264", "aac"});
  REQUIRE(probe["width"].size() == 1);
  CHECK(probe["width"][0] == "640");
  CHECK(probe["height"][0] == "360");
  REQUIRE(probe["duration"].size() == 1);
  CHECK(std::stod(probe["duration"][0]) == Approx(4.0).margin(0.15));
  CHECK(DecodeErrors(file).empty());

  MuxDemuxed again = MuxDemux(joined);
  CHECK(again.stats.cc_errors == 0);  // counters continue across segments
  CHECK(again.stats.pes_dropped == 0);
  CheckSameFrames(again, reference, Codec::kH264);
  CheckSameFrames(again, reference, Codec::kAac);
  REQUIRE(again.tracks.size() == 2);
  const TrackInfo* v = nullptr;
  for (const auto& [pid, t] : again.tracks) {
    if (t.is_video()) v = &t;
  }
  REQUIRE(v != nullptr);
  CHECK(v->pid == 0x100);
  CHECK(v->codec_string == "avc1.64001e");

  // Every video PES carries a PCR that does not run ahead of its DTS.
  auto video = again.Of(Codec::kH264);
  size_t video_pes = 0;
  for (size_t i = 0; i < joined.size() / kTsPacket; ++i) {
    PacketView p = PacketAt(joined, i);
    if (p.pid() != 0x100 || !p.pusi()) continue;
    REQUIRE(p.pcr());
    CHECK(p.pcr_base() <= video[video_pes].dts);
    CHECK(p.random_access() == video[video_pes].keyframe);
    ++video_pes;
  }
  CHECK(video_pes == video.size());
}

TEST_CASE("S-8 TsMuxer round trip of ffmpeg HEVC + AAC") {
  INFO("tools/bootstrap installs ffmpeg with libx265");
  REQUIRE(HaveX265());
  std::string source =
      MuxSource("hevc-aac.ts", "-c:v libx265 -x265-params log-level=error -g 50 -pix_fmt yuv420p");
  MuxDemuxed reference = MuxDemux(ReadFile(source));
  TsMuxer muxer(reference.TrackList());
  std::string joined = Join(MuxSegments(muxer, ByDts(reference.frames)));
  std::string file = WriteFileIn(MuxDir(), "roundtrip-hevc.ts", joined);
  auto probe = ProbeFlat(file);
  CHECK(probe["codec_name"] == std::vector<std::string>{"hevc", "aac"});
  CHECK(DecodeErrors(file).empty());
  MuxDemuxed again = MuxDemux(joined);
  CHECK(again.stats.cc_errors == 0);
  CheckSameFrames(again, reference, Codec::kHevc);
  CheckSameFrames(again, reference, Codec::kAac);
}

TEST_CASE("S-8 TsMuxer output is deterministic with valid PSI CRCs and stuffing") {
  MuxDemuxed reference = MuxDemux(ReadFile(H264Source()));
  auto frames = ByDts(reference.frames);
  TsMuxer a(reference.TrackList());
  TsMuxer b(reference.TrackList());
  std::string out_a = Join(MuxSegments(a, frames));
  std::string out_b = Join(MuxSegments(b, frames));
  CHECK(out_a == out_b);

  // CRC-32/MPEG-2 check value.
  const std::string check = "123456789";
  CHECK(Crc32Mpeg2(reinterpret_cast<const uint8_t*>(check.data()), check.size()) == 0x0376e6e7u);

  // PAT and PMT sections: CRC over section + CRC is 0; the PMT lists both streams.
  std::string tables;
  TsMuxer muxer(reference.TrackList());
  muxer.WriteTables(tables);
  REQUIRE(tables.size() == 2 * kTsPacket);
  for (int i = 0; i < 2; ++i) {
    auto p = reinterpret_cast<const uint8_t*>(tables.data()) + i * kTsPacket;
    CHECK(p[4] == 0);  // pointer_field
    const uint8_t* section = p + 5;
    size_t len = 3 + (((section[1] & 0x0f) << 8) | section[2]);
    CHECK(Crc32Mpeg2(section, len) == 0);
    for (size_t k = 5 + len; k < kTsPacket; ++k) CHECK(p[k] == 0xff);
  }
  const uint8_t* pmt = reinterpret_cast<const uint8_t*>(tables.data()) + kTsPacket + 5;
  CHECK(pmt[0] == 0x02);
  CHECK((((pmt[8] & 0x1f) << 8) | pmt[9]) == 0x100);  // PCR PID: video
  CHECK(pmt[12] == 0x1b);
  CHECK(pmt[17] == 0x0f);

  // Every PES ends in a packet padded with adaptation-field stuffing, never with 0xFF
  // payload: the demuxer gets exactly the bytes back (checked by the round trip), and all
  // packets are whole.
  CHECK(out_a.size() % kTsPacket == 0);
  for (size_t i = 0; i < out_a.size() / kTsPacket; ++i) {
    PacketView p = PacketAt(out_a, i);
    CHECK(p.p[0] == 0x47);
    if (p.has_af()) CHECK(p.af_length() <= 183);
  }
}

TEST_CASE("S-8 TsMuxer writes audio-only and video-only streams") {
  MuxDemuxed reference = MuxDemux(ReadFile(H264Source()));
  auto frames = ByDts(reference.frames);
  for (Codec only : {Codec::kAac, Codec::kH264}) {
    SECTION(only == Codec::kAac ? "audio only" : "video only") {
      std::vector<TrackInfo> tracks;
      for (const auto& t : reference.TrackList()) {
        if (t.codec == only) tracks.push_back(t);
      }
      TsMuxer muxer(tracks);
      // Frames of the other track are ignored.
      std::string joined = Join(MuxSegments(muxer, frames));
      std::string file =
          WriteFileIn(MuxDir(), only == Codec::kAac ? "audio.ts" : "video.ts", joined);
      auto probe = ProbeFlat(file);
      CHECK(probe["codec_name"] == std::vector<std::string>{only == Codec::kAac ? "aac" : "h264"});
      CHECK(DecodeErrors(file).empty());
      MuxDemuxed again = MuxDemux(joined);
      CHECK(again.tracks.size() == 1);
      CHECK(again.stats.cc_errors == 0);
      CheckSameFrames(again, reference, only);
      // The PCR is on the only PID, in the first packet of each PES.
      uint16_t pid = only == Codec::kAac ? 0x101 : 0x100;
      size_t pcrs = 0;
      for (size_t i = 0; i < joined.size() / kTsPacket; ++i) {
        PacketView p = PacketAt(joined, i);
        if (p.pid() == pid && p.pusi()) {
          CHECK(p.pcr());
          ++pcrs;
        }
      }
      CHECK(pcrs == reference.Of(only).size());
    }
  }
}

TEST_CASE("S-8 TsMuxer inserts an AUD into H.264 access units without one") {
  MuxDemuxed reference = MuxDemux(ReadFile(H264Source()));
  const std::string aud("\x00\x00\x00\x01\x09\xf0", 6);
  std::vector<TrackInfo> tracks;
  for (const auto& t : reference.TrackList()) {
    if (t.is_video()) tracks.push_back(t);
  }
  TsMuxer muxer(tracks);
  std::string ts;
  muxer.WriteTables(ts);
  auto video = reference.Of(Codec::kH264);
  std::vector<std::string> stripped;
  for (Frame f : video) {
    REQUIRE(f.data->rfind(aud, 0) == 0);
    stripped.push_back(f.data->substr(aud.size()));
    f.data = std::make_shared<const std::string>(stripped.back());
    muxer.WriteFrame(f, ts);
  }
  MuxDemuxed again = MuxDemux(ts);
  auto got = again.Of(Codec::kH264);
  REQUIRE(got.size() == video.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CHECK(*got[i].data == aud + stripped[i]);
    CHECK(H264NalType(SplitAnnexB(*got[i].data).front()) == 9);
  }
  CHECK(DecodeErrors(WriteFileIn(MuxDir(), "aud.ts", ts)).empty());
}

}  // namespace meshwork::media
