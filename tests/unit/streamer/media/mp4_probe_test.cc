// The fMP4 probe (L-1, S-16a) on what ffmpeg writes as a CMAF packager would: fragmented MP4
// with H.264 or HEVC video and AAC audio in separate files, read back for their tracks and
// their fragments' decode times; and on truncated and corrupted input.
#include "streamer/media/mp4_probe.h"

#include <catch2/catch.hpp>
#include <string>

#include "tests/unit/streamer/media/test_files.h"

namespace meshwork::media {
namespace {

// 2 s of 320x240@25 (GOP 25) or 48 kHz stereo AAC as fragmented MP4, made by ffmpeg.
std::string Fragmented(const std::string& what) {
  static TempDir dir("meshwork-mp4-probe");
  std::string out = (dir.path() / (what + ".mp4")).string();
  std::string input =
      what == "aac" ? "-f lavfi -i sine=frequency=440:sample_rate=48000 -ac 2 "
                      "-c:a aac -b:a 96k"
                    : "-f lavfi -i testsrc2=size=320x240:rate=25 -c:v " + what +
                          " -g 25 -pix_fmt yuv420p -preset ultrafast" +
                          (what == "libx265" ? " -tag:v hvc1 -x265-params log-level=error" : "");
  Capture("ffmpeg -hide_banner -loglevel error -y " + input +
          " -t 2 -f mp4 -movflags empty_moov+default_base_moof+frag_keyframe " + out);
  return ReadFile(out);
}

// Splits an fMP4 file at its first moof: the init segment and the fragments after it.
std::pair<std::string, std::string> SplitAtMoof(const std::string& file) {
  size_t moof = file.find("moof");
  REQUIRE(moof != std::string::npos);
  return {file.substr(0, moof - 4), file.substr(moof - 4)};
}

TEST_CASE("S-16a L-1 the tracks of a published H.264 init segment") {
  auto [init, fragments] = SplitAtMoof(Fragmented("libx264"));
  auto tracks = ProbeInitSegment(init);
  REQUIRE(tracks.size() == 1);
  const ProbedTrack& t = tracks[0];
  CHECK(t.info.is_video());
  CHECK(t.info.codec_string.rfind("avc1.", 0) == 0);
  CHECK(t.info.codec_string.size() == 11);  // avc1.PPCCLL
  CHECK(t.info.width == 320);
  CHECK(t.info.height == 240);
  CHECK(t.timescale > 0);
  auto start = ProbeFragmentStart(fragments);
  REQUIRE(start);
  CHECK(start->track_id == t.track_id);
  CHECK(start->base_media_decode_time == 0);
  // The second fragment starts a GOP (1 s) later on the track's timeline.
  size_t second = fragments.find("moof", 8);
  REQUIRE(second != std::string::npos);
  auto next = ProbeFragmentStart(std::string_view(fragments).substr(second - 4));
  REQUIRE(next);
  CHECK(next->base_media_decode_time == t.timescale);
}

TEST_CASE("S-16a L-1 the tracks of a published AAC init segment") {
  auto [init, fragments] = SplitAtMoof(Fragmented("aac"));
  auto tracks = ProbeInitSegment(init);
  REQUIRE(tracks.size() == 1);
  CHECK(tracks[0].info.is_audio());
  CHECK(tracks[0].info.codec_string == "mp4a.40.2");
  CHECK(tracks[0].info.aac_object_type == 2);
  CHECK(tracks[0].info.channels == 2);
  CHECK(tracks[0].info.sample_rate == 48000);
  CHECK(tracks[0].timescale == 48000);
}

TEST_CASE("S-16a L-1 the tracks of a published HEVC init segment") {
  INFO("tools/bootstrap installs ffmpeg with libx265");
  REQUIRE(HaveX265());
  auto [init, fragments] = SplitAtMoof(Fragmented("libx265"));
  auto tracks = ProbeInitSegment(init);
  REQUIRE(tracks.size() == 1);
  CHECK(tracks[0].info.codec == Codec::kHevc);
  // hvc1.<profile>.<compat>.L<level>.<constraints>: Main profile, level 2 or so at 320x240.
  CHECK(tracks[0].info.codec_string.rfind("hvc1.1.6.L", 0) == 0);
}

TEST_CASE("L-1 truncated or corrupted objects give no tracks and never crash") {
  auto [init, fragments] = SplitAtMoof(Fragmented("libx264"));
  for (size_t n = 0; n < init.size(); n += 7) {
    auto tracks = ProbeInitSegment(std::string_view(init).substr(0, n));
    for (const auto& t : tracks) CHECK(t.info.codec_string.size() <= 64);
  }
  std::string corrupt = init;
  for (size_t i = 8; i < corrupt.size(); i += 13) corrupt[i] = static_cast<char>(0xff);
  (void)ProbeInitSegment(corrupt);
  CHECK(ProbeInitSegment("").empty());
  CHECK_FALSE(ProbeFragmentStart(""));
  CHECK_FALSE(ProbeFragmentStart(init));  // no moof
  for (size_t n = 0; n < 200 && n < fragments.size(); ++n) {
    (void)ProbeFragmentStart(std::string_view(fragments).substr(0, n));
  }
}

}  // namespace
}  // namespace meshwork::media
