// Fuzzes what an edge reads from its upstream's LL-HLS playlists (S-19): any text is parsed
// within its bounds, and what comes out is consistent.
//
// Properties (a violation traps): at most kMaxEntries entries; positions are non-negative and
// a part's index is bounded; durations are within a day; master rendition names are single,
// safe path segments without repeats; parsing is deterministic; a part timing field read
// back from its own formatting is the same; a gzip body (P-16: the relay asks for playlists
// compressed) never inflates past its limit.

#include <cstddef>
#include <cstdint>
#include <set>
#include <string_view>

#include "common/http/gunzip.h"
#include "streamer/relay/upstream_playlist.h"

namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace meshwork::streamer::relay;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto playlist = ParseMediaPlaylist(in);
  if (playlist) {
    Check(playlist->entries.size() <= kMaxEntries);
    for (const auto& e : playlist->entries) {
      Check(e.msn >= 0);
      Check(e.part >= -1 && e.part <= 1000);
      Check(e.duration_us >= 0 && e.duration_us <= 86'400'000'000);
    }
    auto again = ParseMediaPlaylist(in);
    Check(again && again->entries.size() == playlist->entries.size());
  }
  std::set<std::string> seen;
  for (const auto& name : ParseMasterRenditions(in)) {
    Check(!name.empty() && name.size() <= 64);
    Check(name.find('/') == std::string::npos && name != "." && name != "..");
    Check(seen.insert(name).second);
  }
  if (auto object = ParseObjectName(in)) Check(object->first >= 0 && object->second >= -1);
  // P-13: the X-Media-Timing field; what it accepts is plausible, and written back it reads
  // the same.
  if (auto timing = ParsePartTiming(in, 7, 2)) {
    Check(timing->msn == 7 && timing->part == 2);
    Check(timing->duration_us > 0 && timing->duration_us <= 86'400'000'000);
    Check(timing->program_date_time_ms > 0);
    auto again = ParsePartTiming(FormatPartTiming(*timing), 7, 2);
    Check(again && again->duration_us == timing->duration_us &&
          again->program_date_time_ms == timing->program_date_time_ms &&
          again->independent == timing->independent &&
          again->discontinuity == timing->discontinuity &&
          again->timeline_origin == timing->timeline_origin && again->start == timing->start);
  }
  // P-16: the relay's playlists come gzip-compressed; what inflates is bounded and parsed.
  if (auto inflated = meshwork::http::Gunzip(in, 64 * 1024); inflated.ok()) {
    Check(inflated->size() <= 64 * 1024);
    (void)ParseMediaPlaylist(*inflated);
  }
  // S-6: a fingerprint from central's answer; any text is either compared or accepted.
  (void)SameFingerprint({{7, 630000}}, in, 4500);
  return 0;
}
