// The deterministic segmenter (S-4, S-5, S-7) on synthetic frames with a fake clock.
#include "streamer/packager/segmenter.h"

#include <catch2/catch.hpp>
#include <map>

namespace meshwork::streamer {
namespace {

using namespace std::chrono_literals;

constexpr int64_t kFrame = 3600;  // 25 fps in 90 kHz

media::TrackInfo Video(uint16_t pid) {
  media::TrackInfo t;
  t.pid = pid;
  t.codec = media::Codec::kH264;
  t.codec_string = "avc1.64001e";
  t.width = 640;
  t.height = 360;
  t.frame_rate = 25;
  return t;
}

media::TrackInfo Audio(uint16_t pid) {
  media::TrackInfo t;
  t.pid = pid;
  t.codec = media::Codec::kAac;
  t.codec_string = "mp4a.40.2";
  t.sample_rate = 48000;
  t.channels = 1;
  return t;
}

media::Frame VideoFrame(uint16_t pid, int64_t ts, bool key) {
  media::Frame f;
  f.pid = pid;
  f.codec = media::Codec::kH264;
  f.pts = f.dts = ts;
  f.keyframe = key;
  // An IDR or non-IDR slice after an AUD, enough for the muxer.
  f.data = std::make_shared<const std::string>(
      std::string("\x00\x00\x00\x01\x09\xf0\x00\x00\x00\x01", 10) + (key ? "\x65" : "\x41") +
      std::string(100, '\x11'));
  return f;
}

struct Published {
  std::string rendition;
  Segment segment;
};

struct Harness {
  FakeClock clock;
  std::vector<Published> out;
  Segmenter segmenter{SegmenterOptions{}, clock,
                      [this](const RenditionInfo& info, std::shared_ptr<const Segment> s) {
                        out.push_back({info.name, *s});
                      }};
  // `seconds` of 25 fps video from `start` (90 kHz), a keyframe every `gop` frames.
  // `first` skips the frames before it (a node joining mid-stream).
  int64_t Feed(std::vector<uint16_t> pids, int64_t start, double seconds, int gop = 50,
               int first = 0) {
    int frames = static_cast<int>(seconds * 25);
    for (int i = first; i < frames; ++i) {
      for (uint16_t pid : pids)
        segmenter.OnFrame(VideoFrame(pid, start + i * kFrame, i % gop == 0));
      clock.Advance(40ms);
    }
    return start + frames * kFrame;
  }
};

TEST_CASE("S-5 msn and boundaries are a pure function of the source timestamps") {
  // Node A sees the source from 1.48 s; node B joins 7 s later (its clock is 7 s on too).
  Harness a, b;
  b.clock.Advance(7s);
  for (auto* h : {&a, &b}) h->segmenter.OnTrack(Video(0x100));
  int64_t start = 133'200;  // 1.48 s
  a.Feed({0x100}, start, 20);
  b.Feed({0x100}, start, 20, 50, /*first=*/175);  // joins 7 s in, mid-GOP
  std::map<int64_t, Segment> by_msn;
  for (const auto& p : a.out) by_msn[p.segment.msn] = p.segment;
  int common = 0;
  for (const auto& p : b.out) {
    auto it = by_msn.find(p.segment.msn);
    if (it == by_msn.end()) continue;
    ++common;
    CHECK(p.segment.start == it->second.start);
    CHECK(p.segment.duration == it->second.duration);
    CHECK(p.segment.program_date_time_ms == it->second.program_date_time_ms);
  }
  CHECK(common >= 4);
  // Consecutive msn, each segment 2 s and starting at a keyframe at/after a 2 s multiple.
  for (size_t i = 1; i < a.out.size(); ++i) {
    CHECK(a.out[i].segment.msn == a.out[i - 1].segment.msn + 1);
    CHECK(a.out[i].segment.duration == 180'000);
    CHECK(a.out[i].segment.msn == a.out[i].segment.start / 180'000);
  }
}

TEST_CASE("S-4 each video track becomes a rendition carrying the audio") {
  Harness h;
  h.segmenter.OnTrack(Video(0x100));
  h.segmenter.OnTrack(Video(0x101));
  h.segmenter.OnTrack(Audio(0x1f0));
  h.Feed({0x100, 0x101}, 0, 7);
  std::map<std::string, int> per_rendition;
  for (const auto& p : h.out) per_rendition[p.rendition]++;
  CHECK(per_rendition.size() == 2);
  CHECK(per_rendition["v1"] >= 2);
  CHECK(per_rendition["v2"] == per_rendition["v1"]);
}

TEST_CASE("S-7 a timeline jump closes the segment at its last frame and marks a discontinuity") {
  Harness h;
  h.segmenter.OnTrack(Video(0x100));
  h.Feed({0x100}, 900'000, 9);
  size_t before = h.out.size();
  REQUIRE(before >= 3);
  h.clock.Advance(5s);          // the source is away for 5 s
  h.Feed({0x100}, 126'000, 9);  // a new encoder run: timestamps start over
  REQUIRE(h.out.size() > before + 2);
  const Segment& cut = h.out[before].segment;  // the segment that was open at the cut
  // It ends one frame after its last frame: the 5 s gap is not inside it.
  CHECK(cut.duration <= 180'000);
  CHECK(cut.duration % kFrame == 0);
  const Segment& resumed = h.out[before + 1].segment;
  CHECK(resumed.discontinuity);
  CHECK(resumed.msn == cut.msn + 1);  // consecutive
  // Program date-time moves on by the real gap, not backwards with the timestamps.
  CHECK(resumed.program_date_time_ms - (cut.program_date_time_ms + cut.duration / 90) >= 4900);
  for (size_t i = before + 2; i < h.out.size(); ++i) {
    CHECK_FALSE(h.out[i].segment.discontinuity);
    CHECK(h.out[i].segment.msn == h.out[i - 1].segment.msn + 1);
  }
}

TEST_CASE("S-5 a GOP longer than the segment duration keeps msn consecutive") {
  Harness h;
  h.segmenter.OnTrack(Video(0x100));
  h.Feed({0x100}, 0, 17, /*gop=*/100);  // a keyframe every 4 s
  REQUIRE(h.out.size() >= 3);
  for (size_t i = 1; i < h.out.size(); ++i) {
    CHECK(h.out[i].segment.msn == h.out[i - 1].segment.msn + 1);
    CHECK(h.out[i].segment.duration == 360'000);
  }
}

}  // namespace
}  // namespace meshwork::streamer
