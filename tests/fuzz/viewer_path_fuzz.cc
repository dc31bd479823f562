// viewer listener paths (S-2, S-10, S-16) on arbitrary bytes. Properties: no crash; an
// accepted path names a stream the lookup accepted last, a rendition without '/', an msn in
// 0 … kMaxMsn, a part index only for parts and within 0 … 100 000.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "streamer/delivery/viewer_path.h"
#include "streamer/store/origin_rules.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace meshwork::streamer;
  if (size == 0) return 0;
  // The first byte chooses which names are streams: by their length's parity, or none.
  const uint8_t mode = data[0] % 3;
  std::string_view path(reinterpret_cast<const char*>(data + 1), size - 1);
  std::string last_asked;
  bool last_answer = false;
  auto parsed = ParseViewerPath(path, [&](std::string_view name) {
    last_asked = std::string(name);
    last_answer = mode == 0 ? name.size() % 2 == 0 : mode == 1;
    return last_answer;
  });
  if (!parsed) return 0;
  if (!last_answer || parsed->stream != last_asked || parsed->stream.empty()) __builtin_trap();
  if (parsed->msn < 0 || parsed->msn > kMaxMsn) __builtin_trap();
  const bool in_rendition = parsed->kind != ViewerPath::kMaster &&
                            parsed->kind != ViewerPath::kLlMaster &&
                            parsed->kind != ViewerPath::kMpd;
  if (in_rendition == parsed->rendition.empty()) __builtin_trap();
  if (parsed->rendition.find('/') != std::string::npos) __builtin_trap();
  if ((parsed->kind == ViewerPath::kPart) != (parsed->part >= 0)) __builtin_trap();
  if (parsed->part > 100'000) __builtin_trap();
  return 0;
}
