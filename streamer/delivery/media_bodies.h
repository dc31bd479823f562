// Bodies of media playlists: rendered once per window, form and policy, then handed to every
// viewer without copying (P-4). A viewer whose URIs carry its token gets the rendering
// with its query put in place of each marker; the last such body is kept per thread, so a
// player's reloads under one token cost one lookup, not a fill per request.
//
// Thread-safety: every function may be called from any HTTP worker at once; the rendering
// cache is the window's own (RenditionWindow::RenderCache, locked); the carried-body memo is
// thread-local.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/http/types.h"
#include "streamer/store/origin_store.h"

namespace meshwork::streamer {

enum class MediaForm { kLowLatency, kLowLatencyDelta, kLive };

// The window's media playlist in `form` for the stream's current policy; with `carried` the
// rendering holds a marker where each viewer's query goes (see CarriedBody).
std::shared_ptr<const RenditionWindow::Rendered> RenderedMedia(const OriginStore& store,
                                                               const std::string& stream,
                                                               const RenditionWindow& w,
                                                               MediaForm form, bool carried);

// Answers 200 with the playlist: with an empty `carry`, the rendering itself (gzip when
// `accepts_gzip`), cacheable for `max_age` s; else the carried rendering with `carry` in place
// of every marker, never gzipped and `private` (its URIs hold one viewer's token).
// `notifications` (L-10), when not null, goes out as X-Stream-Notifications.
void SendMediaPlaylist(http::Responder& out, const RenditionWindow::Rendered& rendered,
                       std::string_view carry, bool accepts_gzip, int max_age,
                       std::string_view cors, const std::string* notifications);

// A rendering made with the marker, with `carry` in place of each marker (no memo).
std::string FillCarry(std::string_view text, std::string_view carry);

}  // namespace meshwork::streamer
