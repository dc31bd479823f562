// Responses shared by the viewer handlers of locally packaged and published streams.
#pragma once

#include <string>
#include <string_view>

#include "common/http/prepared_answer.h"
#include "common/http/types.h"

namespace meshwork::streamer {

inline constexpr char kPlaylistType[] = "application/vnd.apple.mpegurl";
inline constexpr char kMpdType[] = "application/dash+xml";
inline constexpr char kTsType[] = "video/mp2t";
inline constexpr char kMp4Type[] = "video/mp4";
inline constexpr char kImmutable[] = "max-age=86400, immutable";

// 404 for an unknown stream, rendition or object (L-6: `Cache-Control: max-age=1`).
http::Response NotFound(std::string_view what, std::string_view cors);
// P-5: the answers of a 404/410 storm, rendered once per worker thread and CORS value
// (`cors` comes from a stream's policy, never from a request; at most 32 are kept per
// thread). Each has its content type, CORS fields and M-1 body; the caller adds what changes
// per request (AnswerFields):
//   kNotYet       404 "not published yet" (L-8: the caller adds Cache-Control and
//                 X-Cache-TTL-Ms from the object's TTL);
//   kGone         410 "gone" (L-9: the caller adds Cache-Control from the live window);
//   kNoObject,
//   kNoRendition  404 like NotFound(), `Cache-Control: max-age=1` included.
enum class PreparedError { kNotYet, kGone, kNoObject, kNoRendition };
const std::shared_ptr<const http::PreparedAnswer>& PreparedErrorAnswer(PreparedError which,
                                                                       std::string_view cors);
// 503 with `Retry-After: 1`, not cacheable (a hold that ran out, a full waiter table).
http::Response Unavailable(std::string_view message, std::string_view cors);
// 503 for a read shed under pressure (L-16): `Cache-Control: max-age=5`, `Retry-After: 5`,
// so caches and players come back later rather than at once.
http::Response ShedResponse(std::string_view message, std::string_view cors);
// A playlist or MPD (gzip when the client accepts it) cacheable for `max_age` seconds;
// `personal` (its URIs hold one viewer's token, A-3): `private`, never kept by shared caches.
http::Response PlaylistResponse(const http::Request& request, std::string body, int max_age,
                                std::string_view cors,
                                std::string_view content_type = kPlaylistType,
                                bool personal = false);

}  // namespace meshwork::streamer
