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

#include "common/http/router.h"
#include "common/time/clock.h"
#include "streamer/delivery/play_sessions.h"
#include "streamer/packager/stream_manager.h"
#include "streamer/store/segment_store.h"

namespace meshwork::streamer {

struct HlsContext {
  SegmentStore* store;
  StreamManager* streams;
  PlaySessions* sessions;
};

// Adds the catch-all viewer routes; add them after every other route of the listener.
void AddHlsRoutes(http::Router& router, HlsContext context);
void AddPushRoutes(http::Router& router, StreamManager* streams);

}  // namespace meshwork::streamer
