// Helpers of the MPEG-TS demuxer tests (ts_demuxer_test.cc, ts_demuxer_robustness_test.cc):
// ffmpeg-made files, demuxing with any chunking, frame comparisons and hand-made packets,
// PAT and PMT sections.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "streamer/media/codec_parsers.h"
#include "streamer/media/ts_demuxer.h"
#include "streamer/media/ts_muxer.h"
#include "tests/unit/streamer/media/test_files.h"

namespace meshwork::media::ts_test {

namespace fs = std::filesystem;

constexpr size_t kPacket = 188;
constexpr int64_t kWrap = int64_t{1} << 33;

inline const fs::path& Dir() {
  static TempDir dir("meshwork-media-demux");
  return dir.path();
}

const std::string kSources =
    "-f lavfi -i testsrc2=size=640x360:rate=25 -f lavfi -i sine=frequency=440:sample_rate=48000 "
    "-t 4 ";

// The 4 s H.264 (high) + AAC test file of the brief, generated once per process.
inline const std::string& H264File() {
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
inline Demuxed Demux(std::string_view data, std::function<size_t()> chunk = {}) {
  Demuxed out;
  TsDemuxer demuxer({[&](const TrackInfo& t) {
                       out.track_events.push_back(t);
                       out.tracks[t.pid] = t;
                     },
                     [&](Frame&& f) { out.frames.push_back(std::move(f)); }});
  size_t off = 0;
  while (off < data.size()) {
    size_t n = chunk ? std::min(chunk(), data.size() - off) : data.size();
    // Each read in a buffer of its own, freed after Feed: a view kept past it, or a read
    // before or beyond it, is a sanitizer's error rather than a look at the next bytes.
    auto read = std::make_unique<uint8_t[]>(n);
    std::memcpy(read.get(), data.data() + off, n);
    demuxer.Feed({read.get(), n});
    off += n;
  }
  demuxer.Flush();
  out.stats = demuxer.stats();
  return out;
}

inline bool SameFrame(const Frame& a, const Frame& b) {
  return a.pid == b.pid && a.codec == b.codec && a.pts == b.pts && a.dts == b.dts &&
         a.keyframe == b.keyframe && a.data && b.data && *a.data == *b.data;
}

inline bool SameFrames(const std::vector<Frame>& a, const std::vector<Frame>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!SameFrame(a[i], b[i])) return false;
  }
  return true;
}

// Every frame of `got` is the reference frame of the same PID and DTS.
inline bool SubsetOf(const std::vector<Frame>& got, const std::vector<Frame>& reference) {
  for (const Frame& f : got) {
    bool found = std::any_of(reference.begin(), reference.end(), [&](const Frame& r) {
      return r.pid == f.pid && r.dts == f.dts && SameFrame(r, f);
    });
    if (!found) return false;
  }
  return true;
}

inline uint16_t PidOf(const std::string& ts, size_t packet) {
  auto p = reinterpret_cast<const uint8_t*>(ts.data()) + packet * kPacket;
  return static_cast<uint16_t>(((p[1] & 0x1f) << 8) | p[2]);
}
inline bool PusiOf(const std::string& ts, size_t packet) {
  return static_cast<uint8_t>(ts[packet * kPacket + 1]) & 0x40;
}

// The first packet at or after `from` of `pid` that does not start a PES.
inline size_t NextContinuation(const std::string& ts, uint16_t pid, size_t from) {
  for (size_t i = from; i < ts.size() / kPacket; ++i) {
    if (PidOf(ts, i) == pid && !PusiOf(ts, i)) return i;
  }
  FAIL("no continuation packet");
  return 0;
}

// Duration of the ADTS frames in an AAC access unit.
inline double AdtsSeconds(const Frame& f) {
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

inline void CheckVideoTimeline(const std::vector<Frame>& video, int64_t frame_ticks) {
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
inline std::vector<size_t> KeyframePositions(std::vector<Frame> video) {
  std::sort(video.begin(), video.end(),
            [](const Frame& a, const Frame& b) { return a.pts < b.pts; });
  std::vector<size_t> out;
  for (size_t i = 0; i < video.size(); ++i) {
    if (video[i].keyframe) out.push_back(i);
  }
  return out;
}

inline std::string Packet(uint16_t pid, bool pusi, int cc, const std::string& section) {
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

inline std::string WithCrc(std::string section) {
  uint32_t crc = Crc32Mpeg2(reinterpret_cast<const uint8_t*>(section.data()), section.size());
  for (int s = 24; s >= 0; s -= 8) section.push_back(static_cast<char>(crc >> s));
  return section;
}

inline std::string Pat(int version, uint16_t pmt_pid) {
  std::string s = {0x00, static_cast<char>(0xb0),
                   13,   0x00,
                   0x01, static_cast<char>(0xc1 | (version << 1)),
                   0x00, 0x00,
                   0x00, 0x01};
  s.push_back(static_cast<char>(0xe0 | (pmt_pid >> 8)));
  s.push_back(static_cast<char>(pmt_pid & 0xff));
  return WithCrc(s);
}

inline std::string Pmt(int version, uint16_t pcr_pid,
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

}  // namespace meshwork::media::ts_test
