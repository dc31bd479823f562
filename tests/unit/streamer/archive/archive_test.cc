// D-1…D-8: the archive's layout, target parsing, index, recorder and playlists.
#include <fcntl.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "common/time/clock.h"
#include "streamer/archive/archive_index.h"
#include "streamer/archive/archive_target.h"
#include "streamer/archive/layout.h"
#include "streamer/archive/recorder.h"
#include "streamer/delivery/archive_mpd.h"
#include "streamer/delivery/archive_routes.h"
#include "streamer/delivery/open_files.h"
#include "streamer/ott/ott_gate.h"
#include "tests/unit/streamer/stream_configs.h"
#include "tests/unit/temp_dir.h"

namespace meshwork::streamer::archive {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// 2026-12-02T10:00:00Z
constexpr int64_t kT0 = 1796205600000;

// Moves a fake clock to ten minutes after kT0: the segments these tests file are from the
// recent past, as a recorder sees them.
void AfterT0(FakeClock& clock) {
  clock.Advance(std::chrono::milliseconds(kT0 + 600'000 - UnixMillis(clock.Now())));
}

ArchiveObject Segment(const std::string& stream, Proto proto, const std::string& rendition,
                      int64_t start_ms, int64_t duration_ms, size_t size = 1000) {
  ArchiveObject o;
  o.track = TrackKey{stream, proto, rendition};
  o.start_ms = start_ms;
  o.duration_ms = duration_ms;
  o.chunks = {std::make_shared<const std::string>(size, 'x')};
  o.size = size;
  return o;
}

nlohmann::json StreamWithDvr(const fs::path& root, int64_t depth_s, uint64_t max_bytes = 0) {
  nlohmann::json dvr = {{"root", root.string()}, {"depth_s", depth_s}};
  if (max_bytes) dvr["max_bytes"] = max_bytes;
  return {{"dvr", dvr}};
}

size_t CountOf(const std::string& text, std::string_view needle) {
  size_t n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1))
    ++n;
  return n;
}

size_t FilesUnder(const fs::path& dir, std::string_view suffix) {
  size_t n = 0;
  std::error_code ec;
  for (auto& e : fs::recursive_directory_iterator(dir, ec)) {
    if (e.is_regular_file() && e.path().string().ends_with(suffix)) ++n;
  }
  return n;
}

// A recorder and its index on a temporary root, with a fake clock ten minutes after kT0.
struct ArchiveRecording {
  ArchiveRecording() { AfterT0(clock); }
  TempDir dir;
  FakeClock clock;
  ArchiveIndex index;
  Recorder recorder{{}, &index, clock, nullptr};
};

TEST_CASE("D-2 segments are filed by UTC hour under their wall-clock start and duration") {
  auto dir = TrackDir("/var/dvr", "news", Proto::kTs, "v1");
  CHECK(dir == fs::path("/var/dvr/news/ts/v1"));
  CHECK(SegmentPath(dir, Proto::kTs, kT0 + 2000, 2000) ==
        fs::path("/var/dvr/news/ts/v1/2026/12/02/10/1796205602000-2000.ts"));
  CHECK(SegmentPath(TrackDir("/r", "s", Proto::kFmp4, "a1"), Proto::kFmp4, kT0, 1999).filename() ==
        "1796205600000-1999.m4s");
  CHECK(ParseSegmentName("1796205602000-2000.ts", "ts") == std::make_pair(kT0 + 2000, 2000L));
  CHECK_FALSE(ParseSegmentName(".1796205602000-2000.ts.tmp", "ts"));
  CHECK_FALSE(ParseSegmentName("1796205602000-0.ts", "ts"));
  CHECK_FALSE(ParseSegmentName("-1-2.ts", "ts"));
  CHECK_FALSE(ParseSegmentName("1-2.m4s", "ts"));
  CHECK(SafeName("v1"));
  CHECK_FALSE(SafeName(".."));
  CHECK_FALSE(SafeName("a/b"));
  CHECK_FALSE(SafeName(""));
}

TEST_CASE("D-1 a stream named with '/' is recorded in a directory no other stream's lies in") {
  CHECK(SafeStreamName("news"));
  CHECK(SafeStreamName("news/en"));
  CHECK_FALSE(SafeStreamName("news/../x"));
  CHECK_FALSE(SafeStreamName("news//en"));
  CHECK_FALSE(SafeStreamName("/news"));
  CHECK(TrackDir("/var/dvr", "news/en", Proto::kTs, "v1") == fs::path("/var/dvr/news+en/ts/v1"));
  // "news/ts" is not the MPEG-TS recording of "news".
  CHECK(TrackDir("/var/dvr", "news/ts", Proto::kTs, "v1") !=
        TrackDir("/var/dvr", "news", Proto::kTs, "ts") / "v1");

  TempDir dir;
  FakeClock clock;
  AfterT0(clock);
  ArchiveIndex index;
  {
    Recorder recorder({}, &index, clock, nullptr);
    recorder.Apply(Configs(
        {{"news/en", StreamWithDvr(dir.path(), 3600)}, {"news", StreamWithDvr(dir.path(), 3600)}}));
    REQUIRE(recorder.Config("news/en"));
    REQUIRE(recorder.Enqueue(Segment("news/en", Proto::kTs, "v1", kT0, 2000)));
    REQUIRE(recorder.Enqueue(Segment("news", Proto::kTs, "v1", kT0, 2000)));
    REQUIRE(recorder.Drain(5s));
  }
  ArchiveIndex rebuilt;
  CHECK(Scan(dir.path(), "news/en", rebuilt) == 1);
  CHECK(Scan(dir.path(), "news", rebuilt) == 1);
  CHECK(rebuilt.Range({"news/en", Proto::kTs, "v1"}, kT0, kT0 + 60000, 100).size() == 1);
}

TEST_CASE(
    "D-3 D-8 archive URLs parse into periods, segments and inits, and bad ones name the fault") {
  auto t = ParseArchiveTarget("/news/v1/index-1796205600-60.m3u8");
  CHECK(t.kind == ArchiveTarget::kPlaylist);
  CHECK(t.prefix == "news/v1");
  CHECK(t.proto == Proto::kTs);
  CHECK(t.from_ms == kT0);
  CHECK(t.duration_ms == 60000);

  t = ParseArchiveTarget("/news/archive-1796205600-60.m3u8");
  CHECK(t.kind == ArchiveTarget::kPlaylist);
  CHECK(t.prefix == "news");

  t = ParseArchiveTarget("/news/index-1796205600-now.ll.m3u8");
  CHECK(t.kind == ArchiveTarget::kPlaylist);
  CHECK(t.proto == Proto::kFmp4);
  CHECK_FALSE(t.duration_ms.has_value());

  t = ParseArchiveTarget("/news/archive-1796205600-60.mpd");
  CHECK(t.kind == ArchiveTarget::kPlaylist);
  CHECK(t.dash);
  CHECK(t.proto == Proto::kFmp4);
  CHECK(t.duration_ms == 60000);
  t = ParseArchiveTarget("/news/archive-1796205600-now.mpd");
  CHECK(t.kind == ArchiveTarget::kBad);
  CHECK(t.error.find("static") != std::string::npos);

  t = ParseArchiveTarget("/news/timeshift_abs-1796205600.m3u8");
  CHECK(t.kind == ArchiveTarget::kPlaylist);
  CHECK(t.proto == Proto::kTs);
  CHECK(t.from_ms == kT0);
  CHECK_FALSE(t.duration_ms.has_value());
  CHECK(ParseArchiveTarget("/news/timeshift_abs-x.m3u8").kind == ArchiveTarget::kBad);

  t = ParseArchiveTarget("/news/v1/dvr-1796205600000-2000.m4s");
  CHECK(t.kind == ArchiveTarget::kSegment);
  CHECK(t.proto == Proto::kFmp4);
  CHECK(t.start_ms == kT0);
  CHECK(t.segment_duration_ms == 2000);

  t = ParseArchiveTarget("/news/v1/dvr-init-1796205600000.mp4");
  CHECK(t.kind == ArchiveTarget::kInit);

  CHECK(ParseArchiveTarget("/news/v1/index.m3u8").kind == ArchiveTarget::kNotArchive);
  CHECK(ParseArchiveTarget("/news/v1/12.ts").kind == ArchiveTarget::kNotArchive);
  // A traversal attempt only ever ends in a file name the archive does not know.
  CHECK(ParseArchiveTarget("/news/v1/dvr-../../etc-2.ts").kind == ArchiveTarget::kNotArchive);
  for (const char* bad :
       {"/news/index-abc-60.m3u8", "/news/index--1-60.m3u8", "/news/index-100-0.m3u8",
        "/news/index-100-x.m3u8", "/news/index-100-60.mpd2",
        "/news/index-99999999999999999-60.m3u8", "/news/v1/dvr-1-2.mp4", "/news/v1/dvr-..-2.ts",
        "/news/v1/dvr-init-x.mp4", "/news/archive-100-60.ll.m3u8",
        // D-8: no stream or rendition name before the file name.
        "/news/../index-100-60.m3u8", "/../index-100-60.m3u8", "/news/..%2F/dvr-1-2.ts",
        "/news//v1/dvr-1-2.ts", "/.hidden/index-100-60.m3u8"}) {
    INFO(bad);
    auto parsed = ParseArchiveTarget(bad);
    CHECK(parsed.kind == ArchiveTarget::kBad);
    CHECK_FALSE(parsed.error.empty());
  }
}

TEST_CASE("D-4 the index answers ranges that overlap a period, the init in force and the extent") {
  ArchiveIndex index;
  TrackKey v1{"news", Proto::kFmp4, "v1"};
  for (int i = 0; i < 5; ++i) index.Add(v1, {kT0 + i * 2000, 2000, 100});
  index.Add(v1, {kT0 + 20000, 2000, 100});  // after a gap
  index.AddInit(v1, kT0);
  index.AddInit(v1, kT0 + 20000);
  auto r = index.Range(v1, kT0 + 3000, kT0 + 7000, 100);
  REQUIRE(r.size() == 3);  // 2000–4000 runs into the period
  CHECK(r.front().start_ms == kT0 + 2000);
  CHECK(r.back().start_ms == kT0 + 6000);
  CHECK(index.InitFor(v1, kT0 + 4000) == kT0);
  CHECK(index.InitFor(v1, kT0 + 20000) == kT0 + 20000);
  CHECK(index.Extent("news", Proto::kFmp4) == std::make_pair(kT0, kT0 + 22000));
  CHECK_FALSE(index.Extent("news", Proto::kTs));
  CHECK(index.Renditions("news", Proto::kFmp4) == std::vector<std::string>{"v1"});

  auto trimmed = index.TrimToDepth(v1, 10000);
  CHECK(trimmed.segments.size() == 5);  // the span is now 20 000–22 000
  CHECK(trimmed.inits == std::vector<int64_t>{kT0});
  CHECK(index.SegmentCount() == 1);
}

TEST_CASE_METHOD(
    ArchiveRecording,
    "D-3 S-19 an edge records a stream it relays only when the dvr member says edges") {
  auto on_edges = StreamWithDvr(dir.path(), 3600);
  on_edges["dvr"]["edges"] = true;
  recorder.Apply(Configs({{"news", StreamWithDvr(dir.path(), 3600)}, {"sport", on_edges}}),
                 {"news", "sport"});
  CHECK_FALSE(recorder.Config("news"));  // relayed: archive requests go upstream
  CHECK(recorder.Config("sport"));
  CHECK_FALSE(recorder.Enqueue(Segment("news", Proto::kTs, "v1", kT0, 2000)));
  recorder.Apply(Configs({{"news", StreamWithDvr(dir.path(), 3600)}}));  // placed here now
  CHECK(recorder.Config("news"));
}

TEST_CASE("D-3 archived files stay open for the next viewer, until retention deletes them") {
  TempDir dir;
  auto open_file = [&](const std::string& name) {
    std::ofstream(dir.path() / name) << "segment " << name;
    int fd = ::open((dir.path() / name).c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    return std::make_shared<http::OpenFile>(fd, fs::file_size(dir.path() / name));
  };
  streamer::OpenFiles files(2);
  const std::string a = (dir.path() / "a.ts").string(), b = (dir.path() / "b.ts").string(),
                    c = (dir.path() / "c.ts").string();
  files.Put(a, open_file("a.ts"));
  files.Put(b, open_file("b.ts"));
  REQUIRE(files.Find(a));  // a is now the most recent
  files.Put(c, open_file("c.ts"));
  CHECK(files.size() == 2);
  CHECK_FALSE(files.Find(b));  // the least recently used went
  CHECK(files.Find(c));
  // Retention deletes a: the next viewer does not get the unlinked file.
  fs::remove(dir.path() / "a.ts");
  CHECK_FALSE(files.Find(a));
  CHECK(files.size() == 1);
}

TEST_CASE("D-2 the recorder writes whole files only, and a rebuilt index finds them") {
  TempDir dir;
  FakeClock clock;
  AfterT0(clock);
  ArchiveIndex index;
  {
    Recorder recorder({}, &index, clock, nullptr);
    recorder.Apply(Configs({{"news", StreamWithDvr(dir.path(), 3600)}}));
    ArchiveObject init = Segment("news", Proto::kFmp4, "v1", 0, 0, 50);
    init.init = true;
    REQUIRE(recorder.Enqueue(init));
    for (int i = 0; i < 3; ++i) {
      REQUIRE(recorder.Enqueue(Segment("news", Proto::kTs, "v1", kT0 + i * 2000, 2000)));
      REQUIRE(recorder.Enqueue(Segment("news", Proto::kFmp4, "v1", kT0 + i * 2000, 2000)));
    }
    // A stream without dvr is not recorded.
    CHECK_FALSE(recorder.Enqueue(Segment("other", Proto::kTs, "v1", kT0, 2000)));
    REQUIRE(recorder.Drain(5s));
    CHECK(recorder.Status()["written"] == 6);
  }
  CHECK(FilesUnder(dir.path(), ".ts") == 3);
  CHECK(FilesUnder(dir.path(), ".m4s") == 3);
  CHECK(FilesUnder(dir.path(), ".tmp") == 0);
  CHECK(fs::exists(dir.path() / "news/ts/v1/2026/12/02/10/1796205600000-2000.ts"));
  // The init takes effect with the segment that followed it.
  CHECK(fs::exists(dir.path() / "news/fmp4/v1/init/1796205600000.mp4"));

  // a crash mid-write leaves a temporary file; the rebuild deletes it and lists the rest.
  fs::path leftover = dir.path() / "news/ts/v1/2026/12/02/10/.1796205606000-2000.ts.tmp";
  std::ofstream(leftover) << "partial";
  ArchiveIndex rebuilt;
  CHECK(Scan(dir.path(), "news", rebuilt) == 6);
  CHECK_FALSE(fs::exists(leftover));
  CHECK(rebuilt.Range({"news", Proto::kTs, "v1"}, kT0, kT0 + 60000, 100).size() == 3);
  CHECK(rebuilt.InitFor({"news", Proto::kFmp4, "v1"}, kT0 + 4000) == kT0);
  CHECK(rebuilt.StreamBytes("news") == 6000);
}

TEST_CASE_METHOD(
    ArchiveRecording,
    "D-2 retention deletes the oldest whole files past the depth and past the disk budget") {
  SECTION("depth") {
    recorder.Apply(Configs({{"news", StreamWithDvr(dir.path(), 60)}}));
    for (int i = 0; i < 40; ++i) {  // 80 s of 2 s segments into a 60 s archive
      REQUIRE(recorder.Enqueue(Segment("news", Proto::kTs, "v1", kT0 + i * 2000, 2000)));
    }
    REQUIRE(recorder.Drain(5s));
    CHECK(FilesUnder(dir.path(), ".ts") == 30);
    auto extent = index.Extent("news", Proto::kTs);
    REQUIRE(extent);
    CHECK(extent->second - extent->first == 60000);
    CHECK_FALSE(fs::exists(
        SegmentPath(TrackDir(dir.path(), "news", Proto::kTs, "v1"), Proto::kTs, kT0, 2000)));
  }
  SECTION("disk budget") {
    recorder.Apply(Configs({{"news", StreamWithDvr(dir.path(), 3600, 1 << 20)}}));
    for (int i = 0; i < 10; ++i) {  // 10 × 256 KiB into a 1 MiB budget
      REQUIRE(recorder.Enqueue(Segment("news", Proto::kTs, "v1", kT0 + i * 2000, 2000, 256 << 10)));
    }
    REQUIRE(recorder.Drain(5s));
    CHECK(FilesUnder(dir.path(), ".ts") == 4);
    CHECK(index.StreamBytes("news") <= (1u << 20));
    CHECK(index.Extent("news", Proto::kTs)->first == kT0 + 6 * 2000);  // the newest kept
  }
}

TEST_CASE_METHOD(ArchiveRecording,
                 "A-2 an archive request is checked on the stream whose archive would answer it") {
  recorder.Apply(Configs({{"tv", StreamWithDvr(dir.path(), 3600)}}));
  ArchiveContext context;
  context.index = &index;
  context.recorder = &recorder;
  // "tv/v1" is no recorded stream: the rendition v1 of "tv" answers, so "tv" is checked.
  CHECK(ArchiveStreamOf(context, ParseArchiveTarget("/tv/v1/index-1796205600-60.m3u8")) == "tv");
  CHECK(ArchiveStreamOf(context, ParseArchiveTarget("/tv/index-1796205600-60.m3u8")) == "tv");
  CHECK(ArchiveStreamOf(context, ParseArchiveTarget("/tv/v1/dvr-1796205600000-2000.ts")) == "tv");
  // Not recorded here: nothing is served from here (central is asked), so nothing to check.
  CHECK_FALSE(ArchiveStreamOf(context, ParseArchiveTarget("/radio/v1/index-1796205600-60.m3u8")));
}

TEST_CASE_METHOD(ArchiveRecording,
                 "D-2 an init that failed to be written is written with the next segment") {
  recorder.Apply(Configs({{"news", StreamWithDvr(dir.path(), 3600)}}));
  const TrackKey v1{"news", Proto::kFmp4, "v1"};
  // A file where the init directory goes: the init's write fails, the segment's does not.
  fs::create_directories(TrackDir(dir.path(), "news", Proto::kFmp4, "v1"));
  std::ofstream(TrackDir(dir.path(), "news", Proto::kFmp4, "v1") / "init") << "in the way";
  ArchiveObject init = Segment("news", Proto::kFmp4, "v1", 0, 0, 50);
  init.init = true;
  REQUIRE(recorder.Enqueue(init));
  REQUIRE(recorder.Enqueue(Segment("news", Proto::kFmp4, "v1", kT0, 2000)));
  REQUIRE(recorder.Drain(5s));
  CHECK(recorder.Status()["write_failures"] == 1);
  CHECK_FALSE(index.InitFor(v1, kT0));
  fs::remove(TrackDir(dir.path(), "news", Proto::kFmp4, "v1") / "init");
  // The same init bytes again (an encoder repeats its init): still not on disk, so written.
  REQUIRE(recorder.Enqueue(init));
  REQUIRE(recorder.Enqueue(Segment("news", Proto::kFmp4, "v1", kT0 + 2000, 2000)));
  REQUIRE(recorder.Drain(5s));
  CHECK(index.InitFor(v1, kT0 + 2000) == kT0 + 2000);
}

TEST_CASE("D-3 an archive master offers only the renditions recorded in its period") {
  ArchiveIndex index;
  index.Add({"news", Proto::kTs, "v1"}, {kT0 + 100'000, 2000, 100});
  index.Add({"news", Proto::kTs, "v2"}, {kT0, 2000, 100});  // an older ladder's rendition
  const int64_t from_s = (kT0 + 100'000) / 1000;
  auto target = ParseArchiveTarget("/news/index-" + std::to_string(from_s) + "-10.m3u8");
  REQUIRE(target.kind == ArchiveTarget::kPlaylist);
  std::string master =
      ArchiveMasterPlaylist(index, "/nonexistent", {}, "news", target, kT0 + 110'000, "");
  CHECK(master.find("v1/") != std::string::npos);
  CHECK(master.find("v2/") == std::string::npos);
  // A period with nothing in it: no master at all (the route answers 404).
  auto empty = ParseArchiveTarget("/news/index-" + std::to_string(kT0 / 1000 + 50) + "-10.m3u8");
  CHECK(ArchiveMasterPlaylist(index, "/nonexistent", {}, "news", empty, kT0 + 60'000, "").empty());
}

TEST_CASE_METHOD(ArchiveRecording,
                 "D-2 a rendition no longer recorded ages out with the stream's others") {
  recorder.Apply(Configs({{"news", StreamWithDvr(dir.path(), 60)}}));
  for (int i = 0; i < 15; ++i) {  // v1 and v2 for 30 s, then v1 alone for 200 s
    REQUIRE(recorder.Enqueue(Segment("news", Proto::kTs, "v2", kT0 + i * 2000, 2000)));
  }
  for (int i = 0; i < 115; ++i) {
    REQUIRE(recorder.Enqueue(Segment("news", Proto::kTs, "v1", kT0 + i * 2000, 2000)));
  }
  REQUIRE(recorder.Drain(5s));
  CHECK(FilesUnder(TrackDir(dir.path(), "news", Proto::kTs, "v2"), ".ts") == 0);
  auto extent = index.Extent("news", Proto::kTs);
  REQUIRE(extent);
  CHECK(extent->first >= extent->second - 60'000);
}

TEST_CASE("D-2 a segment dated in the future neither files nor pushes the archive out") {
  TempDir dir;
  FakeClock clock;
  clock.Advance(std::chrono::milliseconds(kT0 + 30'000 - UnixMillis(clock.Now())));
  ArchiveIndex index;
  Recorder recorder({}, &index, clock, nullptr);
  recorder.Apply(Configs({{"news", StreamWithDvr(dir.path(), 60)}}));
  for (int i = 0; i < 10; ++i) {
    REQUIRE(recorder.Enqueue(Segment("news", Proto::kTs, "v1", kT0 + i * 2000, 2000)));
  }
  CHECK_FALSE(recorder.Enqueue(Segment("news", Proto::kTs, "v1", kT0 + 86'400'000, 2000)));
  for (int i = 0; i < 5; ++i) {
    REQUIRE(recorder.Enqueue(Segment("news", Proto::kTs, "v1", kT0 + 20'000 + i * 2000, 2000)));
  }
  REQUIRE(recorder.Drain(5s));
  CHECK(FilesUnder(dir.path(), ".ts") == 15);
  CHECK(recorder.Status()["dropped"] == 1);
  // One that reached the index anyway (an older node's scan) does not trim by itself.
  TrackKey v1{"news", Proto::kTs, "v1"};
  index.Add(v1, {kT0 + 86'400'000, 2000, 100});
  CHECK(index.TrimToDepth(v1, 60'000, kT0 + 30'000).segments.empty());
}

TEST_CASE("D-1 a full recorder queue drops and counts, a failing disk is counted, nothing blocks") {
  TempDir dir;
  FakeClock clock;
  AfterT0(clock);
  ArchiveIndex index;
  Recorder::Options options;
  options.max_queue_bytes = 4096;
  Recorder recorder(options, &index, clock, nullptr);
  // The root is a file: every write fails (as on a broken or full disk).
  fs::path not_a_dir = dir.path() / "file";
  std::ofstream(not_a_dir) << "x";
  recorder.Apply(Configs({{"news", StreamWithDvr(not_a_dir, 3600)}}));
  CHECK_FALSE(recorder.Enqueue(Segment("news", Proto::kTs, "v1", kT0, 2000, 8192)));  // > queue
  REQUIRE(recorder.Enqueue(Segment("news", Proto::kTs, "v1", kT0, 2000, 100)));
  REQUIRE(recorder.Drain(5s));
  auto status = recorder.Status();
  CHECK(status["dropped"] == 1);
  CHECK(status["write_failures"] == 1);
  CHECK(status["written"] == 0);
  CHECK(index.SegmentCount() == 0);
}

TEST_CASE(
    "D-3 D-4 an archive playlist has program date-times, a discontinuity at a gap and ENDLIST") {
  ArchiveIndex index;
  TrackKey ts{"news", Proto::kTs, "v1"};
  for (int i = 0; i < 3; ++i) index.Add(ts, {kT0 + i * 2000, 2000, 100});
  index.Add(ts, {kT0 + 30000, 2000, 100});
  std::string vod = ArchiveMediaPlaylist(index, ts, kT0, kT0 + 60000, true);
  CHECK(vod.find("#EXT-X-PLAYLIST-TYPE:VOD") != std::string::npos);
  CHECK(vod.find("#EXT-X-ENDLIST") != std::string::npos);
  CHECK(vod.find("#EXT-X-PROGRAM-DATE-TIME:2026-12-02T10:00:00.000Z\n#EXTINF:2.000,\n"
                 "dvr-1796205600000-2000.ts") != std::string::npos);
  CHECK(vod.find("#EXT-X-DISCONTINUITY\n#EXT-X-PROGRAM-DATE-TIME:2026-12-02T10:00:30.000Z") !=
        std::string::npos);
  std::string event = ArchiveMediaPlaylist(index, ts, kT0, kT0 + 60000, false);
  CHECK(event.find("#EXT-X-PLAYLIST-TYPE:EVENT") != std::string::npos);
  CHECK(event.find("#EXT-X-ENDLIST") == std::string::npos);
  CHECK(ArchiveMediaPlaylist(index, ts, kT0 + 100000, kT0 + 160000, true).empty());

  TrackKey cmaf{"news", Proto::kFmp4, "v1"};
  index.Add(cmaf, {kT0, 2000, 100});
  index.Add(cmaf, {kT0 + 2000, 2000, 100});
  index.AddInit(cmaf, kT0);
  index.AddInit(cmaf, kT0 + 2000);  // a new init: a new timeline
  std::string ll = ArchiveMediaPlaylist(index, cmaf, kT0, kT0 + 4000, true);
  CHECK(ll.find("#EXT-X-MAP:URI=\"dvr-init-1796205600000.mp4\"") != std::string::npos);
  CHECK(ll.find("#EXT-X-DISCONTINUITY\n#EXT-X-MAP:URI=\"dvr-init-1796205602000.mp4\"") !=
        std::string::npos);
}

TEST_CASE(
    "D-3 D-4 an archive MPD is static, splits periods at a gap and times fragments by their own "
    "decode time") {
  ArchiveIndex index;
  TrackKey v1{"news", Proto::kFmp4, "v1"}, a1{"news", Proto::kFmp4, "a1"};
  for (int64_t start : {kT0, kT0 + 2000, kT0 + 4000, kT0 + 30000, kT0 + 32000}) {
    index.Add(v1, {start, 2000, 250'000});
    index.Add(a1, {start - 20, 2000, 24'000});  // audio cut 20 ms before the video
  }
  index.AddInit(v1, kT0);
  index.AddInit(a1, kT0 - 20);
  auto periods = streamer::PlanArchiveMpd(index, "news", "v1", {"a1"}, kT0, kT0 + 60000);
  REQUIRE(periods.size() == 2);  // the 24 s hole is a new period
  CHECK(periods[0].start_ms == kT0);
  CHECK(periods[0].end_ms == kT0 + 6000);
  CHECK(periods[1].start_ms == kT0 + 30000);
  REQUIRE(periods[0].tracks.size() == 2);
  CHECK(periods[0].tracks[0].rendition == "v1");
  CHECK(periods[0].tracks[1].segments.size() == 3);
  CHECK(periods[0].tracks[1].init_ms == kT0 - 20);

  // What ProbeArchiveMpd reads from the files: timescales and first decode times.
  media::ProbedTrack video, audio;
  video.timescale = 90000;
  video.info.codec = media::Codec::kH264;
  video.info.codec_string = "avc1.64001f";
  video.info.width = 320;
  video.info.height = 240;
  audio.timescale = 48000;
  audio.info.codec = media::Codec::kAac;
  audio.info.codec_string = "mp4a.40.2";
  audio.info.sample_rate = 48000;
  audio.info.channels = 2;
  for (auto& p : periods) {
    p.tracks[0].probe = video;
    p.tracks[0].first_decode_time = (p.start_ms - kT0) * 90 + 900'000;
  }
  periods[0].tracks[1].probe = audio;  // the second period's audio could not be read
  periods[0].tracks[1].first_decode_time = 480'000 - 960;

  std::string mpd = streamer::ArchiveMpd(periods);
  INFO(mpd);
  CHECK(mpd.find("type=\"static\"") != std::string::npos);
  // 6 s + 4 s: the hole is skipped, as at an HLS discontinuity.
  CHECK(mpd.find("mediaPresentationDuration=\"PT10S\"") != std::string::npos);
  CHECK(mpd.find("<Period id=\"p1796205600000\" start=\"PT0S\" duration=\"PT6S\">") !=
        std::string::npos);
  CHECK(mpd.find("<Period id=\"p1796205630000\" start=\"PT6S\" duration=\"PT4S\">") !=
        std::string::npos);
  CHECK(mpd.find("<Representation id=\"v1\" bandwidth=\"1000000\" codecs=\"avc1.64001f\" "
                 "width=\"320\" height=\"240\">") != std::string::npos);
  CHECK(mpd.find("<SegmentList timescale=\"90000\" presentationTimeOffset=\"900000\">") !=
        std::string::npos);
  CHECK(mpd.find("<Initialization sourceURL=\"v1/dvr-init-1796205600000.mp4\"/>") !=
        std::string::npos);
  CHECK(mpd.find("<S t=\"900000\" d=\"180000\"/>\n              <S t=\"1080000\" d=\"180000\"/>") !=
        std::string::npos);
  CHECK(mpd.find("<SegmentURL media=\"v1/dvr-1796205602000-2000.m4s\"/>") != std::string::npos);
  // Audio 20 ms ahead of the period start: its offset puts the period start at time 0.
  CHECK(mpd.find("<SegmentList timescale=\"48000\" presentationTimeOffset=\"480000\">") !=
        std::string::npos);

  SECTION("a track whose first sample comes after the period start is listed from it") {
    // "a1" dated by its samples: 5 ms after v1's cut. Its first segment is listed from the
    // period's start (dash.js 5 found no segment for time 0 and at times never asked again).
    periods[0].tracks[1].segments.front().start_ms = kT0 + 5;
    periods[0].tracks[1].segments.front().duration_ms = 1995;
    periods[0].tracks[1].first_decode_time = 480'000 + 240;
    std::string later = streamer::ArchiveMpd(periods);
    INFO(later);
    CHECK(later.find("<SegmentList timescale=\"48000\" presentationTimeOffset=\"480000\">") !=
          std::string::npos);
    // From the period start to where the next one begins (its audio cut 20 ms early).
    CHECK(later.find("<S t=\"480000\" d=\"95040\"/>\n              <S t=\"575040\"") !=
          std::string::npos);
  }
  CHECK(mpd.find("audioSamplingRate=\"48000\"") != std::string::npos);
  // The unreadable track is left out of its period only.
  CHECK(CountOf(mpd, "<AdaptationSet") == 3);
  CHECK(streamer::ArchiveMpd({}).empty());
}

TEST_CASE(
    "D-5 the member covering most of the period holds it, ties go to this node, then to the least "
    "loaded") {
  using streamer::ArchiveCandidate;
  using streamer::ChooseArchiveHolder;
  const int64_t from = kT0, to = kT0 + 60000;
  std::vector<ArchiveCandidate> c = {
      {true, 5, std::make_pair(kT0 + 40000, kT0 + 90000)},    // this node: the last 20 s
      {false, 9, std::make_pair(kT0 - 600000, kT0 + 50000)},  // a deeper member: 50 s
      {false, 1, std::make_pair(kT0 + 30000, kT0 + 60000)},   // 30 s
  };
  CHECK(ChooseArchiveHolder(c, from, to) == 1);
  c[0].range = std::make_pair(kT0 - 1000, kT0 + 50000);  // now this node covers 50 s too
  CHECK(ChooseArchiveHolder(c, from, to) == 0);
  c[0].range.reset();
  c[2].range = std::make_pair(kT0 + 10000, kT0 + 60000);  // 50 s, less loaded than member 1
  CHECK(ChooseArchiveHolder(c, from, to) == 2);
  // Outside every range: nobody.
  CHECK_FALSE(ChooseArchiveHolder(c, kT0 + 100000, kT0 + 160000));
  CHECK_FALSE(ChooseArchiveHolder({}, from, to));
}

}  // namespace
}  // namespace meshwork::streamer::archive
