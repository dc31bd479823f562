// the frame rules in front of central's gRPC (central/rpc/frame_gate.h) on arbitrary
// client bytes, fed in pieces as a socket would deliver them, and the server-direction
// boundary tracker on the same bytes. Properties: no crash; Feed never forwards more than
// it was given; once failed it stays failed and forwards nothing; the bytes forwarded in
// all are a prefix of the input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "central/rpc/frame_gate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using meshwork::central::ClientFrameCheck;
  meshwork::central::FrameGateLimits limits;
  limits.streams_before_ack = 4;
  limits.header_block_bytes = 512;
  limits.pings_per_second = 3;
  limits.resets_per_second = 3;
  limits.settings_per_second = 3;
  ClientFrameCheck check(limits);
  meshwork::central::FrameBoundary boundary;
  if (size == 0) return 0;
  // The first byte picks the piece size, so frames straddle Feed calls in every way.
  const size_t piece = 1 + data[0] % 64;
  std::span<const uint8_t> rest(data + 1, size - 1);
  size_t forwarded = 0;
  bool was_failed = false;
  int64_t now_ms = 0;
  while (!rest.empty()) {
    std::span<const uint8_t> chunk = rest.first(std::min(piece, rest.size()));
    rest = rest.subspan(chunk.size());
    size_t n = check.Feed(chunk, now_ms);
    if (n > chunk.size()) std::abort();
    if (was_failed && n != 0) std::abort();
    if (!check.failed() && n != chunk.size()) std::abort();
    if (!was_failed) forwarded += n;
    if (was_failed && !check.failed()) std::abort();
    was_failed = check.failed();
    boundary.Feed(chunk);
    now_ms += 100;
  }
  if (forwarded > size - 1) std::abort();
  (void)meshwork::central::GoawayFrame(check.last_stream_id(), check.error_code(), check.reason());
  return 0;
}
