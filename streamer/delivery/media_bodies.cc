#include "streamer/delivery/media_bodies.h"

#include "absl/strings/str_cat.h"
#include "common/http/content.h"
#include "common/http/response.h"
#include "streamer/delivery/ll_hls.h"
#include "streamer/delivery/playlists.h"
#include "streamer/delivery/responses.h"

namespace meshwork::streamer {
namespace {

constexpr char kCarryMarker = '\x01';  // never in a URI the writer prints otherwise

// The last carried body this thread made: its rendering (kept alive, so the pointer compared
// is the same text), the query filled in, and the result.
struct CarriedMemo {
  std::shared_ptr<const std::string> source;
  std::string carry;
  std::shared_ptr<const std::string> filled;
};

}  // namespace

std::shared_ptr<const RenditionWindow::Rendered> RenderedMedia(const OriginStore& store,
                                                               const std::string& stream,
                                                               const RenditionWindow& w,
                                                               MediaForm form, bool carried) {
  auto view = store.View(stream);
  const uint64_t serial = view ? view->policy->serial : 0;
  const char* name = form == MediaForm::kLowLatency        ? "ll:"
                     : form == MediaForm::kLowLatencyDelta ? "ll-skip:"
                                                           : "live:";
  std::string key = absl::StrCat(name, carried ? "carry:" : "", serial);
  if (auto found = w.cache.Find(key)) return found;
  const std::string query = carried ? std::string(1, kCarryMarker) : "";
  std::string text;
  if (form == MediaForm::kLive) {
    text = MediaPlaylist(w, ListedVersions(view, w.info.name, w.has_ts), query);
  } else {
    text = LowLatencyMediaPlaylist(w, store.Windows(stream), form == MediaForm::kLowLatencyDelta,
                                   ListedVersions(view, w.info.name, /*ts=*/false), query);
  }
  auto rendered = std::make_shared<RenditionWindow::Rendered>();
  auto plain = std::make_shared<const std::string>(std::move(text));
  rendered->gzip = std::make_shared<const std::string>(http::Gzip(*plain));
  rendered->plain = std::move(plain);
  return w.cache.Keep(key, std::move(rendered));
}

std::string FillCarry(std::string_view text, std::string_view carry) {
  std::string out;
  out.reserve(text.size() + 16 * carry.size());
  for (size_t at = 0;;) {
    size_t marker = text.find(kCarryMarker, at);
    out.append(text.substr(at, marker - at));
    if (marker == std::string_view::npos) return out;
    out.append(carry);
    at = marker + 1;
  }
}

void SendMediaPlaylist(http::Responder& out, const RenditionWindow::Rendered& rendered,
                       std::string_view carry, bool accepts_gzip, int max_age,
                       std::string_view cors, const std::string* notifications) {
  const bool carried = !carry.empty();
  http::Response res{http::Status::ok, 11};
  res.set(http::beast_http::field::content_type, kPlaylistType);
  res.set(http::beast_http::field::cache_control,
          absl::StrCat(carried ? "private, " : "", "max-age=", max_age));
  res.set(http::beast_http::field::vary, "Accept-Encoding");
  if (accepts_gzip && !carried) res.set(http::beast_http::field::content_encoding, "gzip");
  if (notifications) res.set("X-Stream-Notifications", *notifications);
  http::AddCors(res, cors);
  http::SharedBuffers body;
  if (!carried) {
    body.Append(accepts_gzip ? rendered.gzip : rendered.plain);
  } else {
    thread_local CarriedMemo memo;
    if (memo.source != rendered.plain || memo.carry != carry) {
      memo.filled = std::make_shared<const std::string>(FillCarry(*rendered.plain, carry));
      memo.source = rendered.plain;
      memo.carry.assign(carry);
    }
    body.Append(memo.filled);
  }
  uint64_t size = body.size;
  out.SendBuffers(std::move(res), std::move(body), 0, size);
}

}  // namespace meshwork::streamer
