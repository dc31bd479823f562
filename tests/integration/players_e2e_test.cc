// The players viewers run today, against both ways a stream reaches a node: dash.js 5.x and
// hls.js (low-latency mode) in headless Chromium play (a) a stream the streamer packages
// itself from an ffmpeg push (S-8, S-16, S-16a) and (b) a stream an external ffmpeg packages
// and publishes object by object (`-f dash -method PUT`, `-f hls -method PUT`, L-1). Each run
// must play 12 s without a fatal player error. ffprobe checks the CMAF rule of S-16a: each
// rendition's init.mp4 holds one track, and the renditions together hold H.264 video and
// AAC audio.
#include <catch2/catch.hpp>
#include <map>
#include <regex>
#include <set>

#include "tests/integration/media_harness.h"

namespace meshwork::testing {
namespace {

constexpr int kPlaySeconds = 12;  // M-10: long enough for segments, parts and reloads to cycle

// The run played `seconds` without a fatal error; the failure message carries the player's
// own error text (play.mjs puts it in "reason") and the tail of its diagnostics.

// The media types and codecs ffprobe reads from one init.mp4 (fetched from the viewer
// listener), as codec_type → codec_name; empty when the object is missing or unreadable.
std::multimap<std::string, std::string> InitTracks(const Streamer& node, const std::string& dir,
                                                   const std::string& stream,
                                                   const std::string& rendition) {
  std::multimap<std::string, std::string> tracks;
  auto init = Http("GET", node.http, "/" + stream + "/" + rendition + "/init.mp4");
  if (init.status != 200) return tracks;
  std::string file = dir + "/init-" + rendition + ".mp4";
  WriteFile(file, init.body);
  auto probe = Probe(file);
  if (!probe.is_object() || !probe.contains("streams")) return tracks;
  for (const auto& s : probe["streams"]) {
    tracks.emplace(s.value("codec_type", ""), s.value("codec_name", ""));
  }
  return tracks;
}

// S-16a on the init segments of `renditions`: one track each, H.264 video and AAC audio among
// them.
void CheckOneTrackPerInit(const Streamer& node, const std::string& dir, const std::string& stream,
                          const std::vector<std::string>& renditions) {
  REQUIRE(!renditions.empty());
  std::multimap<std::string, std::string> all;
  for (const auto& r : renditions) {
    auto tracks = InitTracks(node, dir, stream, r);
    std::string listed;
    for (const auto& [type, codec] : tracks) listed += type + ":" + codec + " ";
    INFO("rendition " << r << " init.mp4 tracks: " << listed);
    CHECK(tracks.size() == 1);
    all.insert(tracks.begin(), tracks.end());
  }
  std::set<std::string> video, audio;
  for (const auto& [type, codec] : all) (type == "video" ? video : audio).insert(codec);
  CHECK(video.count("h264") == 1);
  CHECK(audio.count("aac") == 1);
}

// Representation ids of an MPD.
std::vector<std::string> Representations(const std::string& mpd) {
  std::vector<std::string> ids;
  static const std::regex kRep("<Representation[^>]*\\sid=\"([^\"]+)\"");
  for (auto it = std::sregex_iterator(mpd.begin(), mpd.end(), kRep); it != std::sregex_iterator();
       ++it) {
    ids.push_back((*it)[1]);
  }
  return ids;
}

// The rendition has at least `n` complete segments listed in its media playlist.
bool Listed(const Streamer& node, const std::string& stream, const std::string& rendition,
            const std::string& playlist, size_t n) {
  auto r = Http("GET", node.http, "/" + stream + "/" + rendition + "/" + playlist);
  return r.status == 200 && ParseMediaPlaylist(r.body).entries.size() >= n;
}

// An origin with `stream` placed (pipeline a, 2 s segments), ready for publishes.
Streamer StartOriginWithStream(const Central& central, const std::string& stream) {
  auto node = StartStreamer(central.grpc, "origin-1", "origin");
  nlohmann::json body = {{"placement", {{"streamers", {"origin-1"}}}},
                         {"segment_ms", 2000},
                         {"live_window", 6},
                         {"pipelines", {"a"}}};
  auto put = Http("PUT", central.http, "/central/api-v4/streams/" + stream, body.dump());
  INFO(put.body);
  REQUIRE(put.status == 201);
  REQUIRE(Eventually(
      [&] {
        return Http("POST", node.publish, "/" + stream + "/notifications",
                    R"({"id":"up","type":"probe"})")
                   .status == 200;
      },
      10s));
  return node;
}

// ffmpeg's DASH muxer publishing `source` in real time to the origin: video and audio in
// their own AdaptationSets, objects PUT to /{stream}/{RepresentationID}/init.mp4 and
// /{stream}/{RepresentationID}/{Number}.m4s (renditions "0" = video, "1" = audio), with
// X-Pipeline: a. Its own MPD goes to /{stream}/index.mpd, which the origin does not keep.
std::unique_ptr<Process> DashPackager(const std::string& source, const std::string& publish,
                                      const std::string& stream, const std::string& log) {
  std::vector<std::string> argv = {
      "/usr/bin/ffmpeg", "-hide_banner", "-loglevel", "error", "-re", "-i", source, "-map", "0:v",
      "-map", "0:a", "-c", "copy",
      // MPEG-TS stream types are no MP4 sample entries.
      "-tag:v", "avc1", "-tag:a", "mp4a", "-f", "dash", "-seg_duration", "2", "-window_size", "6",
      "-use_template", "1", "-use_timeline", "0", "-start_number", "0", "-adaptation_sets",
      "id=0,streams=v id=1,streams=a", "-init_seg_name", "$RepresentationID$/init.mp4",
      "-media_seg_name", "$RepresentationID$/$Number$.m4s", "-method", "PUT",
      // An AVDictionary string: the ':' inside the header value is escaped.
      "-http_opts", "headers=X-Pipeline\\: a", "http://" + publish + "/" + stream + "/index.mpd"};
  return Process::Start(argv, log);
}

// ffmpeg's HLS muxer publishing one elementary stream of `source` as an fMP4 rendition:
// /{stream}/{rendition}/init.mp4 and /{stream}/{rendition}/{msn}.m4s, X-Pipeline: a.
// `map` is "0:v" or "0:a".
std::unique_ptr<Process> HlsFmp4Packager(const std::string& source, const std::string& publish,
                                         const std::string& stream, const std::string& rendition,
                                         const std::string& map, const std::string& log) {
  std::string base = "http://" + publish + "/" + stream + "/" + rendition + "/";
  std::vector<std::string> argv = {"/usr/bin/ffmpeg",
                                   "-hide_banner",
                                   "-loglevel",
                                   "error",
                                   "-re",
                                   "-i",
                                   source,
                                   "-map",
                                   map,
                                   "-c",
                                   "copy",
                                   "-bsf:a",
                                   "aac_adtstoasc",
                                   "-f",
                                   "hls",
                                   "-hls_time",
                                   "2",
                                   "-hls_list_size",
                                   "6",
                                   "-start_number",
                                   "0",
                                   "-hls_segment_type",
                                   "fmp4",
                                   "-hls_fmp4_init_filename",
                                   "init.mp4",
                                   "-method",
                                   "PUT",
                                   "-headers",
                                   "X-Pipeline: a\r\n",
                                   "-hls_segment_filename",
                                   base + "%d.m4s",
                                   base + "index.m3u8"};
  return Process::Start(argv, log);
}

// The stream's MPD lists Representations and each one's init.mp4 is there (whatever the
// renditions are named); returns the MPD.
std::string WaitForMpd(const Streamer& node, const std::string& stream) {
  std::string body;
  bool ready = Eventually(
      [&] {
        auto mpd = Http("GET", node.http, "/" + stream + "/index.mpd");
        if (mpd.status != 200) return false;
        auto ids = Representations(mpd.body);
        if (ids.empty()) return false;
        for (const auto& id : ids) {
          if (Http("GET", node.http, "/" + stream + "/" + id + "/init.mp4").status != 200) {
            return false;
          }
        }
        body = mpd.body;
        return true;
      },
      20s);
  REQUIRE(ready);
  return body;
}

// ---------------------------------------------------------------------------------------
// (a) packaged by the streamer

TEST_CASE("S-16a dash.js 5 plays a locally packaged stream for 12 s") {
  auto dir = MakeTempDir("dash5-local");
  auto central = StartCentral(dir);
  auto node = StartIngestWithStream(central, "ingest-1", "dash5");
  auto push = PushFile(SourceTs(60), node.publish, "dash5");
  WaitForMpd(node, "dash5");
  CheckPlayed(PlayDash("http://" + node.http + "/dash5/index.mpd", kPlaySeconds), kPlaySeconds);
}

TEST_CASE(
    "S-16a each locally packaged rendition's init.mp4 holds one track, and audio has its own "
    "AdaptationSet and EXT-X-MEDIA group") {
  auto dir = MakeTempDir("cmaf-local");
  auto central = StartCentral(dir);
  auto node = StartIngestWithStream(central, "ingest-1", "cmaf");
  auto push = PushFile(SourceTs(60), node.publish, "cmaf");
  std::string mpd = WaitForMpd(node, "cmaf");
  // A rendition is listed once its first segment is in: audio's may close a frame before
  // video's (a CI run read the MPD in between).
  Eventually(
      [&] {
        mpd = WaitForMpd(node, "cmaf");
        return mpd.find("contentType=\"video\"") != std::string::npos &&
               mpd.find("contentType=\"audio\"") != std::string::npos;
      },
      10s);
  INFO(mpd);
  CHECK(mpd.find("contentType=\"audio\"") != std::string::npos);
  CHECK(mpd.find("contentType=\"video\"") != std::string::npos);
  // No Representation lists two codecs (dash.js 5 refuses it).
  CHECK(!std::regex_search(mpd, std::regex("codecs=\"[^\"]*,[^\"]*\"")));
  auto master = Http("GET", node.http, "/cmaf/index.ll.m3u8");
  REQUIRE(master.status == 200);
  INFO(master.body);
  CHECK(master.body.find("#EXT-X-MEDIA:TYPE=AUDIO") != std::string::npos);
  CheckOneTrackPerInit(node, dir, "cmaf", Representations(mpd));
}

// hls.js in low-latency mode on a locally packaged stream: "S-10 hls.js in low-latency mode
// plays the LL-HLS stream for 12 s" (ll_hls_test.cc).

// ---------------------------------------------------------------------------------------
// (b) packaged and published by ffmpeg

TEST_CASE("L-1 S-16 dash.js 5 plays an ffmpeg-published DASH stream for 12 s") {
  auto dir = MakeTempDir("dash5-published");
  auto central = StartCentral(dir);
  auto node = StartOriginWithStream(central, "dashpub");
  auto packager = DashPackager(SourceTs(60), node.publish, "dashpub", dir + "/ffmpeg-dash.log");
  REQUIRE(Eventually(
      [&] {
        return Listed(node, "dashpub", "0", "index.m3u8", 3) &&
               Listed(node, "dashpub", "1", "index.m3u8", 3);
      },
      20s));
  // S-16a: the packager's renditions, one track each.
  CheckOneTrackPerInit(node, dir, "dashpub", {"0", "1"});
  auto mpd = Http("GET", node.http, "/dashpub/index.mpd");
  INFO("GET /dashpub/index.mpd: " << mpd.status << "\n" << mpd.body);
  CHECK(mpd.status == 200);
  auto result = PlayInBrowser("http://" + node.http + "/dashpub/index.mpd", kPlaySeconds,
                              "--player dash --timeout-s 45");
  CheckPlayed(result, kPlaySeconds);
}

TEST_CASE(
    "L-1 S-10 hls.js in low-latency mode plays an ffmpeg-published fMP4 HLS stream for "
    "12 s") {
  auto dir = MakeTempDir("hls-published");
  auto central = StartCentral(dir);
  auto node = StartOriginWithStream(central, "hlspub");
  const std::string& source = SourceTs(60);
  auto video = HlsFmp4Packager(source, node.publish, "hlspub", "v1", "0:v", dir + "/ffmpeg-v1.log");
  auto audio = HlsFmp4Packager(source, node.publish, "hlspub", "a1", "0:a", dir + "/ffmpeg-a1.log");
  REQUIRE(Eventually(
      [&] {
        return Listed(node, "hlspub", "v1", "index.m3u8", 3) &&
               Listed(node, "hlspub", "a1", "index.m3u8", 3);
      },
      20s));
  CheckOneTrackPerInit(node, dir, "hlspub", {"v1", "a1"});
  // S-16a: the audio-only rendition is an audio group, not a variant of its own.
  auto master = Http("GET", node.http, "/hlspub/index.m3u8");
  INFO(master.body);
  CHECK(master.body.find("#EXT-X-MEDIA:TYPE=AUDIO") != std::string::npos);
  auto result = PlayInBrowser("http://" + node.http + "/hlspub/index.m3u8", kPlaySeconds,
                              "--low-latency --timeout-s 45");
  CheckPlayed(result, kPlaySeconds);
}

}  // namespace
}  // namespace meshwork::testing
