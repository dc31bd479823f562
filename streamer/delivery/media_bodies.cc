#include "streamer/delivery/media_bodies.h"

#include <array>

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
  rendered->plain = std::make_shared<const std::string>(std::move(text));
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
  std::shared_ptr<const std::string> body;
  if (!carried) {
    if (accepts_gzip) {
      std::call_once(rendered.gzip_once, [&] {
        rendered.gzip = std::make_shared<const std::string>(http::Gzip(*rendered.plain));
      });
      body = rendered.gzip;
    } else {
      body = rendered.plain;
    }
  } else {
    thread_local CarriedMemo memo;
    if (memo.source != rendered.plain || memo.carry != carry) {
      memo.filled = std::make_shared<const std::string>(FillCarry(*rendered.plain, carry));
      memo.source = rendered.plain;
      memo.carry.assign(carry);
    }
    body = memo.filled;
  }
  const bool gzip = accepts_gzip && !carried;
  auto header = [&] {
    http::Response res{http::Status::ok, 11};
    res.set(http::beast_http::field::content_type, kPlaylistType);
    res.set(http::beast_http::field::cache_control,
            absl::StrCat(carried ? "private, " : "", "max-age=", max_age));
    res.set(http::beast_http::field::vary, "Accept-Encoding");
    if (gzip) res.set(http::beast_http::field::content_encoding, "gzip");
    if (notifications) res.set("X-Stream-Notifications", *notifications);
    http::AddCors(res, cors);
    return res;
  };
  if (carried) {
    // One viewer's URIs: nobody else shares this rendering, nothing to prepare.
    http::SharedBuffers buffers;
    buffers.Append(body);
    uint64_t size = buffers.size;
    return out.SendBuffers(header(), std::move(buffers), 0, size);
  }
  // P-3, P-13: the answer (header bytes and body) is prepared once per rendering and kind
  // on each worker thread; thousands of viewers of one revision share it.
  struct Prepared {
    std::shared_ptr<const std::string> body;  // the key's identity: held, so never reused
    bool gzip = false;
    int max_age = 0;
    std::string cors;
    std::string notifications;
    bool has_notifications = false;
    std::shared_ptr<const http::PreparedAnswer> answer;
  };
  thread_local std::array<Prepared, 8> prepared;
  thread_local size_t next = 0;
  for (const Prepared& p : prepared) {
    if (p.answer && p.body == body && p.gzip == gzip && p.max_age == max_age && p.cors == cors &&
        p.has_notifications == (notifications != nullptr) &&
        (!notifications || p.notifications == *notifications)) {
      return out.SendPrepared(p.answer, http::AnswerFields());
    }
  }
  Prepared& slot = prepared[next];
  next = (next + 1) % prepared.size();
  slot = Prepared{body,
                  gzip,
                  max_age,
                  std::string(cors),
                  notifications ? *notifications : std::string(),
                  notifications != nullptr,
                  std::make_shared<const http::PreparedAnswer>(header(), body)};
  out.SendPrepared(slot.answer, http::AnswerFields());
}

}  // namespace meshwork::streamer
