// The continuous MPEG-TS push of the publish listener (S-1): `PUT|POST /{stream}/publish`,
// what `ffmpeg -f mpegts -method PUT` sends, read chunk by chunk as it arrives.
#pragma once

#include <memory>
#include <string>

#include "common/http/router.h"
#include "streamer/packager/stream_manager.h"

namespace meshwork::streamer {

// Feeds each chunk to the stream's demuxer as it arrives. Called by the publish listener's
// route once the publisher is authorized. While another push is live it is refused with
// 409, unless `take_over` (the publisher presented the stream's token, M-3): then it
// supersedes the live one.
void ServePush(StreamManager* streams, http::RequestContext& ctx,
               std::shared_ptr<http::BodyReader> body, http::Responder r, const std::string& stream,
               bool take_over);

}  // namespace meshwork::streamer
