// S-3 MPEG-TS demuxing robustness: garbage, truncated packets, lost sync, TEI packets,
// continuity gaps, the 33-bit timestamp wrap, PMT changes and oversized PES.
#include <catch2/catch.hpp>

#include "streamer/media/ts_demuxer.h"
#include "tests/unit/streamer/media/ts_test_util.h"

namespace meshwork::media {
namespace {

using namespace ts_test;  // NOLINT: the helpers shared by the demuxer tests

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

TEST_CASE("S-3 a wrap between the first audio and the first video frame keeps them together") {
  Demuxed reference = Demux(ReadFile(H264File()));
  std::vector<TrackInfo> tracks;
  for (const auto& [pid, t] : reference.tracks) tracks.push_back(t);
  // The first video frame one tick before 2^33: audio after it is written wrapped (small).
  const int64_t video_first = reference.Of(Codec::kH264).front().dts;
  const int64_t shift = (kWrap - 1) - video_first;
  TsMuxer muxer(tracks);
  std::string ts;
  muxer.WriteTables(ts);
  for (Frame f : reference.frames) {
    f.pts += shift;
    f.dts += shift;
    muxer.WriteFrame(f, ts);
  }
  Demuxed d = Demux(ts);
  auto video = d.Of(Codec::kH264);
  auto audio = d.Of(Codec::kAac);
  REQUIRE_FALSE(video.empty());
  REQUIRE_FALSE(audio.empty());
  const int64_t apart = audio.front().dts - video.front().dts;
  const int64_t apart_before = reference.Of(Codec::kAac).front().dts - video_first;
  CHECK(apart == apart_before);  // as far apart as in the source, not 2^33
  CheckVideoTimeline(video, 3600);
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

TEST_CASE("S-3 damaged input read in any chunking gives the same frames and counts") {
  // Packets are read where each read lies and only the undecided tail is carried to the next
  // read (P-7): the decisions on garbage, truncated packets and stray sync bytes must not
  // depend on where the reads end.
  std::string ts = ReadFile(H264File());
  for (unsigned seed : {1u, 2u, 3u, 4u}) {
    std::mt19937 rng(seed);
    std::string damaged = ts;
    for (int k = 0; k < 60; ++k) {
      size_t at = rng() % damaged.size();
      switch (rng() % 4) {
        case 0:  // garbage
          damaged.insert(at, std::string(rng() % 300, static_cast<char>(rng())));
          break;
        case 1:  // a truncated packet
          damaged.erase(at, rng() % 200);
          break;
        case 2:  // a lost sync byte
          damaged[at - at % kPacket] ^= static_cast<char>(0xff);
          break;
        default:  // a stray one
          damaged[at] = 0x47;
      }
    }
    Demuxed whole = Demux(damaged);
    REQUIRE(whole.stats.resyncs > 0);
    REQUIRE(whole.frames.size() > 50);
    for (size_t most : {size_t{1}, size_t{200}, size_t{4000}, size_t{70000}}) {
      Demuxed d = Demux(damaged, [&] { return size_t{1} + rng() % most; });
      CHECK(SameFrames(d.frames, whole.frames));
      CHECK(d.stats.packets == whole.stats.packets);
      CHECK(d.stats.bytes_skipped == whole.stats.bytes_skipped);
      CHECK(d.stats.resyncs == whole.stats.resyncs);
      CHECK(d.stats.cc_errors == whole.stats.cc_errors);
      CHECK(d.stats.pes_dropped == whole.stats.pes_dropped);
    }
  }
}

}  // namespace
}  // namespace meshwork::media
