// RTMP and RTMPS ingest (S-1 rtmp, M-3) with independent publishers: ffmpeg's RTMP client
// and GStreamer's rtmp2sink, the result read by ffprobe and played by hls.js and dash.js.
#include <catch2/catch.hpp>
#include <map>

#include "tests/integration/media_harness.h"

namespace meshwork::testing {
namespace {

const std::string kApi = "/central/api-v4";

// ffmpeg publishing the H.264/AAC test source in real time to `url` as FLV over RTMP(S).
std::unique_ptr<Process> PublishRtmp(const std::string& url, int seconds = 60,
                                     const std::string& log_tag = "rtmp-publisher") {
  return Process::Start({"/usr/bin/ffmpeg", "-hide_banner", "-loglevel", "error", "-re", "-i",
                         SourceTs(seconds), "-c", "copy", "-f", "flv", url},
                        MakeTempDir(log_tag) + ".log");
}

MediaPlaylistInfo Playlist(const Streamer& node, const std::string& stream) {
  auto r = Http("GET", node.http, "/" + stream + "/v1/index.m3u8");
  return r.status == 200 ? ParseMediaPlaylist(r.body) : MediaPlaylistInfo{};
}

Streamer StartRtmpIngest(const Central& central, const std::string& id, const std::string& stream,
                         const std::vector<std::string>& extra = {}) {
  std::vector<std::string> flags = {"--rtmp-listen=127.0.0.1:0"};
  flags.insert(flags.end(), extra.begin(), extra.end());
  auto node = StartIngestWithStream(central, id, stream, {"rtmp://"}, flags);
  REQUIRE(!node.rtmp.empty());
  return node;
}

// The codecs ffprobe finds in segment `msn` of `stream`, saved under `dir`.
std::map<std::string, std::string> SegmentCodecs(const Streamer& node, const std::string& stream,
                                                 int64_t msn, const std::string& dir) {
  auto seg = Http("GET", node.http, "/" + stream + "/v1/" + std::to_string(msn) + ".ts");
  REQUIRE(seg.status == 200);
  std::string file = dir + "/" + stream + "-" + std::to_string(msn) + ".ts";
  WriteFile(file, seg.body);
  auto probe = Probe(file);
  std::map<std::string, std::string> codecs;
  for (const auto& s : probe["streams"]) codecs[s["codec_type"]] = s["codec_name"];
  CHECK(probe["first_video_frame"]["key_frame"] == 1);
  return codecs;
}

TEST_CASE("S-1 RTMP: ffmpeg publishes H.264/AAC and the stream is packaged as HLS and DASH") {
  auto dir = MakeTempDir("rtmp-ffmpeg");
  auto central = StartCentral(dir);
  auto node = StartRtmpIngest(central, "ingest-1", "cam");
  auto publisher = PublishRtmp("rtmp://" + node.rtmp + "/live/cam");
  REQUIRE(Eventually([&] { return Playlist(node, "cam").entries.size() >= 3; }, 30s));
  auto playlist = Playlist(node, "cam");
  for (size_t i = 0; i < playlist.entries.size(); ++i) {
    INFO("msn " << playlist.entries[i].msn);
    CHECK(playlist.entries[i].duration == Approx(2.0).margin(0.05));
    auto codecs = SegmentCodecs(node, "cam", playlist.entries[i].msn, dir);
    CHECK(codecs["video"] == "h264");
    CHECK(codecs["audio"] == "aac");
  }
  CHECK(Http("GET", node.http, "/cam/index.mpd").status == 200);
  CHECK(MetricAt(node.http, "meshwork_rtmp_publishes_total", "result=\"started\"") == 1);
}

}  // namespace
}  // namespace meshwork::testing
