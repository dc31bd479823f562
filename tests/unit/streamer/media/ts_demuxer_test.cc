// S-3 MPEG-TS demuxing of real ffmpeg output (generated at test time), and its robustness:
// any chunking, garbage, truncated packets, lost sync, TEI packets, continuity gaps, the
// 33-bit timestamp wrap, PMT changes and oversized PES.
#include "streamer/media/ts_demuxer.h"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "streamer/media/codec_parsers.h"
#include "streamer/media/ts_muxer.h"
#include "tests/unit/streamer/media/test_files.h"

namespace meshwork::media {
namespace {

namespace fs = std::filesystem;

constexpr size_t kPacket = 188;
constexpr int64_t kWrap = int64_t{1} << 33;

const fs::path& Dir() {
  static TempDir dir("meshwork-media-demux");
  return dir.path();
}

bool HaveX265() {
  return Capture("ffmpeg -hide_banner -encoders 2>/dev/null").find(" libx265 ") !=
         std::string::npos;
}

const std::string kSources =
    "-f lavfi -i testsrc2=size=640x360:rate=25 -f lavfi -i sine=frequency=440:sample_rate=48000 "
    "-t 4 ";

// The 4 s H.264 (high) + AAC test file of the brief, generated once per process.
const std::string& H264File() {
  static const std::string path = [] {
    fs::path out = Dir() / "h264-aac.ts";
    std::string cmd = "ffmpeg -hide_banner -loglevel error -y " + kSources +
                      "-c:v libx264 -g 50 -profile:v high -pix_fmt yuv420p -c:a aac -b:a 96k "
                      "-f mpegts " +
                      out.string();
    REQUIRE(std::system(cmd.c_str()) == 0);
    return out.string();
  }();
  return path;
}

struct Demuxed {
  std::vector<TrackInfo> track_events;
  std::map<uint16_t, TrackInfo> tracks;  // latest per PID
  std::vector<Frame> frames;
  TsDemuxer::Stats stats;

  std::vector<Frame> Of(Codec codec) const {
    std::vector<Frame> out;
    for (const Frame& f : frames) {
      if (f.codec == codec) out.push_back(f);
    }
    return out;
  }
  const TrackInfo* Track(Codec codec) const {
    for (const auto& [pid, t] : tracks) {
      if (t.codec == codec) return &t;
    }
    return nullptr;
  }
};

// Demuxes `data` fed in chunks of the sizes `chunk` returns (all at once without it).
Demuxed Demux(std::string_view data, std::function<size_t()> chunk = {}) {
  Demuxed out;
  TsDemuxer demuxer({[&](const TrackInfo& t) {
                       out.track_events.push_back(t);
                       out.tracks[t.pid] = t;
                     },
                     [&](Frame&& f) { out.frames.push_back(std::move(f)); }});
  auto bytes = reinterpret_cast<const uint8_t*>(data.data());
  size_t off = 0;
  while (off < data.size()) {
    size_t n = chunk ? std::min(chunk(), data.size() - off) : data.size();
    demuxer.Feed({bytes + off, n});
    off += n;
  }
  demuxer.Flush();
  out.stats = demuxer.stats();
  return out;
}

bool SameFrame(const Frame& a, const Frame& b) {
  return a.pid == b.pid && a.codec == b.codec && a.pts == b.pts && a.dts == b.dts &&
         a.keyframe == b.keyframe && a.data && b.data && *a.data == *b.data;
}

bool SameFrames(const std::vector<Frame>& a, const std::vector<Frame>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!SameFrame(a[i], b[i])) return false;
  }
  return true;
}

// Every frame of `got` is the reference frame of the same PID and DTS.
bool SubsetOf(const std::vector<Frame>& got, const std::vector<Frame>& reference) {
  for (const Frame& f : got) {
    bool found = std::any_of(reference.begin(), reference.end(), [&](const Frame& r) {
      return r.pid == f.pid && r.dts == f.dts && SameFrame(r, f);
    });
    if (!found) return false;
  }
  return true;
}

uint16_t PidOf(const std::string& ts, size_t packet) {
  auto p = reinterpret_cast<const uint8_t*>(ts.data()) + packet * kPacket;
  return static_cast<uint16_t>(((p[1] & 0x1f) << 8) | p[2]);
}
bool PusiOf(const std::string& ts, size_t packet) {
  return static_cast<uint8_t>(ts[packet * kPacket + 1]) & 0x40;
}

// The first packet at or after `from` of `pid` that does not start a PES.
size_t NextContinuation(const std::string& ts, uint16_t pid, size_t from) {
  for (size_t i = from; i < ts.size() / kPacket; ++i) {
    if (PidOf(ts, i) == pid && !PusiOf(ts, i)) return i;
  }
  FAIL("no continuation packet");
  return 0;
}

// Duration of the ADTS frames in an AAC access unit.
double AdtsSeconds(const Frame& f) {
  auto bytes = std::span(reinterpret_cast<const uint8_t*>(f.data->data()), f.data->size());
  double seconds = 0;
  size_t off = 0;
  while (off < bytes.size()) {
    auto h = ParseAdtsHeader(bytes.subspan(off));
    REQUIRE(h);
    seconds += 1024.0 / h->sample_rate;
    off += h->frame_bytes;
  }
  REQUIRE(off == bytes.size());
  return seconds;
}

void CheckVideoTimeline(const std::vector<Frame>& video, int64_t frame_ticks) {
  for (size_t i = 1; i < video.size(); ++i) {
    CHECK(video[i].dts > video[i - 1].dts);  // decode order
  }
  std::vector<int64_t> pts;
  for (const Frame& f : video) {
    CHECK(f.pts >= f.dts);
    pts.push_back(f.pts);
  }
  std::sort(pts.begin(), pts.end());
  for (size_t i = 1; i < pts.size(); ++i) CHECK(pts[i] - pts[i - 1] == frame_ticks);
}

// Indices, in presentation order, of the keyframes.
std::vector<size_t> KeyframePositions(std::vector<Frame> video) {
  std::sort(video.begin(), video.end(),
            [](const Frame& a, const Frame& b) { return a.pts < b.pts; });
  std::vector<size_t> out;
  for (size_t i = 0; i < video.size(); ++i) {
    if (video[i].keyframe) out.push_back(i);
  }
  return out;
}

std::string Packet(uint16_t pid, bool pusi, int cc, const std::string& section) {
  std::string p;
  p.push_back(0x47);
  p.push_back(static_cast<char>((pusi ? 0x40 : 0) | (pid >> 8)));
  p.push_back(static_cast<char>(pid & 0xff));
  p.push_back(static_cast<char>(0x10 | (cc & 0x0f)));
  p.push_back(0);  // pointer_field
  p += section;
  p.resize(kPacket, static_cast<char>(0xff));
  return p;
}

std::string WithCrc(std::string section) {
  uint32_t crc = Crc32Mpeg2(reinterpret_cast<const uint8_t*>(section.data()), section.size());
  for (int s = 24; s >= 0; s -= 8) section.push_back(static_cast<char>(crc >> s));
  return section;
}

std::string Pat(int version, uint16_t pmt_pid) {
  std::string s = {0x00, static_cast<char>(0xb0),
                   13,   0x00,
                   0x01, static_cast<char>(0xc1 | (version << 1)),
                   0x00, 0x00,
                   0x00, 0x01};
  s.push_back(static_cast<char>(0xe0 | (pmt_pid >> 8)));
  s.push_back(static_cast<char>(pmt_pid & 0xff));
  return WithCrc(s);
}

std::string Pmt(int version, uint16_t pcr_pid,
                const std::vector<std::pair<uint8_t, uint16_t>>& es) {
  size_t len = 9 + 5 * es.size() + 4;
  std::string s = {0x02,
                   static_cast<char>(0xb0 | (len >> 8)),
                   static_cast<char>(len & 0xff),
                   0x00,
                   0x01,
                   static_cast<char>(0xc1 | (version << 1)),
                   0x00,
                   0x00,
                   static_cast<char>(0xe0 | (pcr_pid >> 8)),
                   static_cast<char>(pcr_pid & 0xff),
                   static_cast<char>(0xf0),
                   0x00};
  for (auto [type, pid] : es) {
    s.push_back(static_cast<char>(type));
    s.push_back(static_cast<char>(0xe0 | (pid >> 8)));
    s.push_back(static_cast<char>(pid & 0xff));
    s.push_back(static_cast<char>(0xf0));
    s.push_back(0x00);
  }
  return WithCrc(s);
}

}  // namespace

TEST_CASE("S-3 demuxes ffmpeg H.264 + AAC MPEG-TS: tracks, codec strings, frames, timestamps") {
  const std::string& file = H264File();
  Demuxed d = Demux(ReadFile(file));

  auto probe = ProbeVideo(file);
  REQUIRE(probe["profile"] == "High");
  char expected[32];
  // High profile (100); libx264 sets no constraint flags in High (cross-checked against
  // ffmpeg's trace_headers in codec_parsers_test).
  std::snprintf(expected, sizeof expected, "avc1.6400%02x", std::stoi(probe["level"]));

  REQUIRE(d.tracks.size() == 2);
  const TrackInfo* video = d.Track(Codec::kH264);
  REQUIRE(video != nullptr);
  CHECK(video->codec_string == expected);
  CHECK(video->codec_string == "avc1.64001e");
  CHECK(std::to_string(video->width) == probe["width"]);
  CHECK(std::to_string(video->height) == probe["height"]);
  CHECK(video->width == 640);
  CHECK(video->height == 360);
  CHECK(video->frame_rate == Approx(25.0));
  REQUIRE(video->parameter_sets.size() == 2);
  CHECK(H264NalType(video->parameter_sets[0]) == 7);
  CHECK(H264NalType(video->parameter_sets[1]) == 8);
  CHECK(video->is_video());

  const TrackInfo* audio = d.Track(Codec::kAac);
  REQUIRE(audio != nullptr);
  CHECK(audio->codec_string == "mp4a.40.2");
  CHECK(audio->sample_rate == 48000);
  CHECK(audio->channels == 1);
  CHECK(audio->aac_object_type == 2);
  CHECK(audio->audio_specific_config == std::string("\x11\x88", 2));
  CHECK(audio->pid != video->pid);
  // Each track is announced once: the SPS/ADTS header never changes.
  CHECK(d.track_events.size() == 2);

  auto vframes = d.Of(Codec::kH264);
  REQUIRE(vframes.size() == 100);
  CHECK(vframes.front().keyframe);
  CHECK(KeyframePositions(vframes) == std::vector<size_t>{0, 50});
  CheckVideoTimeline(vframes, 3600);
  for (const Frame& f : vframes) {
    CHECK(f.pid == video->pid);
    CHECK((f.data->rfind(std::string("\x00\x00\x01", 3), 0) == 0 ||
           f.data->rfind(std::string("\x00\x00\x00\x01", 4), 0) == 0));
    CHECK(!SplitAnnexB(*f.data).empty());
  }

  auto aframes = d.Of(Codec::kAac);
  REQUIRE(!aframes.empty());
  double audio_seconds = 0;
  for (size_t i = 0; i < aframes.size(); ++i) {
    CHECK(aframes[i].keyframe);
    CHECK(aframes[i].pts == aframes[i].dts);
    double s = AdtsSeconds(aframes[i]);
    if (i + 1 < aframes.size()) {
      CHECK(aframes[i + 1].pts - aframes[i].pts == Approx(s * 90000).margin(2));
    }
    audio_seconds += s;
  }
  CHECK(audio_seconds == Approx(4.0).margin(0.1));

  CHECK(d.stats.cc_errors == 0);
  CHECK(d.stats.resyncs == 0);
  CHECK(d.stats.tei_dropped == 0);
  CHECK(d.stats.bytes_skipped == 0);
  CHECK(d.stats.pes_dropped == 0);
  CHECK(d.stats.frames == d.frames.size());
  CHECK(d.stats.packets == ReadFile(file).size() / kPacket);
}

TEST_CASE("S-3 demuxes ffmpeg HEVC + AAC MPEG-TS") {
  if (!HaveX265()) {
    WARN("ffmpeg has no libx265: HEVC demux case skipped");
    return;
  }
  fs::path file = Dir() / "hevc-aac.ts";
  std::string cmd = "ffmpeg -hide_banner -loglevel error -y " + kSources +
                    "-c:v libx265 -x265-params log-level=error -g 50 -pix_fmt yuv420p -c:a aac "
                    "-b:a 96k -f mpegts " +
                    file.string();
  REQUIRE(std::system(cmd.c_str()) == 0);
  auto probe = ProbeVideo(file.string());
  Demuxed d = Demux(ReadFile(file));
  const TrackInfo* video = d.Track(Codec::kHevc);
  REQUIRE(video != nullptr);
  REQUIRE(probe["profile"] == "Main");
  CHECK(video->codec_string == "hvc1.1.6.L" + probe["level"] + ".90");
  CHECK(video->width == 640);
  CHECK(video->height == 360);
  CHECK(video->frame_rate == Approx(25.0));
  REQUIRE(video->parameter_sets.size() == 3);
  CHECK(HevcNalType(video->parameter_sets[0]) == 32);
  CHECK(HevcNalType(video->parameter_sets[1]) == 33);
  CHECK(HevcNalType(video->parameter_sets[2]) == 34);
  auto vframes = d.Of(Codec::kHevc);
  REQUIRE(vframes.size() == 100);
  CHECK(vframes.front().keyframe);
  auto keys = KeyframePositions(vframes);
  CHECK(std::find(keys.begin(), keys.end(), 50u) != keys.end());
  CheckVideoTimeline(vframes, 3600);
  REQUIRE(d.Track(Codec::kAac) != nullptr);
  CHECK(d.stats.cc_errors == 0);
  CHECK(d.stats.pes_dropped == 0);
}

TEST_CASE("S-3 any chunking of the input gives identical frames") {
  std::string ts = ReadFile(H264File());
  Demuxed reference = Demux(ts);
  REQUIRE(reference.frames.size() > 100);
  for (unsigned seed : {1u, 2u, 3u}) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<size_t> size(1, 4000);
    Demuxed d = Demux(ts, [&] { return size(rng); });
    CHECK(SameFrames(d.frames, reference.frames));
    CHECK(d.track_events.size() == reference.track_events.size());
    CHECK(d.stats.cc_errors == 0);
    CHECK(d.stats.resyncs == 0);
  }
  Demuxed bytewise = Demux(ts, [] { return size_t{1}; });
  CHECK(SameFrames(bytewise.frames, reference.frames));
  Demuxed datagrams = Demux(ts, [] { return size_t{1316}; });
  CHECK(SameFrames(datagrams.frames, reference.frames));
}

TEST_CASE("S-3 resynchronises after garbage between packets") {
  std::string ts = ReadFile(H264File());
  Demuxed reference = Demux(ts);
  std::mt19937 rng(42);
  std::string damaged;
  size_t garbage = 0;
  const std::map<size_t, size_t> inserts = {{100, 1}, {1000, 77}, {2000, 500}};
  for (size_t i = 0; i < ts.size() / kPacket; ++i) {
    damaged.append(ts, i * kPacket, kPacket);
    auto it = inserts.find(i);
    if (it == inserts.end()) continue;
    for (size_t k = 0; k < it->second; ++k) {
      // Some stray sync bytes that do not start a run of packets.
      char c = k % 50 == 3 ? 0x47 : static_cast<char>(rng() % 0x47);
      damaged.push_back(c);
    }
    garbage += it->second;
  }
  for (bool chunked : {false, true}) {
    std::mt19937 chunks(5);
    Demuxed d =
        chunked ? Demux(damaged, [&] { return size_t{1} + chunks() % 3000; }) : Demux(damaged);
    // No packet was lost: every frame is still there.
    CHECK(SameFrames(d.frames, reference.frames));
    CHECK(d.stats.resyncs == 3);
    CHECK(d.stats.bytes_skipped == garbage);
    CHECK(d.stats.cc_errors == 0);
  }
}

TEST_CASE("S-3 resynchronises after a truncated packet") {
  std::string ts = ReadFile(H264File());
  Demuxed reference = Demux(ts);
  const uint16_t vpid = reference.Track(Codec::kH264)->pid;
  size_t victim = NextContinuation(ts, vpid, 1200);
  std::string damaged = ts;
  damaged.erase(victim * kPacket + 100, kPacket - 100);  // keep only 100 bytes of it
  Demuxed d = Demux(damaged);
  CHECK(d.stats.resyncs >= 1);
  CHECK(d.stats.cc_errors == 1);
  CHECK(d.stats.pes_dropped == 1);
  // Exactly the access unit that lost data is missing; frames continue after it.
  CHECK(d.Of(Codec::kH264).size() == 99);
  CHECK(d.Of(Codec::kAac).size() == reference.Of(Codec::kAac).size());
  CHECK(SubsetOf(d.frames, reference.frames));
  CHECK(SameFrame(d.Of(Codec::kH264).back(), reference.Of(Codec::kH264).back()));
}

TEST_CASE("S-3 resynchronises after a flipped sync byte") {
  std::string ts = ReadFile(H264File());
  Demuxed reference = Demux(ts);
  const uint16_t vpid = reference.Track(Codec::kH264)->pid;
  std::string damaged = ts;
  size_t victim = NextContinuation(ts, vpid, 1600);
  damaged[victim * kPacket] = 0x46;
  Demuxed d = Demux(damaged);
  CHECK(d.stats.resyncs == 1);
  CHECK(d.stats.bytes_skipped == kPacket);
  CHECK(d.stats.cc_errors == 1);
  CHECK(d.Of(Codec::kH264).size() == 99);
  CHECK(SubsetOf(d.frames, reference.frames));
  CHECK(SameFrame(d.frames.back(), reference.frames.back()));
  // Leading garbage before the first packet is skipped the same way.
  Demuxed lead = Demux(std::string("\x47\x00garbage\x47", 10) + ts);
  CHECK(SameFrames(lead.frames, reference.frames));
  CHECK(lead.stats.resyncs == 1);
  CHECK(lead.stats.bytes_skipped == 10);
}

TEST_CASE("S-3 packets with transport_error_indicator are dropped and counted") {
  std::string ts = ReadFile(H264File());
  Demuxed reference = Demux(ts);
  const uint16_t vpid = reference.Track(Codec::kH264)->pid;
  std::string damaged = ts;
  for (size_t from : {300u, 900u, 1500u, 2100u}) {
    size_t victim = NextContinuation(ts, vpid, from);
    damaged[victim * kPacket + 1] = static_cast<char>(damaged[victim * kPacket + 1] | 0x80);
  }
  Demuxed d = Demux(damaged);
  CHECK(d.stats.tei_dropped == 4);
  CHECK(d.stats.cc_errors == 4);  // the dropped packets leave gaps
  CHECK(d.stats.pes_dropped == 4);
  CHECK(d.Of(Codec::kH264).size() == 96);
  CHECK(d.Of(Codec::kAac).size() == reference.Of(Codec::kAac).size());
  CHECK(SubsetOf(d.frames, reference.frames));
}

TEST_CASE("S-3 continuity-counter gaps are counted, not fatal") {
  std::string ts = ReadFile(H264File());
  Demuxed reference = Demux(ts);
  const uint16_t apid = reference.Track(Codec::kAac)->pid;
  std::vector<size_t> victims;
  for (size_t from : {400u, 1200u, 2000u}) victims.push_back(NextContinuation(ts, apid, from));
  std::string damaged;
  for (size_t i = 0; i < ts.size() / kPacket; ++i) {
    if (std::find(victims.begin(), victims.end(), i) == victims.end()) {
      damaged.append(ts, i * kPacket, kPacket);
    }
  }
  Demuxed d = Demux(damaged);
  CHECK(d.stats.cc_errors == 3);
  CHECK(d.stats.resyncs == 0);
  CHECK(d.Of(Codec::kAac).size() == reference.Of(Codec::kAac).size() - 3);
  CHECK(d.Of(Codec::kH264).size() == 100);
  CHECK(SubsetOf(d.frames, reference.frames));

  // A repeated packet (same CC) is a duplicate, not a gap.
  std::string dup = ts.substr(0, 500 * kPacket);
  dup.append(ts, 499 * kPacket, kPacket);
  dup.append(ts, 500 * kPacket);
  Demuxed dd = Demux(dup);
  CHECK(dd.stats.cc_errors == 0);
  CHECK(SameFrames(dd.frames, reference.frames));
}

TEST_CASE("S-3 33-bit PTS/DTS are unwrapped past 2^33") {
  Demuxed reference = Demux(ReadFile(H264File()));
  std::vector<TrackInfo> tracks;
  for (const auto& [pid, t] : reference.tracks) tracks.push_back(t);
  // Move the timeline to start 2 s before the wrap; the muxer writes it modulo 2^33.
  const int64_t shift = (kWrap - 2 * 90000) - reference.frames.front().dts;
  TsMuxer muxer(tracks);
  std::string ts;
  muxer.WriteTables(ts);
  std::vector<Frame> expected;
  for (Frame f : reference.frames) {
    f.pts += shift;
    f.dts += shift;
    expected.push_back(f);
    muxer.WriteFrame(f, ts);
  }
  Demuxed d = Demux(ts);
  REQUIRE(d.frames.size() == expected.size());
  for (Codec codec : {Codec::kH264, Codec::kAac}) {
    auto got = d.Of(codec);
    std::vector<Frame> want;
    for (const Frame& f : expected) {
      if (f.codec == codec) want.push_back(f);
    }
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      CHECK(got[i].pts == want[i].pts);
      CHECK(got[i].dts == want[i].dts);
    }
  }
  auto video = d.Of(Codec::kH264);
  CHECK(video.front().dts < kWrap);
  CHECK(video.back().dts > kWrap);
  CheckVideoTimeline(video, 3600);
  auto audio = d.Of(Codec::kAac);
  for (size_t i = 1; i < audio.size(); ++i) CHECK(audio[i].pts > audio[i - 1].pts);
  CHECK(audio.back().pts > kWrap);
}

TEST_CASE("S-3 a PMT version change or a new program replaces the tracks") {
  Demuxed reference = Demux(ReadFile(H264File()));
  std::vector<TrackInfo> tracks;
  for (const auto& [pid, t] : reference.tracks) tracks.push_back(t);
  const int64_t t0 = reference.frames.front().dts;
  TsMuxer muxer(tracks);  // video PID 0x100, audio 0x101, PMT 0x1000
  std::string ts;
  muxer.WriteTables(ts);  // PAT CC 0, PMT CC 0
  bool audio_only_sent = false, new_program_sent = false;
  std::vector<Frame> by_dts = reference.frames;
  std::stable_sort(by_dts.begin(), by_dts.end(),
                   [](const Frame& a, const Frame& b) { return a.dts < b.dts; });
  for (const Frame& f : by_dts) {
    if (!audio_only_sent && f.dts >= t0 + 90000) {
      // Version 1: the video stream leaves the program.
      ts += Packet(0x1000, true, 1, Pmt(1, 0x101, {{0x0f, 0x101}}));
      audio_only_sent = true;
    }
    if (!new_program_sent && f.dts >= t0 + 135000) {
      // A new program (PMT on another PID) with both streams again.
      ts += Packet(0, true, 1, Pat(1, 0x1001));
      ts += Packet(0x1001, true, 0, Pmt(0, 0x100, {{0x1b, 0x100}, {0x0f, 0x101}}));
      new_program_sent = true;
    }
    muxer.WriteFrame(f, ts);
  }
  Demuxed d = Demux(ts);
  CHECK(d.stats.cc_errors == 0);
  // Video: the frames of the first second, then from the keyframe (with SPS) at 2 s on.
  auto video = d.Of(Codec::kH264);
  auto ref_video = reference.Of(Codec::kH264);
  size_t first_second = std::count_if(ref_video.begin(), ref_video.end(),
                                      [&](const Frame& f) { return f.dts < t0 + 90000; });
  CHECK(video.size() == first_second + 50);
  CHECK(video[first_second].keyframe);
  CHECK(video[first_second].dts == ref_video[50].dts);
  // Audio continues throughout.
  CHECK(d.Of(Codec::kAac).size() == reference.Of(Codec::kAac).size());
  // Both tracks are announced again for the new program.
  int video_events = 0, audio_events = 0;
  for (const TrackInfo& t : d.track_events) (t.is_video() ? video_events : audio_events)++;
  CHECK(video_events == 2);
  CHECK(audio_events == 2);
}

TEST_CASE("S-3 an ADTS frame split across PES packets is carried over to the next PES") {
  Demuxed reference = Demux(ReadFile(H264File()));
  auto audio = reference.Of(Codec::kAac);
  REQUIRE(audio.size() >= 2);
  // The ADTS frames of the first audio access unit.
  const std::string& au = *audio[0].data;
  std::vector<std::string> adts;
  for (size_t off = 0; off < au.size();) {
    auto h = ParseAdtsHeader(
        std::span(reinterpret_cast<const uint8_t*>(au.data()) + off, au.size() - off));
    REQUIRE(h);
    adts.push_back(au.substr(off, h->frame_bytes));
    off += h->frame_bytes;
  }
  REQUIRE(adts.size() >= 3);
  std::vector<TrackInfo> tracks;
  for (const auto& [pid, t] : reference.tracks) {
    if (t.is_audio()) tracks.push_back(t);
  }
  TsMuxer muxer(tracks);
  std::string ts;
  muxer.WriteTables(ts);
  // PES 1: frame 0 and half of frame 1; PES 2 (PTS of frame 2): the rest of 1, then 2.
  const size_t half = adts[1].size() / 2;
  Frame f1 = audio[0];
  f1.data = std::make_shared<const std::string>(adts[0] + adts[1].substr(0, half));
  Frame f2 = audio[0];
  f2.pts = f2.dts = audio[0].pts + 2 * 1920;
  f2.data = std::make_shared<const std::string>(adts[1].substr(half) + adts[2]);
  muxer.WriteFrame(f1, ts);
  muxer.WriteFrame(f2, ts);
  Demuxed d = Demux(ts);
  auto got = d.Of(Codec::kAac);
  REQUIRE(got.size() == 2);
  CHECK(*got[0].data == adts[0]);
  CHECK(got[0].pts == audio[0].pts);
  CHECK(*got[1].data == adts[1] + adts[2]);
  CHECK(got[1].pts == audio[0].pts + 1920);  // frame 1 follows frame 0
  CHECK(d.stats.pes_dropped == 0);
}

TEST_CASE("S-3 an oversized PES is dropped and memory stays bounded") {
  Demuxed reference = Demux(ReadFile(H264File()));
  std::vector<TrackInfo> tracks;
  for (const auto& [pid, t] : reference.tracks) tracks.push_back(t);
  auto video = reference.Of(Codec::kH264);
  TsMuxer muxer(tracks);
  std::string ts;
  muxer.WriteTables(ts);
  muxer.WriteFrame(video[0], ts);
  Frame huge = video[1];
  huge.data = std::make_shared<const std::string>(TsDemuxer::kMaxPesBytes + 1000, '\x11');
  muxer.WriteFrame(huge, ts);
  for (size_t i = 2; i < 10; ++i) muxer.WriteFrame(video[i], ts);
  Demuxed d = Demux(ts, [] { return size_t{65536}; });
  CHECK(d.stats.pes_dropped == 1);
  auto got = d.Of(Codec::kH264);
  REQUIRE(got.size() == 9);
  CHECK(got[0].dts == video[0].dts);
  CHECK(got[1].dts == video[2].dts);
}

TEST_CASE("S-3 random garbage never crashes and Reset forgets everything") {
  std::string ts = ReadFile(H264File());
  Demuxed reference = Demux(ts);
  std::mt19937 rng(99);
  std::string junk(1 << 20, '\0');
  for (char& c : junk) c = static_cast<char>(rng());
  // Sprinkle packet-looking headers and slices of the real stream into the garbage.
  for (size_t off = 0; off + kPacket < junk.size(); off += 188 * (1 + rng() % 8)) {
    junk[off] = 0x47;
    if (rng() % 2)
      junk.replace(off, kPacket, ts, (rng() % (ts.size() / kPacket)) * kPacket, kPacket);
  }
  std::vector<Frame> frames;
  TsDemuxer demuxer({nullptr, [&](Frame&& f) { frames.push_back(std::move(f)); }});
  auto bytes = reinterpret_cast<const uint8_t*>(junk.data());
  for (size_t off = 0; off < junk.size();) {
    size_t n = std::min<size_t>(1 + rng() % 5000, junk.size() - off);
    demuxer.Feed({bytes + off, n});
    off += n;
  }
  demuxer.Flush();
  CHECK(demuxer.stats().resyncs > 0);
  demuxer.Reset();
  frames.clear();
  demuxer.Feed({reinterpret_cast<const uint8_t*>(ts.data()), ts.size()});
  demuxer.Flush();
  CHECK(SameFrames(frames, reference.frames));
}

}  // namespace meshwork::media
