// Viewer listener paths (S-2, S-10, S-16): what each names, and what names nothing.
#include "streamer/delivery/viewer_path.h"

#include <catch2/catch.hpp>
#include <set>
#include <string>

namespace meshwork::streamer {
namespace viewer_path_test {

std::optional<ViewerPath> Parse(std::string_view path, std::set<std::string> streams) {
  return ParseViewerPath(
      path, [&](std::string_view name) { return streams.count(std::string(name)) > 0; });
}

TEST_CASE("S-2 S-10 S-16 viewer paths name a stream's playlists, MPD and a rendition's objects") {
  const std::set<std::string> streams = {"live", "news/eu"};
  auto master = Parse("/live/index.m3u8", streams);
  REQUIRE(master);
  CHECK(master->kind == ViewerPath::kMaster);
  CHECK(master->stream == "live");
  CHECK(master->rendition.empty());
  CHECK(Parse("/news/eu/index.ll.m3u8", streams)->kind == ViewerPath::kLlMaster);
  CHECK(Parse("/news/eu/index.mpd", streams)->stream == "news/eu");
  // A stream name with a slash: its rendition's playlist is told apart by the lookup.
  auto media = Parse("/news/eu/v1/index.m3u8", streams);
  REQUIRE(media);
  CHECK(media->kind == ViewerPath::kMedia);
  CHECK(media->stream == "news/eu");
  CHECK(media->rendition == "v1");
  CHECK(Parse("live/v1/index.ll.m3u8", streams)->kind == ViewerPath::kLlMedia);
  auto segment = Parse("/live/v1/898220828.ts", streams);
  REQUIRE(segment);
  CHECK(segment->kind == ViewerPath::kSegment);
  CHECK(segment->msn == 898220828);
  CHECK(segment->part == -1);
  auto part = Parse("/live/v1/898220828.3.m4s", streams);
  REQUIRE(part);
  CHECK(part->kind == ViewerPath::kPart);
  CHECK(part->msn == 898220828);
  CHECK(part->part == 3);
  CHECK(Parse("/live/a1/12.m4s", streams)->kind == ViewerPath::kM4s);
  CHECK(Parse("/live/a1/init.mp4", streams)->kind == ViewerPath::kInit);
}

TEST_CASE("S-2 viewer paths that name nothing: unknown streams, bad numbers, other files") {
  const std::set<std::string> streams = {"live"};
  for (const char* path :
       {"/other/index.m3u8", "/other/v1/1.ts", "/index.m3u8", "/live", "/live/", "/live/v1/x.ts",
        "/live/v1/-1.ts", "/live/v1/1099511627777.ts", "/live/v1/99999999999999999999.ts",
        "/live/v1/1.100001.m4s", "/live/v1/1..m4s", "/live/v1/.m4s", "/live/v1/1.ts.m4s",
        "/live/v1/index.html", "/live/index.mpd/", "//v1/1.ts", "/live/v1/+1.ts", "/live//5.ts",
        "/live//index.m3u8"}) {
    INFO(path);
    CHECK_FALSE(Parse(path, streams));
  }
  // The largest msn accepted (kMaxMsn) still parses.
  CHECK(Parse("/live/v1/1099511627776.ts", streams));
}

}  // namespace viewer_path_test
}  // namespace meshwork::streamer
