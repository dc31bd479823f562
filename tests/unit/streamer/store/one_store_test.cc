// One store, one set of read rules (spec 03, first paragraph): the same behaviours checked
// on a locally packaged stream (PublishLocal, pipeline "local", with timing) and on a stream
// a packager publishes (Publish, pipeline "a", no timing) — holds, 404 with TTL, 410,
// candidates and masks, the playlists, LL-HLS parts and preload hints, blocking-reload
// waiters and the MPD, all from the same OriginStore.
#include <catch2/catch.hpp>
#include <optional>
#include <string>

#include "boost/asio/io_context.hpp"
#include "streamer/delivery/dash.h"
#include "streamer/delivery/ll_hls.h"
#include "streamer/delivery/playlists.h"
#include "streamer/delivery/streamed_segment.h"
#include "streamer/store/origin_store.h"
#include "tests/unit/streamer/media/test_files.h"
#include "tests/unit/streamer/stream_configs.h"

namespace meshwork::streamer {
namespace {

using namespace std::chrono_literals;

// A real init.mp4 (H.264, 320x240) as ffmpeg writes it for CMAF.
const std::string& InitSegment() {
  static std::string init = [] {
    static TempDir dir("meshwork-one-store");
    std::string out = (dir.path() / "v.mp4").string();
    media::Capture(
        "ffmpeg -hide_banner -loglevel error -y -f lavfi -i testsrc2=size=320x240:rate=25 "
        "-c:v libx264 -g 25 -pix_fmt yuv420p -preset ultrafast -t 1 -f mp4 -movflags "
        "empty_moov+default_base_moof+frag_keyframe " +
        out);
    std::string file = media::ReadFile(out);
    return file.substr(0, file.find("moof") - 4);
  }();
  return init;
}

media::TrackInfo Video() {
  media::TrackInfo t;
  t.codec = media::Codec::kH264;
  t.codec_string = "avc1.640015";
  t.width = 320;
  t.height = 240;
  return t;
}

// Publishes as one kind of source: what differs is only how objects get in.
class Source {
 public:
  Source(bool local, OriginStore& store, FakeClock& clock)
      : local_(local), store_(store), clock_(clock), wall0_(UnixMillis(clock.Now()) - 2000) {
    info_.name = "v1";
    info_.tracks = {Video()};
    info_.cmaf_tracks = {Video()};
    info_.target_duration_ms = 2000;
    info_.part_target_ms = 500;
    info_.live_window = 3;
    info_.init = std::make_shared<const std::string>(InitSegment());
  }
  const char* pipeline() const { return local_ ? "local" : "a"; }

  void Put(ObjectKey key, std::string bytes) {
    auto body = std::make_shared<const std::string>(std::move(bytes));
    if (local_) {
      std::shared_ptr<MediaTiming> timing;
      if (key.kind != ObjectKey::kInit) {
        timing = std::make_shared<MediaTiming>();
        int64_t offset = key.kind == ObjectKey::kPart ? key.part * 45'000 : 0;
        timing->start = key.msn * 180'000 + offset;
        timing->duration = key.kind == ObjectKey::kPart ? 45'000 : 180'000;
        timing->program_date_time_ms = wall0_ + timing->start / 90;
        timing->timeline_origin = 0;
        timing->independent = key.part == 0;
      }
      REQUIRE(store_.PublishLocal("s", info_, key, {body}, timing).ok());
      return;
    }
    OriginStore::PublishRequest r;
    r.stream = "s";
    r.rendition = "v1";
    r.key = key;
    r.pipeline = "a";
    r.size = body->size();
    r.chunks = {body};
    REQUIRE(store_.Publish(std::move(r)).ok());
  }

  // Segment `msn`: its four parts, then the segment in both forms; 2 s pass.
  void Segment(int64_t msn) {
    for (int p = 0; p < 4; ++p) Put({ObjectKey::kPart, msn, p}, "part");
    Put({ObjectKey::kM4s, msn, -1}, "m4s-" + std::to_string(msn));
    Put({ObjectKey::kTs, msn, -1}, "ts-" + std::to_string(msn));
    clock_.Advance(2000ms);
  }

 private:
  bool local_;
  OriginStore& store_;
  FakeClock& clock_;
  int64_t wall0_;  // the wall clock at T = 0 of the local timeline
  RenditionInfo info_;
};

ReadDecision Decide(OriginStore& store, ObjectKey key) {
  auto view = store.View("s");
  auto it = view->renditions.find("v1");
  return store.Decide(*view, it == view->renditions.end() ? nullptr : it->second.get(), key);
}

}  // namespace

TEST_CASE("L-1 S-10 S-16 one store: the same rules for a locally packaged and a published stream") {
  for (bool local : {true, false}) {
    DYNAMIC_SECTION((local ? "locally packaged" : "published by a packager")) {
      FakeClock clock;
      OriginStore::Options options;
      options.sweep_waiters = false;
      OriginStore store(options, clock);
      nlohmann::json config = {{"segment_ms", 2000},
                               {"part_ms", 500},
                               {"live_window", 3},
                               {"pipelines", {"local", "a"}}};
      store.Apply(Configs({{"s", config}}));
      Source source(local, store, clock);

      // L-7: before anything is published, the first objects are held.
      CHECK(Decide(store, {ObjectKey::kTs, 2, -1}).verdict == ReadDecision::kHold);

      source.Put({ObjectKey::kInit, -1, -1}, InitSegment());
      // The segment that ended at the first publish is msn 2 (so msn 1 was never made).
      clock.Advance(4000ms);
      for (int64_t msn = 2; msn <= 5; ++msn) source.Segment(msn);
      // msn 6 in progress: two parts so far.
      source.Put({ObjectKey::kPart, 6, 0}, "part");
      source.Put({ObjectKey::kPart, 6, 1}, "part");

      // L-7, S-13: the next part and the next segment are held; L-8: far ahead, 404 + TTL;
      // L-9: before the stream's start, 410; L-11: a published object is served.
      CHECK(Decide(store, {ObjectKey::kPart, 6, 2}).verdict == ReadDecision::kHold);
      CHECK(Decide(store, {ObjectKey::kTs, 6, -1}).verdict == ReadDecision::kHold);
      auto future = Decide(store, {ObjectKey::kTs, 20, -1});
      CHECK(future.verdict == ReadDecision::kNotYet);
      CHECK(future.ttl_ms > 20'000);
      CHECK(Decide(store, {ObjectKey::kTs, 1, -1}).verdict == ReadDecision::kGone);
      auto served = Decide(store, {ObjectKey::kM4s, 4, -1});
      REQUIRE(served.verdict == ReadDecision::kServe);
      CHECK(served.candidate->pipeline == source.pipeline());
      CHECK(*served.candidate->chunks.front() == "m4s-4");

      // The playlists from the rendition's window: HLS-TS with program date-times, LL-HLS
      // with parts and the preload hint, an MPD.
      auto window = store.Window("s", "v1");
      REQUIRE(window);
      std::string hls = MediaPlaylist(*window, ListedVersions(store.View("s"), "v1", true));
      INFO(hls);
      CHECK(hls.find("#EXT-X-MEDIA-SEQUENCE:3\n") != std::string::npos);
      CHECK(hls.find("5.ts?v=1\n") != std::string::npos);
      CHECK(hls.find("#EXT-X-PROGRAM-DATE-TIME:") != std::string::npos);
      std::string ll = LowLatencyMediaPlaylist(*window, store.Windows("s"), false);
      INFO(ll);
      CHECK(ll.find("URI=\"6.1.m4s\"") != std::string::npos);
      CHECK(ll.find("#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"6.2.m4s\"") != std::string::npos);
      CHECK(ll.find("#EXT-X-PART-INF:PART-TARGET=0.500") != std::string::npos);
      std::string mpd = DashManifest(store.Windows("s"), DashOptions{});
      INFO(mpd);
      CHECK(mpd.find("contentType=\"video\"") != std::string::npos);
      CHECK(mpd.find("codecs=\"avc1.") != std::string::npos);
      // Program date-time is the same wall clock for both sources.
      CHECK(hls.find("#EXT-X-PROGRAM-DATE-TIME:" +
                     FormatProgramDateTime(window->Find(5)->program_date_time_ms)) !=
            std::string::npos);

      // L-13: a mask on the pipeline's msn 4 leaves a gap; lifting it restores the segment.
      config["masks"] = {{{"pipeline", source.pipeline()}, {"from_msn", 4}, {"to_msn", 4}}};
      store.Apply(Configs({{"s", config}}));
      hls = MediaPlaylist(*store.Window("s", "v1"), ListedVersions(store.View("s"), "v1", true));
      CHECK(hls.find("#EXT-X-GAP\n#EXTINF:2.000,\n4.ts") != std::string::npos);
      CHECK(Decide(store, {ObjectKey::kTs, 4, -1}).verdict == ReadDecision::kGone);
      config.erase("masks");
      store.Apply(Configs({{"s", config}}));
      CHECK(Decide(store, {ObjectKey::kTs, 4, -1}).verdict == ReadDecision::kServe);

      // S-12: a blocking reload for the next part is released by its publish.
      boost::asio::io_context io;
      std::optional<Waiters::Outcome> outcome;
      REQUIRE(store
                  .WaitPosition("s", "v1", Position{6, 2}, io.get_executor(),
                                clock.Monotonic() + 6s, [&](Waiters::Outcome o) { outcome = o; })
                  .ok());
      io.poll();
      io.restart();
      CHECK_FALSE(outcome);
      source.Put({ObjectKey::kPart, 6, 2}, "part");
      io.poll();
      CHECK(outcome == Waiters::Outcome::kPublished);
    }
  }
}

TEST_CASE("S-16 a DASH segment streamed as it is made is aborted, not finished, when cut short") {
  FakeClock clock;
  // Before the store: its waiters still held at the end are posted here when it goes.
  boost::asio::io_context io;
  OriginStore::Options options;
  options.sweep_waiters = false;
  OriginStore store(options, clock);
  nlohmann::json config = {
      {"segment_ms", 2000}, {"part_ms", 500}, {"live_window", 3}, {"pipelines", {"local"}}};
  store.Apply(Configs({{"s", config}}));
  Source source(true, store, clock);
  source.Put({ObjectKey::kInit, -1, -1}, InitSegment());
  clock.Advance(4000ms);
  source.Segment(2);
  source.Put({ObjectKey::kPart, 3, 0}, "p0");
  source.Put({ObjectKey::kPart, 3, 1}, "p1");

  struct Writer : http::ChunkedWriter {
    std::string body;
    bool finished = false, aborted = false;
    void Write(std::shared_ptr<const std::string> data) override { body += *data; }
    void Finish() override { finished = true; }
    void Abort() override { aborted = true; }
    bool closed() const override { return false; }
  };
  auto writer = std::make_shared<Writer>();
  StreamSegmentParts(&store, "s", "v1", 3, 6000ms, writer, io.get_executor());
  io.poll();
  CHECK(writer->body == "p0p1");  // what there is, at once
  CHECK(!writer->finished);
  CHECK(!writer->aborted);
  SECTION("a part published goes out as it comes") {
    source.Put({ObjectKey::kPart, 3, 2}, "p2");
    io.restart();
    io.poll();
    CHECK(writer->body == "p0p1p2");
    CHECK(!writer->finished);
  }
  SECTION("a part number left out (a1 where v1 had no audio): passed over, no busy loop") {
    // Runs ready handlers until none is left, at most 1000: a pump that re-arms itself at
    // once never drains the queue.
    auto drain = [&io] {
      io.restart();
      int ran = 0;
      while (ran < 1000 && io.poll_one() > 0) ++ran;
      return ran;
    };
    source.Put({ObjectKey::kPart, 3, 3}, "p3");
    CHECK(drain() < 1000);
    CHECK(writer->body == "p0p1p3");
    CHECK(!writer->aborted);
    source.Put({ObjectKey::kPart, 3, 4}, "p4");
    CHECK(drain() < 1000);
    CHECK(writer->body == "p0p1p3p4");
    CHECK(!writer->finished);
  }
  SECTION("a number the packager never made, in a segment then complete: passed over") {
    source.Put({ObjectKey::kPart, 3, 3}, "p3");  // no part 2
    source.Put({ObjectKey::kM4s, 3, -1}, "m4s-3");
    io.restart();
    io.poll();
    CHECK(writer->body == "p0p1p3");
    CHECK(writer->finished);
    CHECK(!writer->aborted);
  }
  SECTION("the stream removed: the body is broken off") {
    store.Apply(Configs({}));
    io.restart();
    io.poll();
    CHECK(writer->aborted);
    CHECK(!writer->finished);
  }
}

TEST_CASE("L-1 the local packager's objects are not held to the template's due times") {
  // A push faster than real time: the local timeline runs ahead of the wall clock, and its
  // segments are still taken; a packager's segment that far ahead is refused.
  FakeClock clock;
  OriginStore store({}, clock);
  nlohmann::json config = {{"segment_ms", 2000}};
  config["template"] = {{"availability_start", UnixMillis(clock.Now())}};
  store.Apply(Configs({{"s", config}}));
  RenditionInfo info;
  info.name = "v1";
  auto timing = std::make_shared<MediaTiming>();
  timing->start = 100 * 180'000;
  timing->duration = 180'000;
  timing->program_date_time_ms = UnixMillis(clock.Now()) + 200'000;
  timing->timeline_origin = 0;
  CHECK(store
            .PublishLocal("s", info, ObjectKey{ObjectKey::kTs, 50, -1},
                          {std::make_shared<const std::string>("ts")}, timing)
            .ok());
  OriginStore::PublishRequest r;
  r.stream = "s";
  r.rendition = "v2";
  r.key = {ObjectKey::kTs, 50, -1};
  r.pipeline = "a";
  r.size = 2;
  r.chunks = {std::make_shared<const std::string>("ts")};
  CHECK(store.Publish(std::move(r)).status().code() == absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("S-16a a packager's init.mp4 names its rendition's track for the masters") {
  FakeClock clock;
  OriginStore store({}, clock);
  store.Apply(Configs({{"s", {{"segment_ms", 2000}}}}));
  OriginStore::PublishRequest r;
  r.stream = "s";
  r.rendition = "v1";
  r.key = {ObjectKey::kInit, -1, -1};
  r.pipeline = "a";
  auto body = std::make_shared<const std::string>(InitSegment());
  r.size = body->size();
  r.chunks = {body};
  REQUIRE(store.Publish(std::move(r)).ok());
  auto window = store.Window("s", "v1");
  REQUIRE(window);
  REQUIRE(window->info.cmaf_tracks.size() == 1);
  CHECK(window->info.cmaf_video());
  CHECK(window->info.cmaf_tracks[0].codec_string.rfind("avc1.", 0) == 0);
  CHECK(window->cmaf_timescale > 0);

  // a fragment whose decode time (tfdt) is past any stream's keeps the template's start.
  auto box = [](const std::string& type, const std::string& payload) {
    uint32_t n = static_cast<uint32_t>(8 + payload.size());
    std::string out{static_cast<char>(n >> 24), static_cast<char>(n >> 16),
                    static_cast<char>(n >> 8), static_cast<char>(n)};
    return out + type + payload;
  };
  const std::string tfhd = box("tfhd", std::string("\0\0\0\0\0\0\0\1", 8));
  const std::string tfdt = box("tfdt", std::string("\1\0\0\0", 4) + std::string(8, '\xff'));
  auto fragment = std::make_shared<const std::string>(box("moof", box("traf", tfhd + tfdt)));
  OriginStore::PublishRequest m4s;
  m4s.stream = "s";
  m4s.rendition = "v1";
  m4s.key = {ObjectKey::kM4s, 0, -1};
  m4s.pipeline = "a";
  m4s.size = fragment->size();
  m4s.chunks = {fragment};
  REQUIRE(store.Publish(std::move(m4s)).ok());
  window = store.Window("s", "v1");
  REQUIRE(window);
  REQUIRE(window->segments.size() == 1);
  const int64_t start = window->segments.front()->start;
  CHECK(start >= -(int64_t{1} << 50));
  CHECK(start <= (int64_t{1} << 50));
}

}  // namespace meshwork::streamer
