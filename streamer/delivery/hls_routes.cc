#include "streamer/delivery/hls_routes.h"

#include <charconv>

#include "absl/strings/str_cat.h"
#include "common/http/content.h"
#include "common/http/response.h"
#include "common/log/log.h"
#include "streamer/delivery/playlists.h"

namespace meshwork::streamer {

using http::RequestContext;
using http::Responder;

namespace {

constexpr char kPlaylistType[] = "application/vnd.apple.mpegurl";
constexpr char kTsType[] = "video/mp2t";

// What a viewer path names.
struct Target {
  enum Kind { kMaster, kMedia, kSegment } kind = kMaster;
  std::string stream;
  std::string rendition;
  int64_t msn = 0;
  std::shared_ptr<StreamPipeline> pipeline;
};

bool ParseMsn(std::string_view s, int64_t* msn) {
  if (s.empty() || s.size() > 18) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *msn);
  return ec == std::errc() && p == s.data() + s.size() && *msn >= 0;
}

std::optional<Target> Resolve(std::string_view path, const StreamManager& streams) {
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return std::nullopt;
  std::string_view prefix = path.substr(0, slash);
  std::string_view file = path.substr(slash + 1);
  Target t;
  if (file == "index.m3u8") {
    if ((t.pipeline = streams.Find(std::string(prefix)))) {
      t.kind = Target::kMaster;
      t.stream = prefix;
      return t;
    }
    t.kind = Target::kMedia;
  } else if (file.size() > 3 && file.substr(file.size() - 3) == ".ts" &&
             ParseMsn(file.substr(0, file.size() - 3), &t.msn)) {
    t.kind = Target::kSegment;
  } else {
    return std::nullopt;
  }
  size_t split = prefix.rfind('/');
  if (split == std::string_view::npos || split == 0) return std::nullopt;
  t.stream = prefix.substr(0, split);
  t.rendition = prefix.substr(split + 1);
  t.pipeline = streams.Find(t.stream);
  if (!t.pipeline) return std::nullopt;
  return t;
}

http::Response NotFound(std::string_view what, std::string_view cors) {
  http::Response res = http::ErrorResponse(absl::NotFoundError(std::string(what)));
  res.set(http::beast_http::field::cache_control, "max-age=1");  // L-6
  http::AddCors(res, cors);
  return res;
}

http::Response Playlist(const http::Request& request, std::string body, int max_age,
                        std::string_view cors) {
  http::Response res{http::Status::ok, 11};
  res.set(http::beast_http::field::content_type, kPlaylistType);
  res.set(http::beast_http::field::cache_control, absl::StrCat("max-age=", max_age));
  res.set(http::beast_http::field::vary, "Accept-Encoding");
  if (http::AcceptsGzip(request)) {
    res.set(http::beast_http::field::content_encoding, "gzip");
    res.body() = http::Gzip(body);
  } else {
    res.body() = std::move(body);
  }
  http::AddCors(res, cors);
  res.prepare_payload();
  return res;
}

}  // namespace

void AddHlsRoutes(http::Router& router, HlsContext context) {
  router.Add({http::Verb::options}, "/{path...}", [context](RequestContext& ctx, Responder r) {
    auto target = Resolve(ctx.path, *context.streams);
    r.Send(http::PreflightResponse(ctx.request,
                                   target ? target->pipeline->settings().cors : std::string("*")));
  });
  router.Add({http::Verb::get}, "/{path...}", [context](RequestContext& ctx, Responder r) {
    auto target = Resolve(ctx.path, *context.streams);
    if (!target) return r.Send(NotFound("no such stream or object on this node", "*"));
    const StreamSettings& settings = target->pipeline->settings();
    const std::string& cors = settings.cors;
    auto active = std::chrono::milliseconds(2 * settings.segment_ms);  // S-18
    std::string_view agent;
    if (auto ua = ctx.request.find(http::beast_http::field::user_agent); ua != ctx.request.end()) {
      agent = ua->value();
    }
    context.sessions->Touch(target->stream, "hls", ctx.client, agent, active);
    // S-15: plain playlist responses live at most half a target duration.
    int playlist_age = std::max(0, settings.segment_ms / 2000);
    switch (target->kind) {
      case Target::kMaster: {
        std::string body = MasterPlaylist(context.store->Renditions(target->stream));
        if (body.empty()) return r.Send(NotFound("the stream has no segment yet", cors));
        return r.Send(Playlist(ctx.request, std::move(body), playlist_age, cors));
      }
      case Target::kMedia: {
        auto window = context.store->Window(target->stream, target->rendition);
        if (!window || window->segments.empty()) {
          return r.Send(NotFound("no such rendition (yet)", cors));
        }
        return r.Send(Playlist(ctx.request, MediaPlaylist(*window), playlist_age, cors));
      }
      case Target::kSegment: {
        auto window = context.store->Window(target->stream, target->rendition);
        const Segment* segment = window ? window->Find(target->msn) : nullptr;
        if (!segment) return r.Send(NotFound("no such segment", cors));
        http::Response res = http::MediaResponse(ctx.request, segment->ts, kTsType);
        res.set(http::beast_http::field::cache_control, "max-age=86400, immutable");
        http::AddCors(res, cors);
        return r.Send(std::move(res));
      }
    }
  });
}

void AddPushRoutes(http::Router& router, StreamManager* streams) {
  router.AddStreaming(
      {http::Verb::put, http::Verb::post}, "/{path...}",
      [streams](RequestContext& ctx, std::shared_ptr<http::BodyReader> body, Responder r) {
        std::string_view path = ctx.params[0];
        constexpr std::string_view kSuffix = "/publish";
        if (path.size() <= kSuffix.size() || path.substr(path.size() - kSuffix.size()) != kSuffix) {
          return r.Send(http::ErrorResponse(absl::NotFoundError("push to /{stream}/publish")));
        }
        std::string stream(path.substr(0, path.size() - kSuffix.size()));
        auto pipeline = streams->Find(stream);
        if (!pipeline) {
          return r.Send(http::ErrorResponse(absl::NotFoundError(
              absl::StrCat("stream \"", stream, "\" is not placed on this node"))));
        }
        auto session = pipeline->BeginPush();
        if (!session.ok()) return r.Send(http::ErrorResponse(session.status()));
        log::Info("push_started", {{"stream", stream}, {"client", ctx.client.ToString()}});
        // Reads until the end of the body; each chunk goes straight to the demuxer.
        struct Loop : std::enable_shared_from_this<Loop> {
          std::shared_ptr<StreamPipeline> pipeline;
          std::shared_ptr<http::BodyReader> body;
          uint64_t session;
          std::string stream;
          uint64_t bytes = 0;
          std::optional<Responder> responder;
          void Next() {
            body->Read([self = shared_from_this()](const absl::Status& status,
                                                   std::span<const uint8_t> chunk, bool done) {
              self->OnChunk(status, chunk, done);
            });
          }
          void OnChunk(const absl::Status& status, std::span<const uint8_t> chunk, bool done) {
            if (!status.ok()) {
              pipeline->EndPush(session);
              log::Warn("push_broken",
                        {{"stream", stream}, {"bytes", bytes}, {"error", status.ToString()}});
              responder->Send(http::ErrorResponse(status));
              return;
            }
            bytes += chunk.size();
            if (!chunk.empty() && !pipeline->FeedPush(session, chunk)) {
              log::Warn("push_superseded", {{"stream", stream}, {"bytes", bytes}});
              responder->Send(http::ErrorResponse(
                  absl::AbortedError("another publisher took over this stream")));
              return;
            }
            if (done) {
              pipeline->EndPush(session);
              log::Info("push_ended", {{"stream", stream}, {"bytes", bytes}});
              responder->Send(http::MakeResponse(http::Status::no_content, "", "text/plain"));
              return;
            }
            Next();
          }
        };
        auto loop = std::make_shared<Loop>();
        loop->pipeline = std::move(pipeline);
        loop->body = std::move(body);
        loop->session = *session;
        loop->stream = stream;
        loop->responder.emplace(std::move(r));
        loop->Next();
      });
}

}  // namespace meshwork::streamer
