// Viewer routes of every stream on this node, whatever its source (spec 03, first
// paragraph: one store, one set of read rules): HLS with MPEG-TS segments (S-8, S-9), LL-HLS
// (S-10…S-15), DASH (S-16), with viewer access in front (A-1…A-5: every request of a
// protected stream checked, the viewer's token carried into every URI written for it), OTT
// redundancy (O-3…O-16), sessions (S-18) and CORS (S-22).
//
//   GET /{stream}/index.m3u8               master playlist (HLS-TS variants)
//   GET /{stream}/{rendition}/index.m3u8   media playlist (.ts, or .m4s for a CMAF-only one)
//   GET /{stream}/index.ll.m3u8            LL-HLS master (video variants, an audio group)
//   GET /{stream}/{rendition}/index.ll.m3u8   LL-HLS media playlist (blocking reload)
//   GET /{stream}/index.mpd                DASH
//   GET /{stream}/{rendition}/{init.mp4|N.ts|N.m4s|N.P.m4s}   objects, decided by the store's
//                                           read rules (L-6…L-16: serve, hold, 404 with TTL,
//                                           410, shedding); the DASH segment in progress is
//                                           streamed as its parts arrive
//   GET /{stream}/[{rendition}/]index-{from}-{duration|now}[.ll].m3u8, …/dvr-…   the
//                                           archive (D-3, archive_routes.h)
//   GET /time                              the node's clock (DASH UTCTiming)
//   OPTIONS …                              CORS preflight
// Stream names may contain '/'; the longest prefix that is a stream on this node wins.
// Handlers never block; playlists are rendered from the store's immutable windows.
#pragma once

#include "common/http/router.h"
#include "common/time/clock.h"
#include "streamer/delivery/central_redirect.h"
#include "streamer/delivery/play_sessions.h"
#include "streamer/packager/stream_manager.h"
#include "streamer/store/origin_store.h"

namespace meshwork::streamer {

namespace relay {
class Relay;
}

class AccessGate;
class OriginDelivery;
class OttGate;
struct ArchiveContext;
class Shedder;

struct ViewerContext {
  OriginStore* store;
  StreamManager* streams;
  PlaySessions* sessions;
  OriginDelivery* objects;  // object reads (L-6…L-16)
  // OTT redundancy: backups in master playlists, passes, redirects, stale 404s (O-3…O-16).
  OttGate* ott = nullptr;
  // S-19: an edge's relay for streams placed elsewhere; null on nodes that relay nothing.
  relay::Relay* relay = nullptr;
  // D-3: archive playback (paths in streamer/archive/archive_target.h); null: no archive.
  const ArchiveContext* archive = nullptr;
  // L-16: playlists and manifests are live reads, shed under pressure like live objects.
  Shedder* shedder = nullptr;
  // Z-22: a live entry of a stream not placed here: central's Route says where to go.
  CentralRedirect* central = nullptr;
  // A-1…A-5: the access policy checked before anything of a stream is served; null: every
  // stream open (tests of other features).
  AccessGate* access = nullptr;
  // P-9: a media playlist request without delivery directives waits for the rendition's
  // next part when it is due within this share of a part target (TuneInHoldMs), so that a
  // player tuning in starts from an edge that is not up to a part old. 0: never waits.
  int tune_in_hold_pct = 0;
};

// Adds the catch-all viewer routes; add them after every other route of the listener.
void AddViewerRoutes(http::Router& router, ViewerContext context);

}  // namespace meshwork::streamer
