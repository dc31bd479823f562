// S-16: a DASH segment still in progress, answered with chunked transfer as its parts
// complete. Each part is a moof + mdat, so the chunks add up to the finished .m4s byte for
// byte. Apart from viewer_routes.cc, which decides when a segment read is answered this way.
//
// Threads: StreamSegmentParts runs on the request's worker; every later step runs from the
// store's position or object waiter, on `executor`. The writer hops onto its connection's worker
// itself (ChunkedWriter). A viewer that left is noticed (closed()) at the pump's next step: its
// waiter stays until the next part is out or the hold bound passes, then the pump ends.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "boost/asio/any_io_executor.hpp"
#include "common/http/types.h"
#include "streamer/store/origin_store.h"

namespace meshwork::streamer {

// S-12: how long a blocking request (a held playlist reload, a part a streamed segment waits
// for) is held before it answers 503: three target durations.
inline std::chrono::milliseconds HoldBound(int segment_ms) {
  return std::chrono::milliseconds(3 * segment_ms);
}

// The store's decision on reading (stream, rendition, key) now; kMissing when the stream or
// the rendition is not here.
ReadDecision DecideObject(const OriginStore& store, const std::string& stream,
                          const std::string& rendition, ObjectKey key);

// Whether a read of segment `msn` is to be streamed as its parts arrive: the store holds it
// (the segment in progress, the next object of L-7) and the rendition is made of parts (the
// local packager's, LL packagers'). The store decides; the window only says whether parts
// exist.
bool StreamsAsParts(const OriginStore& store, const std::string& stream,
                    const std::string& rendition, int64_t msn);

// Writes every part of segment `msn` there is to `writer`, then each one as it is published,
// and finishes the response when the segment is complete and every part of it was written. A
// part the store holds (L-12: a better-ranked pipeline's copy is still expected) is waited
// for in its place. A part that is not out within `hold` of the last (HoldBound), a part the
// store will not serve (masked, gone), a segment that will not come, a stream removed, or a
// store refusing one more waiter aborts the body (the client sees a broken transfer, never a
// cut-short segment as a whole one). `store` must outlive the pump (the node's).
void StreamSegmentParts(OriginStore* store, std::string stream, std::string rendition, int64_t msn,
                        std::chrono::milliseconds hold, std::shared_ptr<http::ChunkedWriter> writer,
                        boost::asio::any_io_executor executor);

}  // namespace meshwork::streamer
