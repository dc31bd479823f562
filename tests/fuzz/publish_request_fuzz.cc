// the publish listener's path and header parsing never crashes on any input. The first
// byte picks what is fuzzed; the rest is split at '\n' into path and header values.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "streamer/delivery/publish_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::string_view fields[4];
  for (auto& f : fields) {
    size_t nl = in.find('\n');
    f = in.substr(0, nl);
    in = nl == std::string_view::npos ? std::string_view() : in.substr(nl + 1);
  }
  auto target = meshwork::streamer::ParsePublishPath(fields[0]);
  if (target.ok() && target->stream.empty()) __builtin_trap();
  auto headers = meshwork::streamer::ParsePublishHeaders(
      fields[1].empty() ? std::nullopt : std::optional<std::string_view>(fields[1]),
      fields[2].empty() ? std::nullopt : std::optional<std::string_view>(fields[2]),
      fields[3].empty() ? std::nullopt : std::optional<std::string_view>(fields[3]));
  if (headers.ok() && !meshwork::streamer::IsPipelineId(headers->pipeline)) __builtin_trap();
  return 0;
}
