// Every HLS playlist form the node writes, byte for byte against golden files
// (tests/unit/streamer/delivery/golden/): live HLS-TS master and media playlists (masks as
// EXT-X-GAP, cache versions), LL-HLS master, full and delta media playlists, the archive's
// media playlists, and the master with OTT backups. The golden files were first written from
// the renderers as they were before the one playlist writer, then corrected where that output
// was wrong (each correction is named in the test that shows it). MESHWORK_UPDATE_GOLDEN=1
// rewrites them from the current output (review the diff before committing).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "streamer/archive/archive_index.h"
#include "streamer/delivery/archive_routes.h"
#include "streamer/delivery/ll_hls.h"
#include "streamer/delivery/playlists.h"
#include "streamer/ott/backups.h"
#include "tests/test_paths.h"
#include "tests/unit/streamer/delivery/window_parts.h"

namespace meshwork::streamer {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kT0 = 1'796'205'600'000;  // 2026-12-02T10:00:00Z

fs::path GoldenDir() {
  return fs::path(meshwork::testing::SourcePath("tests/unit/streamer/delivery/golden"));
}

void CheckGolden(const std::string& name, const std::string& text) {
  const fs::path path = GoldenDir() / name;
  if (std::getenv("MESHWORK_UPDATE_GOLDEN")) {
    fs::create_directories(GoldenDir());
    std::ofstream(path, std::ios::binary) << text;
  }
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::stringstream golden;
  golden << in.rdbuf();
  INFO(name);
  CHECK(text == golden.str());
}

// `complete` segments of 2 s (4 parts of 0.5 s) from msn 100, a discontinuity before 103,
// then an open segment with `open` parts; both forms published.
std::shared_ptr<RenditionWindow> Window(const std::string& name, bool video, int complete,
                                        int open) {
  auto w = std::make_shared<RenditionWindow>();
  w->info.name = name;
  w->info.live_window = 6;
  w->info.init = std::make_shared<const std::string>("init");
  if (video) {
    w->info.tracks = {testing::TestTrack(true), testing::TestTrack(false)};
    w->info.cmaf_tracks = {testing::TestTrack(true)};
  } else {
    w->info.cmaf_tracks = {testing::TestTrack(false)};
  }
  w->has_ts = video;
  w->has_cmaf = true;
  w->peak_bitrate_bps = video ? 2'000'000 : 128'000;
  for (int i = 0; i < complete; ++i) {
    auto s = std::make_shared<Segment>();
    s->msn = 100 + i;
    s->start = s->msn * 180'000;
    s->duration = 180'000;
    s->program_date_time_ms = kT0 + i * 2000;
    s->discontinuity = s->msn == 103;
    s->ts_bytes = video ? 1000 : 0;
    s->m4s_bytes = 900;
    for (int p = 0; p < 4; ++p)
      s->parts.push_back(testing::TestPart(p, s->start + p * 45'000, p == 0));
    w->segments.push_back(s);
  }
  if (open > 0) {
    w->open_msn = 100 + complete;
    w->open_start = w->open_msn * 180'000;
    w->open_program_date_time_ms = kT0 + complete * 2000;
    for (int p = 0; p < open; ++p) {
      w->open_parts.push_back(testing::TestPart(p, w->open_start + p * 45'000, p == 0));
    }
  }
  return w;
}

TEST_CASE("one playlist writer: live HLS-TS master and media playlists match their golden files") {
  auto v1 = Window("v1", true, 8, 2);
  auto v2 = Window("v2", true, 8, 1);
  v2->peak_bitrate_bps = 800'000;
  CheckGolden("live_master.m3u8", MasterPlaylist({v1, v2}));
  CheckGolden("live_media.m3u8", MediaPlaylist(*v1, [](int64_t) { return uint64_t{1}; }));
  // L-13: msn 104 masked (a gap), L-14: 105 and later under version 3.
  CheckGolden("live_media_masked.m3u8", MediaPlaylist(*v1, [](int64_t msn) {
                return msn == 104 ? uint64_t{0} : msn >= 105 ? uint64_t{3} : uint64_t{1};
              }));
  // A rendition published only as CMAF is listed with EXT-X-MAP and .m4s.
  auto cmaf_only = Window("v1", true, 8, 0);
  cmaf_only->has_ts = false;
  CheckGolden("live_media_cmaf.m3u8", MediaPlaylist(*cmaf_only, nullptr));
}

// The value of the EXT-X-DISCONTINUITY-SEQUENCE tag in `playlist` (0 when absent, RFC 8216).
int64_t DiscontinuitySequenceOf(const std::string& playlist) {
  const std::string tag = "#EXT-X-DISCONTINUITY-SEQUENCE:";
  size_t at = playlist.find(tag);
  return at == std::string::npos ? 0 : std::stoll(playlist.substr(at + tag.size()));
}

TEST_CASE("S-7 a segment's discontinuity number stays the same as the window moves past it") {
  // The discontinuity is before 103. Windows of 6 listing 100…105, 103…108 and 104…109:
  // 103 is discontinuity 1 in all that list it, and so is every segment after it.
  for (bool ll : {false, true}) {
    INFO((ll ? "LL-HLS" : "HLS-TS"));
    auto render = [&](int complete) {
      auto w = Window("v1", true, complete, 0);
      return ll ? LowLatencyMediaPlaylist(*w, {}, false) : MediaPlaylist(*w, nullptr);
    };
    std::string before = render(6), at = render(9), after = render(10);
    CHECK(DiscontinuitySequenceOf(before) == 0);
    CHECK(before.find("#EXT-X-DISCONTINUITY\n") != std::string::npos);  // tag before 103
    CHECK(DiscontinuitySequenceOf(at) == 1);  // 103 first: its tag implied by the sequence
    CHECK(DiscontinuitySequenceOf(after) == 1);
  }
}

TEST_CASE("S-11 every rendition's LL-HLS playlist has the same PART-INF and SERVER-CONTROL") {
  auto v1 = Window("v1", true, 8, 2);
  auto a1 = Window("a1", false, 8, 2);
  // a1's parts are cut at whole AAC frames: 0.512 s against the video's 0.5 s.
  for (auto& segment : a1->segments) {
    auto longer = std::make_shared<Segment>(*segment);
    for (auto& part : longer->parts) {
      auto p = std::make_shared<Part>(*part);
      p->duration = 46'080;
      part = p;
    }
    segment = longer;
  }
  auto line = [](const std::string& playlist, const std::string& tag) {
    size_t at = playlist.find(tag);
    REQUIRE(at != std::string::npos);
    return playlist.substr(at, playlist.find('\n', at) - at);
  };
  const std::string video = LowLatencyMediaPlaylist(*v1, {v1, a1}, false);
  const std::string audio = LowLatencyMediaPlaylist(*a1, {v1, a1}, false);
  CHECK(line(video, "#EXT-X-PART-INF:") == line(audio, "#EXT-X-PART-INF:"));
  CHECK(line(video, "#EXT-X-SERVER-CONTROL:") == line(audio, "#EXT-X-SERVER-CONTROL:"));
  CHECK(line(video, "#EXT-X-PART-INF:") == "#EXT-X-PART-INF:PART-TARGET=0.512");
}

TEST_CASE("CS-1 one playlist writer: steered masters list each variant once per pathway") {
  auto v1 = Window("v1", true, 8, 2);
  auto v2 = Window("v2", true, 8, 1);
  auto a1 = Window("a1", false, 8, 2);
  hls::Steering steering;
  steering.server_uri = "https://central.example.net/steering/news";
  steering.pathway_id = "edge-1";
  steering.pathways = {{"edge-1", ""}, {"edge-2", "https://edge-2.example.net/news/"}};
  // HLS-TS: two variants on each pathway, this node's relative; the token on every URI.
  CheckGolden("steered_master.m3u8", MasterPlaylist({v1, v2}, "token=t", &steering));
  // CMAF: each pathway's own audio group.
  CheckGolden("steered_ll_master.m3u8", LowLatencyMasterPlaylist({a1, v1}, true, "", &steering));
  // No pathway: exactly the unsteered master.
  steering.pathways.clear();
  CHECK(MasterPlaylist({v1, v2}, "", &steering) == MasterPlaylist({v1, v2}));
}

TEST_CASE("one playlist writer: LL-HLS master, full and delta playlists match their golden files") {
  auto v1 = Window("v1", true, 8, 2);
  auto a1 = Window("a1", false, 8, 2);
  CheckGolden("ll_master.m3u8", LowLatencyMasterPlaylist({a1, v1}));
  CheckGolden("cmaf_master.m3u8", LowLatencyMasterPlaylist({a1, v1}, false));
  CheckGolden("ll_media.m3u8", LowLatencyMediaPlaylist(*v1, {a1, v1}, false));
  auto long_window = Window("v1", true, 14, 1);
  long_window->info.live_window = 14;
  CheckGolden("ll_media_delta.m3u8", LowLatencyMediaPlaylist(*long_window, {long_window}, true));
}

TEST_CASE("one playlist writer: archive media playlists match their golden files") {
  archive::ArchiveIndex index;
  archive::TrackKey ts{"news", archive::Proto::kTs, "v1"};
  for (int i = 0; i < 3; ++i) index.Add(ts, {kT0 + i * 2000, 2000, 100});
  index.Add(ts, {kT0 + 30000, 2000, 100});
  CheckGolden("archive_vod.m3u8", ArchiveMediaPlaylist(index, ts, kT0, kT0 + 60000, true));
  CheckGolden("archive_event.m3u8", ArchiveMediaPlaylist(index, ts, kT0, kT0 + 60000, false));
  archive::TrackKey cmaf{"news", archive::Proto::kFmp4, "v1"};
  index.Add(cmaf, {kT0, 2000, 100});
  index.Add(cmaf, {kT0 + 2000, 2000, 100});
  index.AddInit(cmaf, kT0);
  index.AddInit(cmaf, kT0 + 2000);
  CheckGolden("archive_cmaf.m3u8", ArchiveMediaPlaylist(index, cmaf, kT0, kT0 + 4000, true));
}

TEST_CASE("one playlist writer: archive masters name the audio group as live masters do") {
  // Corrected against the renderer before the one writer: the archive's CMAF master used the
  // audio group "aud" (live masters: "audio"), named the audio rendition after itself, had no
  // EXT-X-INDEPENDENT-SEGMENTS, and took a rendition whose name starts with "a" for audio.
  archive::ArchiveIndex index;
  for (const char* rendition : {"v1", "a1", "alt"}) {
    archive::TrackKey track{"news", archive::Proto::kFmp4, rendition};
    for (int i = 0; i < 3; ++i) index.Add(track, {kT0 + i * 2000, 2000, 250'000});
    index.AddInit(track, kT0);
  }
  std::map<std::string, std::shared_ptr<const RenditionWindow>> live = {
      {"v1", Window("v1", true, 3, 0)},
      {"a1", Window("a1", false, 3, 0)},
      {"alt", Window("alt", true, 3, 0)}};  // a video rendition whose name starts with "a"
  archive::ArchiveTarget target;
  target.kind = archive::ArchiveTarget::kPlaylist;
  target.proto = archive::Proto::kFmp4;
  target.from_ms = kT0;
  target.duration_ms = 6000;
  const std::string cmaf =
      ArchiveMasterPlaylist(index, "/nonexistent", live, "news", target, kT0 + 6000);
  CheckGolden("archive_master_cmaf.m3u8", cmaf);
  const std::string live_master = LowLatencyMasterPlaylist({live["a1"], live["v1"]}, false);
  // The same EXT-X-MEDIA line as the live master's, but for the URI.
  auto media_line = [](const std::string& text) {
    size_t at = text.find("#EXT-X-MEDIA:");
    return at == std::string::npos ? std::string() : text.substr(at, text.find(",URI=", at) - at);
  };
  CHECK_FALSE(media_line(cmaf).empty());
  CHECK(media_line(cmaf) == media_line(live_master));
  CHECK(cmaf.find("alt/index-") != std::string::npos);  // a variant, not an audio group

  for (const char* rendition : {"v1", "v2"}) {
    archive::TrackKey track{"news", archive::Proto::kTs, rendition};
    for (int i = 0; i < 3; ++i) index.Add(track, {kT0 + i * 2000, 2000, 500'000});
  }
  target.proto = archive::Proto::kTs;
  CheckGolden("archive_master_ts.m3u8",
              ArchiveMasterPlaylist(index, "/nonexistent", {}, "news", target, kT0 + 6000));
}

TEST_CASE("one playlist writer: the master with OTT backups matches its golden file") {
  auto v1 = Window("v1", true, 8, 0);
  CheckGolden("backups_master.m3u8",
              MasterWithBackups(TsVariant(*v1), "v1/index.m3u8",
                                {BackupUri("http://node-b:80", "ch1", "v1", "PASS-B"),
                                 BackupUri("https://node-c", "ch1", "v1", "PASS-C")}));
}

TEST_CASE("L-13 L-14 masks and versions in LL-HLS: a masked segment is a gap, URIs carry ?v=") {
  auto v1 = Window("v1", true, 8, 2);
  auto versions = [](int64_t msn) {
    return msn == 106 ? uint64_t{0} : msn >= 107 ? uint64_t{3} : uint64_t{1};
  };
  const std::string text = LowLatencyMediaPlaylist(*v1, {v1}, false, versions);
  CheckGolden("ll_media_masked.m3u8", text);
  CHECK(text.find("#EXT-X-GAP\n#EXT-X-PART:DURATION=0.50000,URI=\"106.0.m4s?v=1\",INDEPENDENT=YES,"
                  "GAP=YES\n") != std::string::npos);
  CHECK(text.find("\n107.m4s?v=3\n") != std::string::npos);
  CHECK(text.find("\n105.m4s?v=1\n") != std::string::npos);
}

TEST_CASE("one playlist writer: archive and live playlists agree on program date-time") {
  auto v1 = Window("v1", true, 6, 0);
  archive::ArchiveIndex index;
  archive::TrackKey ts{"news", archive::Proto::kTs, "v1"};
  for (const auto& s : v1->segments) {
    index.Add(ts, {s->program_date_time_ms, s->duration / 90, 1000});
  }
  auto dates = [](const std::string& text) {
    std::vector<std::string> out;
    for (size_t at = text.find("#EXT-X-PROGRAM-DATE-TIME:"); at != std::string::npos;
         at = text.find("#EXT-X-PROGRAM-DATE-TIME:", at + 1)) {
      out.push_back(text.substr(at, text.find('\n', at) - at));
    }
    return out;
  };
  const auto live = dates(MediaPlaylist(*v1, nullptr));
  const auto archived = dates(ArchiveMediaPlaylist(index, ts, kT0, kT0 + 12'000, true));
  REQUIRE(live.size() == 6);
  CHECK(live == archived);
  CHECK(live.front() == "#EXT-X-PROGRAM-DATE-TIME:2026-12-02T10:00:00.000Z");
}

TEST_CASE("one playlist writer: a viewer's query follows every URI of every form") {
  hls::Media m;
  m.map_uri = "init.mp4";
  m.segments.push_back({false,
                        "dvr-init-1.mp4",
                        kT0,
                        false,
                        {{45'000, "1.0.m4s", true, false}},
                        180'000,
                        "1.m4s?v=2"});
  m.open = hls::OpenSegment{kT0 + 2000, {{45'000, "2.0.m4s", true, false}}};
  m.preload_hint_uri = "2.1.m4s";
  m.rendition_reports.push_back({"../a1/index.ll.m3u8", 2, 0});
  m.uri_query = "token=abc";
  const std::string media = hls::Write(m);
  for (const char* uri :
       {"URI=\"init.mp4?token=abc\"", "URI=\"dvr-init-1.mp4?token=abc\"",
        "URI=\"1.0.m4s?token=abc\"", "\n1.m4s?v=2&token=abc\n", "URI=\"2.0.m4s?token=abc\"",
        "URI=\"2.1.m4s?token=abc\"", "URI=\"../a1/index.ll.m3u8?token=abc\""}) {
    INFO(uri);
    CHECK(media.find(uri) != std::string::npos);
  }
  auto v1 = Window("v1", true, 8, 2);
  auto a1 = Window("a1", false, 8, 2);
  const std::string master = LowLatencyMasterPlaylist({a1, v1}, true, "token=abc");
  CHECK(master.find("URI=\"a1/index.ll.m3u8?token=abc\"") != std::string::npos);
  CHECK(master.find("\nv1/index.ll.m3u8?token=abc\n") != std::string::npos);
  CHECK(MasterPlaylist({v1}, "token=abc").find("\nv1/index.m3u8?token=abc\n") != std::string::npos);
  const std::string live = MediaPlaylist(*v1, nullptr, "token=abc");
  CHECK(live.find("\n107.ts?v=1&token=abc\n") != std::string::npos);
  const std::string ll = LowLatencyMediaPlaylist(*v1, {a1, v1}, false, nullptr, "token=abc");
  CHECK(ll.find("URI=\"108.2.m4s?token=abc\"") != std::string::npos);  // the preload hint
  CHECK(hls::WithQuery("a.m4s", "") == "a.m4s");
}

}  // namespace
}  // namespace meshwork::streamer
