// Fuzzes the fMP4 probe (L-1: init segments and fragments packagers publish): any input is
// read within its bounds, and what comes out is plausible.
//
// Properties (a violation traps): codec strings are short and start with a known four
// characters when set; a track is video or audio; the probe is deterministic.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "streamer/media/mp4_probe.h"

namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace meshwork::media;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto tracks = ProbeInitSegment(in);
  for (const auto& t : tracks) {
    Check(t.info.is_video() || t.info.is_audio() || t.info.codec == Codec::kUnknown);
    Check(t.info.codec_string.size() <= 64);
    if (!t.info.codec_string.empty()) {
      std::string_view c = t.info.codec_string;
      Check(c.starts_with("avc") || c.starts_with("hvc") || c.starts_with("hev") ||
            c.starts_with("mp4a"));
    }
  }
  Check(ProbeInitSegment(in).size() == tracks.size());
  auto start = ProbeFragmentStart(in);
  auto again = ProbeFragmentStart(in);
  Check(start.has_value() == again.has_value());
  if (start) Check(start->base_media_decode_time == again->base_media_decode_time);
  return 0;
}
