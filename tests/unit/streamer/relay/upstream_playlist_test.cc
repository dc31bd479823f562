// The edge's reading of its upstream's LL-HLS playlists (S-19).
#include "streamer/relay/upstream_playlist.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "tests/test_paths.h"

namespace meshwork::streamer::relay {
namespace {

std::string Corpus(const std::string& name) {
  std::ifstream in(meshwork::testing::SourcePath("tests/fuzz/corpus/upstream_playlist/") + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_CASE("S-19 the edge reads parts, segments, timing and the hint of an upstream playlist") {
  auto p = ParseMediaPlaylist(Corpus("media.m3u8"));
  REQUIRE(p);
  CHECK(p->media_sequence == 898077660);
  CHECK(p->target_duration_s == 2);
  CHECK(p->part_target_us == 500000);
  REQUIRE(p->entries.size() == 5);
  // A segment without parts, then a segment after a discontinuity, its parts first.
  CHECK(p->entries[0].msn == 898077660);
  CHECK(p->entries[0].part == -1);
  CHECK(p->entries[0].duration_us == 2000000);
  CHECK(p->entries[0].program_date_time_ms == 1796181884451);
  CHECK(p->entries[1].part == 0);
  CHECK(p->entries[1].independent);
  CHECK(p->entries[1].program_date_time_ms == 1796181886451);
  CHECK(p->entries[2].part == 1);
  CHECK(!p->entries[2].independent);
  CHECK(p->entries[2].program_date_time_ms == 1796181886971);  // + the first part's 0.52 s
  CHECK(p->entries[3].msn == 898077661);
  CHECK(p->entries[3].part == -1);
  CHECK(p->entries[3].discontinuity);
  CHECK(p->entries[4].msn == 898077662);
  REQUIRE(p->hint);
  CHECK(*p->hint == std::make_pair(int64_t{898077662}, 1));
}

TEST_CASE("R-2 an upstream playlist's date out of any calendar is ignored, not added to") {
  // absl's RFC 3339 reader takes "infinite-future" (and years in the millions): adding a
  // segment's duration to it overflowed (UBSan in upstream_playlist_fuzz).
  for (const char* date :
       {"infinite-future", "infinite-past", "9999999-01-01T00:00:00Z", "1969-12-31T23:59:59Z"}) {
    INFO(date);
    auto p = ParseMediaPlaylist(absl::StrCat("#EXTM3U\n#EXT-X-PROGRAM-DATE-TIME:", date,
                                             "\n#EXTINF:2.000,\n10.m4s\n#EXTINF:2.000,\n11.m4s\n"));
    REQUIRE(p);
    REQUIRE(p->entries.size() == 2);
    CHECK(p->entries[0].program_date_time_ms == 0);  // none
    CHECK(p->entries[1].program_date_time_ms == 0);
  }
  auto p = ParseMediaPlaylist(
      "#EXTM3U\n#EXT-X-PROGRAM-DATE-TIME:2026-12-07T12:00:00.000Z\n#EXTINF:2.000,\n10.m4s\n"
      "#EXTINF:2.000,\n11.m4s\n#EXT-X-DISCONTINUITY\n#EXT-X-PROGRAM-DATE-TIME:infinite-future\n"
      "#EXTINF:2.000,\n12.m4s\n");
  REQUIRE(p);
  REQUIRE(p->entries.size() == 3);
  CHECK(p->entries[1].program_date_time_ms - p->entries[0].program_date_time_ms == 2000);
  CHECK(p->entries[2].program_date_time_ms == 0);  // not dated on from the older tag
}

TEST_CASE("L-13 S-19 gaps an upstream lists (a masked segment, a GAP=YES part) are marked") {
  auto p = ParseMediaPlaylist(
      "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-PART-INF:PART-TARGET=0.5\n"
      "#EXT-X-MEDIA-SEQUENCE:10\n#EXT-X-GAP\n#EXTINF:2.0,\n10.m4s\n#EXTINF:2.0,\n11.m4s\n"
      "#EXT-X-PART:DURATION=0.5,URI=\"12.0.m4s\",INDEPENDENT=YES\n"
      "#EXT-X-PART:DURATION=0.5,URI=\"12.1.m4s\",GAP=YES\n"
      "#EXT-X-PART:DURATION=0.5,URI=\"12.2.m4s\"\n");
  REQUIRE(p);
  REQUIRE(p->entries.size() == 5);
  CHECK(p->entries[0].gap);   // 10.m4s
  CHECK(!p->entries[1].gap);  // 11.m4s: a gap marks only the segment after it
  CHECK(!p->entries[2].gap);
  CHECK(p->entries[3].gap);  // 12.1.m4s
  CHECK(!p->entries[4].gap);
}

TEST_CASE("S-19 master renditions are single safe names, and other text is refused") {
  CHECK(ParseMasterRenditions(Corpus("master.m3u8")) == std::vector<std::string>{"a1", "v1"});
  CHECK(!ParseMediaPlaylist("<html>not a playlist</html>"));
  CHECK(!ParseObjectName("../1.m4s"));
  CHECK(!ParseObjectName("-1.m4s"));
  CHECK(!ParseObjectName("5.99999.m4s"));
  CHECK(*ParseObjectName("5.m4s") == std::make_pair(int64_t{5}, -1));
  CHECK(*ParseObjectName("5.3.m4s") == std::make_pair(int64_t{5}, 3));
  // An EXTINF without a usable duration adds no segment.
  auto p = ParseMediaPlaylist("#EXTM3U\n#EXTINF:abc,\n7.m4s\n#EXTINF:1e400,\n8.m4s\n");
  REQUIRE(p);
  CHECK(p->entries.empty());
}

TEST_CASE("S-21 an upstream is on the edge's timeline when a segment both know has the same time") {
  UpstreamMediaPlaylist same;
  for (int64_t msn : {100, 101, 102}) {
    same.entries.push_back({msn, 0, 500'000, 0, true, false});  // a part: not compared
    same.entries.push_back({msn, -1, 2'000'000, 1'000'000 + msn * 2000, false, false});
  }
  std::map<int64_t, int64_t> relayed = {{99, 1'000'000 + 99 * 2000},
                                        {100, 1'000'000 + 100 * 2000},
                                        {101, 1'000'000 + 101 * 2000 + 300}};
  CHECK(SameTimeline(relayed, same, 1000));  // 101 compared: 300 ms of rounding
  // Another node's timeline: its msn 101 started 7 s later.
  UpstreamMediaPlaylist other = same;
  for (auto& e : other.entries) {
    if (e.part < 0) e.program_date_time_ms += 7000;
  }
  CHECK_FALSE(SameTimeline(relayed, other, 1000));
  // Nothing in common (the edge relayed older segments only): cannot tell, so accepted.
  CHECK(SameTimeline({{10, 5}}, other, 1000));
  CHECK(SameTimeline({}, other, 1000));
}

TEST_CASE(
    "S-21 S-5 with no msn in common, an upstream whose msns run ahead of or behind its "
    "date-times is on another timeline") {
  // The edge relayed msn 100…102 (2 s segments); the upstream lists 150…152 at nearly the
  // same wall time: its source's timestamps are 100 s later, so its msn 150 is the media
  // the edge knows as 100.
  std::map<int64_t, int64_t> relayed;
  for (int64_t msn : {100, 101, 102}) relayed[msn] = 1'000'000 + msn * 2000;
  auto listing = [](int64_t first, int64_t first_ms) {
    UpstreamMediaPlaylist p;
    for (int64_t i = 0; i < 3; ++i) {
      p.entries.push_back({first + i, -1, 2'000'000, first_ms + i * 2000, false, false});
    }
    return p;
  };
  const int64_t now_ms = relayed[102] + 4000;
  CHECK_FALSE(SameTimeline(relayed, listing(150, now_ms), 1000, 2000));
  CHECK_FALSE(SameTimeline(relayed, listing(40, now_ms), 1000, 2000));  // msns behind
  // Without the segment duration nothing tells them apart (the old rule).
  CHECK(SameTimeline(relayed, listing(150, now_ms), 1000));
  // The same timeline, ahead by a few segments: its date-times follow its msns (a segment's
  // start may come up to a keyframe interval late: within one segment).
  CHECK(SameTimeline(relayed, listing(106, relayed[102] + 4 * 2000 - 1500), 1000, 2000));
  // A discontinuity upstream (a source gap of 30 s) adds time, never msns: still the same.
  CHECK(SameTimeline(relayed, listing(106, relayed[102] + 4 * 2000 + 30'000), 1000, 2000));
  // An upstream behind the edge on the same timeline (it lists older segments only).
  relayed[110] = relayed[102] + 8 * 2000;
  relayed.erase(100);
  relayed.erase(101);
  relayed.erase(102);
  CHECK(SameTimeline(relayed, listing(100, 1'000'000 + 100 * 2000), 1000, 2000));
  // Absurd msns from an upstream's text neither overflow nor pass.
  CHECK_FALSE(SameTimeline(relayed, listing(INT64_MAX - 3, now_ms), 1000, 2000));
}

TEST_CASE(
    "P-13 S-25 an object's timing field reads back as written, timeline origin included, and "
    "malformed fields are refused") {
  UpstreamEntry written;
  written.duration_us = 500'000;
  written.program_date_time_ms = 1'700'000'000'123;
  written.independent = true;
  written.discontinuity = true;
  written.timeline_origin = -8'589'934'592;
  written.start = 123'456'789;
  written.last_part = true;
  auto e = ParsePartTiming(FormatPartTiming(written), 12, 3);
  REQUIRE(e);
  CHECK(e->last_part);
  CHECK(e->timeline_origin == -8'589'934'592);
  CHECK(e->start == 123'456'789);
  CHECK(e->discontinuity);
  CHECK(e->msn == 12);
  CHECK(e->part == 3);
  CHECK(e->duration_us == 500'000);
  CHECK(e->program_date_time_ms == 1'700'000'000'123);
  CHECK(e->independent);
  // Any order, unknown keys ignored.
  auto other = ParsePartTiming("x=1;independent=0;pdt=5;duration_us=7", 0, 0);
  REQUIRE(other);
  CHECK_FALSE(other->independent);
  CHECK_FALSE(other->last_part);
  CHECK(other->duration_us == 7);
  CHECK_FALSE(other->timeline_origin);  // absent: the edge keeps the origin it knows
  CHECK_FALSE(other->start);
  CHECK_FALSE(other->discontinuity);
  // A malformed origin is left out; the rest of the field still counts.
  auto bad_origin = ParsePartTiming("duration_us=7;pdt=5;origin=12z", 0, 0);
  REQUIRE(bad_origin);
  CHECK_FALSE(bad_origin->timeline_origin);
  for (const char* bad :
       {"", "duration_us=500000", "pdt=5", "duration_us=0;pdt=5", "duration_us=-3;pdt=5",
        "duration_us=5x;pdt=5", "duration_us=5;pdt=", "duration_us=99999999999999;pdt=5",
        // Out of the range every node's arithmetic takes (S-23: any publisher may send one).
        "duration_us=5;pdt=9223372036854775807", "duration_us=5;pdt=5;start=9223372036854775807",
        "duration_us=5;pdt=5;start=0;origin=-9223372036854775807",
        "duration_us=5;pdt=5;start=1125899906842625"}) {
    INFO(bad);
    CHECK_FALSE(ParsePartTiming(bad, 1, 0));
  }
  CHECK_FALSE(ParsePartTiming(std::string(300, ';') + "duration_us=5;pdt=5", 1, 0));  // bounded
  CHECK_FALSE(ParsePartTiming("duration_us=5;pdt=5", 1, -1));
}

TEST_CASE(
    "S-6 S-21 an upstream whose fingerprint starts a relayed msn elsewhere is on another "
    "timeline") {
  // Segments 100 and 101 relayed, starting at these PTS (90 kHz).
  const std::map<int64_t, int64_t> relayed = {{100, 9'000'000}, {101, 9'180'000}};
  CHECK(SameFingerprint(relayed, "101:9180000:180000", 4500));
  CHECK(SameFingerprint(relayed, "101:9181000:180000", 4500));  // an audio frame off
  // Date-times may agree within a second while the media is 0.3 s off: another anchor.
  CHECK_FALSE(SameFingerprint(relayed, "101:9207000:180000", 4500));
  CHECK_FALSE(SameFingerprint(relayed, "100:1:180000", 4500));
  // Nothing to compare: accepted (the date-time check still applies).
  CHECK(SameFingerprint(relayed, "", 4500));
  CHECK(SameFingerprint(relayed, "102:5:180000", 4500));
  for (const char* bad : {"101", "101:", "x:1:2", "101:9207000", "101:zz:1"}) {
    INFO(bad);
    CHECK(SameFingerprint(relayed, bad, 4500));
  }
}

}  // namespace
}  // namespace meshwork::streamer::relay
