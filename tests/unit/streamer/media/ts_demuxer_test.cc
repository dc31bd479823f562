// S-3 MPEG-TS demuxing of real ffmpeg output (generated at test time): tracks, codec strings,
// frames and timestamps, whatever the chunking. Robustness: ts_demuxer_robustness_test.cc.
#include "streamer/media/ts_demuxer.h"

#include <catch2/catch.hpp>

#include "tests/unit/streamer/media/ts_test_util.h"

namespace meshwork::media {
namespace {

using namespace ts_test;  // NOLINT: the helpers shared by the demuxer tests

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
  INFO("tools/bootstrap installs ffmpeg with libx265");
  REQUIRE(HaveX265());
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

}  // namespace
}  // namespace meshwork::media
