// S-25: CMAF fragments made by the packager's Fmp4Writer from a real ffmpeg H.264 + AAC
// source come back as the same frames (timestamps, keyframes, samples), and an MPEG-TS made
// from them by TsMuxer decodes cleanly with ffmpeg and starts where the source's does.
#include "streamer/media/fmp4_demuxer.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "streamer/media/codec_parsers.h"
#include "streamer/media/fmp4_writer.h"
#include "streamer/media/ts_demuxer.h"
#include "streamer/media/ts_muxer.h"
#include "tests/unit/streamer/media/test_files.h"

// A namespace of its own: unit tests compile in batches.
namespace meshwork::media::fmp4_demuxer_test {

namespace fs = std::filesystem;

const fs::path& Dir() {
  static TempDir dir("meshwork-media-demux");
  return dir.path();
}

// 4 s of 640x360@25 H.264 (GOP 50) + 48 kHz AAC as MPEG-TS, made once.
const std::string& SourceTs() {
  static const std::string path = [] {
    std::string out = (Dir() / "source.ts").string();
    std::string cmd =
        "ffmpeg -hide_banner -loglevel error -y -f lavfi -i testsrc2=size=640x360:rate=25 "
        "-f lavfi -i sine=frequency=440:sample_rate=48000 -t 4 -c:v libx264 -g 50 "
        "-pix_fmt yuv420p -c:a aac -b:a 96k -f mpegts " +
        out;
    REQUIRE(std::system(cmd.c_str()) == 0);
    return out;
  }();
  return path;
}

struct Source {
  TrackInfo video, audio;
  std::vector<Frame> frames;  // demuxer order
};

Source Load() {
  std::string ts = ReadFile(SourceTs());
  Source s;
  TsDemuxer demuxer({[&](const TrackInfo& t) { (t.is_video() ? s.video : s.audio) = t; },
                     [&](Frame&& f) { s.frames.push_back(std::move(f)); }});
  demuxer.Feed({reinterpret_cast<const uint8_t*>(ts.data()), ts.size()});
  demuxer.Flush();
  REQUIRE(s.video.is_video());
  REQUIRE(s.audio.is_audio());
  return s;
}

size_t AdtsFrames(const std::string& data) {
  size_t n = 0;
  for (size_t off = 0; off < data.size(); ++n) {
    auto h =
        ParseAdtsHeader({reinterpret_cast<const uint8_t*>(data.data()) + off, data.size() - off});
    REQUIRE(h.has_value());
    off += h->frame_bytes;
  }
  return n;
}

double StartTime(const std::string& file) {
  return std::stod(Capture("ffprobe -v error -show_entries format=start_time -of csv=p=0 " + file));
}

TEST_CASE("S-25 CMAF fragments come back as the packager's frames and make a clean MPEG-TS") {
  Source s = Load();
  // Timestamps far from zero, as the segmenter's absolute timeline has them.
  constexpr int64_t kShift = 150'000'000'000'000;
  for (Frame& f : s.frames) {
    f.pts += kShift;
    f.dts += kShift;
  }
  Fmp4Writer writer({s.video, s.audio});
  const std::string init = writer.InitSegment();
  // Two fragments (parts) of the first 2 s, as a segment assembled from its parts.
  std::vector<Frame> first, second;
  int64_t half = s.frames.front().dts + 90'000;
  int64_t end = s.frames.front().dts + 180'000;
  std::vector<Frame> kept;
  for (const Frame& f : s.frames) {
    if (f.dts >= end) continue;
    (f.dts < half ? first : second).push_back(f);
    kept.push_back(f);
  }
  std::string segment = writer.Fragment(first, 1) + writer.Fragment(second, 2);

  auto tracks = ProbeInitSegment(init);
  REQUIRE(tracks.size() == 2);
  // The frames take the pid of the track they are demuxed with (the muxer's track).
  ProbedTrack vt = tracks[0].info.is_video() ? tracks[0] : tracks[1];
  ProbedTrack at = tracks[0].info.is_video() ? tracks[1] : tracks[0];
  vt.info.pid = s.video.pid;
  at.info.pid = s.audio.pid;
  CHECK(vt.info.parameter_sets.size() >= 2);  // SPS, PPS from avcC
  CHECK(at.info.audio_specific_config == s.audio.audio_specific_config);

  auto video = DemuxFragments(segment, vt);
  auto audio = DemuxFragments(segment, at);
  REQUIRE(video.error.empty());
  REQUIRE(audio.error.empty());
  std::vector<const Frame*> source_video, source_audio;
  size_t source_aac = 0;
  for (const Frame& f : kept) {
    if (f.pid == s.video.pid) source_video.push_back(&f);
    if (f.pid == s.audio.pid) {
      source_audio.push_back(&f);
      source_aac += AdtsFrames(*f.data);
    }
  }
  REQUIRE(video.frames.size() == source_video.size());
  for (size_t i = 0; i < video.frames.size(); ++i) {
    INFO(i);
    CHECK(video.frames[i].dts == source_video[i]->dts);
    CHECK(video.frames[i].pts == source_video[i]->pts);
    CHECK(video.frames[i].keyframe == source_video[i]->keyframe);
  }
  CHECK(video.frames.front().keyframe);
  // A keyframe starts with the parameter sets: an MPEG-TS decoder may join there.
  CHECK(H264NalType(std::string_view(*video.frames.front().data).substr(4)) == 7);
  size_t demuxed_aac = 0;
  for (const Frame& f : audio.frames) demuxed_aac += AdtsFrames(*f.data);
  CHECK(demuxed_aac == source_aac);
  CHECK(std::llabs(audio.frames.front().pts - source_audio.front()->pts) <= 2);

  // The MPEG-TS made from the demuxed frames decodes without an error, keeps both tracks and
  // starts where the source's first 2 s start.
  std::vector<Frame> all = video.frames;
  all.insert(all.end(), audio.frames.begin(), audio.frames.end());
  std::stable_sort(all.begin(), all.end(),
                   [](const Frame& a, const Frame& b) { return a.dts < b.dts; });
  TsMuxer muxer({s.video, s.audio});
  std::string ts;
  muxer.WriteTables(ts);
  for (const Frame& f : all) muxer.WriteFrame(f, ts);
  TsMuxer reference_muxer({s.video, s.audio});
  std::string reference;
  reference_muxer.WriteTables(reference);
  for (const Frame& f : kept) reference_muxer.WriteFrame(f, reference);
  std::string made = WriteFileIn(Dir(), "made.ts", ts);
  std::string ref = WriteFileIn(Dir(), "reference.ts", reference);
  CHECK(DecodeErrors(made) == "");
  CHECK(Capture("ffprobe -v error -show_entries stream=codec_name -of csv=p=0 " + made) ==
        Capture("ffprobe -v error -show_entries stream=codec_name -of csv=p=0 " + ref));
  CHECK(std::abs(StartTime(made) - StartTime(ref)) < 0.0001);
}

TEST_CASE("S-25 the demuxer refuses what does not add up and never reads past its input") {
  Source s = Load();
  Fmp4Writer writer({s.video, s.audio});
  auto tracks = ProbeInitSegment(writer.InitSegment());
  REQUIRE(tracks.size() == 2);
  std::vector<Frame> some(s.frames.begin(), s.frames.begin() + 40);
  const std::string fragment = writer.Fragment(some, 1);
  REQUIRE(DemuxFragments(fragment, tracks[0]).error.empty());
  // Every truncation: an error or fewer samples, never a crash (ASan watches the reads).
  for (size_t cut = 0; cut < fragment.size(); cut += 97) {
    auto d = DemuxFragments(std::string_view(fragment).substr(0, cut), tracks[0]);
    CHECK((d.error.empty() ? !d.frames.empty() : d.frames.empty()));
  }
  CHECK_FALSE(DemuxFragments("", tracks[0]).error.empty());
  ProbedTrack no_timescale = tracks[0];
  no_timescale.timescale = 0;
  CHECK_FALSE(DemuxFragments(fragment, no_timescale).error.empty());
  CHECK(AdtsHeaderFor("", 10).empty());
  CHECK(AdtsHeaderFor(s.audio.audio_specific_config, 1 << 13).empty());
  auto header = AdtsHeaderFor(s.audio.audio_specific_config, 100);
  REQUIRE(header.size() == 7);
  auto parsed = ParseAdtsHeader({reinterpret_cast<const uint8_t*>(header.data()), 7});
  REQUIRE(parsed.has_value());
  CHECK(parsed->frame_bytes == 107);
  CHECK(parsed->sample_rate == 48000);
}

TEST_CASE("R-3 a fragment whose times leave the 90 kHz range is refused, not wrapped") {
  Source s = Load();
  Fmp4Writer writer({s.video, s.audio});
  auto tracks = ProbeInitSegment(writer.InitSegment());
  REQUIRE(tracks.size() == 2);
  std::vector<Frame> some(s.frames.begin(), s.frames.begin() + 10);
  for (Frame& f : some) {
    f.dts += int64_t{1} << 50;
    f.pts += int64_t{1} << 50;
  }
  const std::string fragment = writer.Fragment(some, 1);
  REQUIRE(DemuxFragments(fragment, tracks[0]).error.empty());  // 2^50 at 90 kHz: fine
  // The same decode times read in a timescale of 1 tick a second: 90 000 × 2^50 at 90 kHz,
  // past int64 (a TS muxer subtracting its PCR lead from the wrapped value overflowed).
  ProbedTrack slow = tracks[0];
  slow.timescale = 1;
  auto refused = DemuxFragments(fragment, slow);
  CHECK(refused.frames.empty());
  CHECK(refused.error.find("out of range") != std::string::npos);
}

TEST_CASE("R-3 a fragment of tiny keyframes does not multiply its init's parameter sets") {
  Source s = Load();
  Fmp4Writer writer({s.video, s.audio});
  auto tracks = ProbeInitSegment(writer.InitSegment());
  REQUIRE(tracks.size() == 2);
  ProbedTrack video = tracks[0];
  REQUIRE(video.info.is_video());
  // Parameter sets as large as a configuration may have them (16 KiB in all).
  size_t have = 0;
  for (const auto& ps : video.info.parameter_sets) have += ps.size();
  video.info.parameter_sets.push_back(std::string(1, '\x68') +
                                      std::string(kMaxParameterSetBytes - have - 1, '\x01'));
  // 300 keyframes of one slice byte each: each would become 16 KiB of Annex B.
  std::vector<Frame> tiny;
  for (int i = 0; i < 300; ++i) {
    Frame f = s.frames.front();
    for (const Frame& c : s.frames) {
      if (c.pid == s.video.pid && c.keyframe) {
        f = c;
        break;
      }
    }
    f.dts = f.pts = 3600 * i;
    f.keyframe = true;
    f.nal_count = 0;
    f.data = std::make_shared<const std::string>(std::string("\x00\x00\x00\x01\x65", 5));
    tiny.push_back(std::move(f));
  }
  const std::string fragment = writer.Fragment(tiny, 1);
  INFO("fragment " << fragment.size() << " bytes");
  auto refused = DemuxFragments(fragment, video);
  CHECK(refused.frames.empty());
  CHECK(refused.error.find("twice its size") != std::string::npos);
  // The same fragment with the init's own (small) parameter sets is read.
  CHECK(DemuxFragments(fragment, tracks[0]).error.empty());
}

}  // namespace meshwork::media::fmp4_demuxer_test
