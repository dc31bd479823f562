// Viewer routes for HLS with MPEG-TS segments (S-8, S-9, S-15, S-18, S-22), and the HTTP
// push ingest route of the publish listener (S-1).
//
// Viewer listener:
//   GET /{stream}/index.m3u8               master playlist
//   GET /{stream}/{rendition}/index.m3u8   media playlist
//   GET /{stream}/{rendition}/{msn}.ts     segment (Range honoured)
//   OPTIONS …                              CORS preflight
// Stream names may contain '/'; the longest prefix that is a stream on this node wins.
// Publish listener:
//   PUT|POST /{stream}/publish             continuous MPEG-TS push (what `ffmpeg -f mpegts
//                                           -method PUT` sends), read as it arrives
#pragma once

#include <memory>

#include "common/http/router.h"
#include "common/time/clock.h"
#include "streamer/delivery/play_sessions.h"
#include "streamer/packager/stream_manager.h"
#include "streamer/store/segment_store.h"

namespace meshwork::streamer {

class LowLatencyPlaylistCache;
class OriginDelivery;
class OttGate;

struct HlsContext {
  SegmentStore* store;
  StreamManager* streams;
  PlaySessions* sessions;
  // Streams whose objects packagers publish to this node are served from here (L-6…L-16).
  OriginDelivery* origin = nullptr;
  // OTT redundancy: backups in master playlists, passes, redirects, stale 404s (O-3…O-16).
  OttGate* ott = nullptr;
  // Rendered LL-HLS playlists, bounded, dropped with their windows; AddHlsRoutes makes one
  // per router when none is given.
  std::shared_ptr<LowLatencyPlaylistCache> playlists = nullptr;
};

// Adds the catch-all viewer routes; add them after every other route of the listener.
void AddHlsRoutes(http::Router& router, HlsContext context);
// The continuous MPEG-TS push of `stream` (S-1): each chunk goes to the demuxer as it
// arrives. Called by the publish listener's route once the publisher is authorized. While
// another push is live it is refused with 409, unless `take_over` (the publisher presented
// the stream's token, M-3): then it supersedes the live one.
void ServePush(StreamManager* streams, http::RequestContext& ctx,
               std::shared_ptr<http::BodyReader> body, http::Responder r, const std::string& stream,
               bool take_over);

}  // namespace meshwork::streamer
