// LL-HLS delivery directives (the query of a playlist request) on arbitrary bytes.
// Properties: no crash; an accepted request with an msn yields a target no further than two
// segments past the last, with a part index inside a segment.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "streamer/delivery/blocking_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace meshwork::streamer;
  std::string_view query(reinterpret_cast<const char*>(data), size);
  auto request = ParseBlockingRequest(query);
  if (!request.ok() || !request->msn) return 0;
  if (request->part && !request->msn) __builtin_trap();
  for (Position last : {Position{0, -1}, Position{897982219, 2}, Position{5, -1}}) {
    auto target = BlockingTarget(*request, last, 2000, 500);
    if (!target.ok()) continue;
    if (target->msn > last.msn + 2) __builtin_trap();
    if (target->part >= PartsPerSegment(2000, 500)) __builtin_trap();
  }
  return 0;
}
