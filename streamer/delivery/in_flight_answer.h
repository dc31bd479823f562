// P-13: a viewer's answer from an object still in flight (streamer/store/in_flight.h): the
// header as soon as the first piece is in, then every piece as it arrives, with chunked
// transfer (DATA frames on h2), ended when the object is complete. An object that fails
// after its first piece aborts the answer (HTTP/1.1: the connection closes without the last
// chunk; h2: RST_STREAM), so a cut body is never taken for a whole one.
#pragma once

#include <functional>
#include <memory>

#include "boost/asio/any_io_executor.hpp"
#include "common/http/router.h"
#include "streamer/store/in_flight.h"

namespace meshwork::streamer {

// Answers `r` from `object` with `header` (status 200 and its fields). `fallback` runs instead,
// once, on `executor`, when the object fails before its first piece or the reader could not
// wait on it (too many readers): the caller then decides from the store again.
void AnswerInFlight(std::shared_ptr<GrowingObject> object, std::shared_ptr<http::Responder> r,
                    boost::asio::any_io_executor executor, http::Response header,
                    std::function<void()> fallback);

}  // namespace meshwork::streamer
