// Fuzzes the archive's URL parsing and file naming (D-3, D-8): any path parses within its
// bounds, and no file name the archive would build from what it accepts leaves the root.
//
// Properties (a violation traps): a playlist's from and duration are within their bounds; a
// segment's start and duration are non-negative and positive; a bad target carries a
// message; a name SafeName accepts, used as stream and rendition, and the parsed numbers give
// paths that stay under the root after normalisation; parsing is deterministic.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "streamer/archive/archive_target.h"
#include "streamer/archive/layout.h"

namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

bool Under(const std::filesystem::path& path, const std::string& root) {
  std::string normal = path.lexically_normal().string();
  return normal.rfind(root, 0) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace meshwork::streamer::archive;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto t = ParseArchiveTarget(in);
  auto again = ParseArchiveTarget(in);
  Check(t.kind == again.kind && t.from_ms == again.from_ms && t.start_ms == again.start_ms);
  switch (t.kind) {
    case ArchiveTarget::kPlaylist:
      Check(t.from_ms >= 0 && t.from_ms <= kMaxArchiveFromS * 1000);
      Check(!t.duration_ms || *t.duration_ms > 0);
      break;
    case ArchiveTarget::kSegment:
      Check(t.start_ms >= 0 && t.segment_duration_ms > 0);
      break;
    case ArchiveTarget::kInit:
      Check(t.start_ms >= 0);
      break;
    case ArchiveTarget::kBad:
      Check(!t.error.empty());
      break;
    case ArchiveTarget::kNotArchive:
      break;
  }
  // Names: whatever SafeName lets through stays one element under the root.
  std::string name(in.substr(0, 200));
  if (SafeName(name)) {
    auto dir = TrackDir("/root", name, Proto::kTs, name);
    Check(Under(dir, "/root/"));
    Check(Under(SegmentPath(dir, Proto::kTs, t.start_ms, t.segment_duration_ms + 1), "/root/"));
    Check(Under(InitPath(dir, t.start_ms), "/root/"));
  }
  if (auto parsed = ParseSegmentName(in, "ts")) Check(parsed->first >= 0 && parsed->second > 0);
  return 0;
}
