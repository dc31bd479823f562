#include "streamer/delivery/hls_routes.h"

#include <charconv>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/http/content.h"
#include "common/http/response.h"
#include "common/log/log.h"
#include "common/time/clock.h"
#include "streamer/delivery/dash.h"
#include "streamer/delivery/ll_hls.h"
#include "streamer/delivery/origin_routes.h"
#include "streamer/delivery/ott_gate.h"
#include "streamer/delivery/playlists.h"
#include "streamer/delivery/publish_request.h"
#include "streamer/delivery/responses.h"

namespace meshwork::streamer {

using http::RequestContext;
using http::Responder;

namespace {

// What a viewer path names.
struct Target {
  enum Kind {
    kMaster,
    kMedia,
    kSegment,
    kLlMaster,
    kLlMedia,
    kInit,
    kM4s,
    kPart,
    kMpd
  } kind = kMaster;
  std::string stream;
  std::string rendition;
  int64_t msn = 0;
  int part = -1;
  std::shared_ptr<StreamPipeline> pipeline;
};

bool ParseMsn(std::string_view s, int64_t* msn) {
  if (s.empty() || s.size() > 18) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *msn);
  return ec == std::errc() && p == s.data() + s.size() && *msn >= 0 && *msn <= kMaxMsn;
}

std::optional<Target> Resolve(std::string_view path, const StreamManager& streams) {
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return std::nullopt;
  std::string_view prefix = path.substr(0, slash);
  std::string_view file = path.substr(slash + 1);
  Target t;
  auto ends_with = [&file](std::string_view suffix) {
    return file.size() > suffix.size() && file.substr(file.size() - suffix.size()) == suffix;
  };
  if (file == "index.mpd") {
    if (!(t.pipeline = streams.Find(std::string(prefix)))) return std::nullopt;
    t.kind = Target::kMpd;
    t.stream = prefix;
    return t;
  }
  if (file == "index.m3u8" || file == "index.ll.m3u8") {
    bool ll = file == "index.ll.m3u8";
    if ((t.pipeline = streams.Find(std::string(prefix)))) {
      t.kind = ll ? Target::kLlMaster : Target::kMaster;
      t.stream = prefix;
      return t;
    }
    t.kind = ll ? Target::kLlMedia : Target::kMedia;
  } else if (ends_with(".ts") && ParseMsn(file.substr(0, file.size() - 3), &t.msn)) {
    t.kind = Target::kSegment;
  } else if (file == "init.mp4") {
    t.kind = Target::kInit;
  } else if (ends_with(".m4s")) {
    std::string_view name = file.substr(0, file.size() - 4);
    size_t dot = name.find('.');
    int64_t part = 0;
    if (dot == std::string_view::npos) {
      if (!ParseMsn(name, &t.msn)) return std::nullopt;
      t.kind = Target::kM4s;
    } else {
      if (!ParseMsn(name.substr(0, dot), &t.msn) || !ParseMsn(name.substr(dot + 1), &part) ||
          part > 100'000) {
        return std::nullopt;
      }
      t.kind = Target::kPart;
      t.part = static_cast<int>(part);
    }
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

}  // namespace

// A rendered LL-HLS media playlist, shared by every request answered from the same window:
// when a publish releases thousands of held requests (P-4) the playlist is built and
// compressed once, not once per request.
struct RenderedPlaylist {
  std::weak_ptr<const RenditionWindow> window;  // what it was built from; not kept alive
  std::string plain;
  std::string gzip;
};

// The rendered playlists of one router: one entry per (stream, rendition, skip), replaced when
// the rendition's window changes. Entries do not keep windows alive; those whose window is
// gone (a newer window replaced it and nobody reads it, or the stream was removed) are
// dropped whenever the map has doubled since the last sweep, so it stays within about twice
// the live renditions. Thread-safe.
class LowLatencyPlaylistCache {
 public:
  std::shared_ptr<const RenderedPlaylist> Get(const SegmentStore& store, const std::string& stream,
                                              const std::shared_ptr<const RenditionWindow>& window,
                                              bool skip) {
    auto key = std::make_tuple(stream, window->info.name, skip);
    {
      absl::MutexLock lock(&mu_);
      auto it = entries_.find(key);
      if (it != entries_.end() && it->second->window.lock() == window) return it->second;
    }
    // Rendition reports read the other renditions too: a change there without a change here
    // is at most one part stale, which rendition reports tolerate.
    auto rendered = std::make_shared<RenderedPlaylist>();
    rendered->window = window;
    rendered->plain = LowLatencyMediaPlaylist(*window, store.Renditions(stream), skip);
    rendered->gzip = http::Gzip(rendered->plain);
    absl::MutexLock lock(&mu_);
    auto& slot = entries_[key];
    if (!slot || slot->window.lock() != window) slot = rendered;
    auto result = slot;
    if (entries_.size() >= sweep_at_) {
      std::erase_if(entries_, [](const auto& e) { return e.second->window.expired(); });
      sweep_at_ = std::max<size_t>(kMinSweep, 2 * entries_.size());
    }
    return result;
  }

 private:
  static constexpr size_t kMinSweep = 64;
  absl::Mutex mu_;
  std::map<std::tuple<std::string, std::string, bool>, std::shared_ptr<const RenderedPlaylist>>
      entries_ ABSL_GUARDED_BY(mu_);
  size_t sweep_at_ ABSL_GUARDED_BY(mu_) = kMinSweep;
};

namespace {

Waiters::TimePoint HoldDeadline(const SegmentStore& store, const StreamSettings& settings) {
  // S-12: a blocking request held longer than three target durations answers 503.
  return store.clock().Monotonic() + std::chrono::milliseconds(3 * settings.segment_ms);
}

void ServeLowLatencyPlaylist(const HlsContext& context, RequestContext& ctx, const Target& target,
                             Responder r) {
  const StreamSettings& settings = target.pipeline->settings();
  const std::string cors = settings.cors;
  auto request = ParseBlockingRequest(ctx.query);
  if (!request.ok()) {
    http::Response res = http::ErrorResponse(request.status());
    http::AddCors(res, cors);
    return r.Send(std::move(res));
  }
  auto window = context.store->Window(target.stream, target.rendition);
  if (!window || window->segments.empty()) return r.Send(NotFound("no such rendition (yet)", cors));
  int target_s = (settings.segment_ms + 999) / 1000;
  auto render = [context, target, request = *request, cors,
                 accepts_gzip = http::AcceptsGzip(ctx.request)](bool blocking) {
    auto w = context.store->Window(target.stream, target.rendition);
    auto rendered = context.playlists->Get(*context.store, target.stream, w, request.skip);
    int age = blocking ? 6 * ((w->info.target_duration_ms + 999) / 1000)  // S-15
                       : std::max(0, w->info.target_duration_ms / 2000);
    http::Response res{http::Status::ok, 11};
    res.set(http::beast_http::field::content_type, kPlaylistType);
    res.set(http::beast_http::field::cache_control, absl::StrCat("max-age=", age));
    res.set(http::beast_http::field::vary, "Accept-Encoding");
    if (accepts_gzip) {
      res.set(http::beast_http::field::content_encoding, "gzip");
      res.body() = rendered->gzip;
    } else {
      res.body() = rendered->plain;
    }
    http::AddCors(res, cors);
    res.prepare_payload();
    return res;
  };
  if (!request->msn) return r.Send(render(false));
  auto last = LastPosition(*window);
  auto wanted =
      BlockingTarget(*request, *last, window->info.target_duration_ms, window->info.part_target_ms);
  if (!wanted.ok()) {
    http::Response res = http::ErrorResponse(wanted.status());
    http::AddCors(res, cors);
    return r.Send(std::move(res));
  }
  if (wanted->ReachedBy(*last)) return r.Send(render(true));
  auto responder = std::make_shared<Responder>(std::move(r));
  auto status = context.store->Wait(
      target.stream, target.rendition, *wanted, ctx.executor,
      HoldDeadline(*context.store, settings),
      [responder, render, cors, target_s](Waiters::Outcome outcome) {
        switch (outcome) {
          case Waiters::Outcome::kPublished:
            return responder->Send(render(true));
          case Waiters::Outcome::kDeadline:
            return responder->Send(
                Unavailable(absl::StrCat("not published within ", 3 * target_s, " s"), cors));
          case Waiters::Outcome::kRemoved:
            return responder->Send(NotFound("the stream was removed", cors));
        }
      });
  if (!status.ok()) responder->Send(Unavailable(std::string(status.message()), cors));
}

// S-16: a DASH segment still in progress, sent with chunked transfer as its parts complete
// (each part is a moof + mdat, so the chunks add up to the finished .m4s byte for byte).
class ChunkedSegment : public std::enable_shared_from_this<ChunkedSegment> {
 public:
  ChunkedSegment(HlsContext context, Target target, std::shared_ptr<http::ChunkedWriter> writer,
                 boost::asio::any_io_executor executor)
      : context_(context),
        target_(std::move(target)),
        writer_(std::move(writer)),
        executor_(std::move(executor)) {}

  // Writes every part available past the last written, then waits for the next one.
  void Pump() {
    auto w = context_.store->Window(target_.stream, target_.rendition);
    if (!w || writer_->closed()) return writer_->Finish();
    if (const Segment* done = w->Find(target_.msn)) {
      for (; next_ < static_cast<int>(done->parts.size()); ++next_) {
        writer_->Write(done->parts[next_]->data);
      }
      return writer_->Finish();
    }
    if (w->open_msn == target_.msn) {
      for (; next_ < static_cast<int>(w->open_parts.size()); ++next_) {
        writer_->Write(w->open_parts[next_]->data);
      }
    } else {
      // Not open yet: only the segment right after the last complete one is worth waiting for.
      bool upcoming = next_ == 0 && !w->segments.empty() && w->open_msn < 0 &&
                      w->segments.back()->msn + 1 == target_.msn;
      if (!upcoming) return writer_->Finish();
    }
    auto self = shared_from_this();
    auto deadline = HoldDeadline(*context_.store, target_.pipeline->settings());
    auto status =
        context_.store->Wait(target_.stream, target_.rendition, Position{target_.msn, next_},
                             executor_, deadline, [self](Waiters::Outcome outcome) {
                               if (outcome == Waiters::Outcome::kPublished) {
                                 self->Pump();
                               } else {
                                 self->writer_->Finish();
                               }
                             });
    if (!status.ok()) writer_->Finish();
  }

 private:
  HlsContext context_;
  Target target_;
  std::shared_ptr<http::ChunkedWriter> writer_;
  boost::asio::any_io_executor executor_;
  int next_ = 0;
};

// A part or an fMP4 segment: served when held; the next due part (the preload hint) or the
// segment in progress is held until published; anything else is 404.
void ServeFragment(const HlsContext& context, RequestContext& ctx, const Target& target,
                   Responder r) {
  const StreamSettings& settings = target.pipeline->settings();
  const std::string cors = settings.cors;
  auto lookup = [context, target]() -> std::shared_ptr<const std::string> {
    auto w = context.store->Window(target.stream, target.rendition);
    if (!w) return nullptr;
    if (target.kind == Target::kPart) {
      const Part* p = w->FindPart(target.msn, target.part);
      return p ? p->data : nullptr;
    }
    const Segment* s = w->Find(target.msn);
    return s ? s->m4s : nullptr;
  };
  auto send = [cors, request = ctx.request](Responder& responder,
                                            std::shared_ptr<const std::string> data) {
    http::Response res = http::MediaResponse(request, std::move(data), kMp4Type);
    res.set(http::beast_http::field::cache_control, kImmutable);
    http::AddCors(res, cors);
    responder.Send(std::move(res));
  };
  if (auto data = lookup()) return send(r, std::move(data));
  auto window = context.store->Window(target.stream, target.rendition);
  auto last = window ? LastPosition(*window) : std::nullopt;
  if (!last) return r.Send(NotFound("no such object", cors));
  // Only the next due object may be waited for (S-13, L-7).
  Position wanted{target.msn, target.kind == Target::kPart ? target.part : -1};
  int per_segment = PartsPerSegment(window->info.target_duration_ms, window->info.part_target_ms);
  int64_t last_index = last->msn * per_segment + (last->part < 0 ? per_segment - 1 : last->part);
  bool next_part = target.kind == Target::kPart &&
                   (target.msn * per_segment + target.part == last_index + 1 ||
                    (last->part >= 0 && target.msn == last->msn && target.part == last->part + 1) ||
                    (last->part < 0 && target.msn == last->msn + 1 && target.part == 0));
  bool in_progress =
      target.kind == Target::kM4s &&
      (target.msn == window->open_msn || (window->open_msn < 0 && target.msn == last->msn + 1));
  if (in_progress) {
    http::Response header{http::Status::ok, 11};
    header.set(http::beast_http::field::content_type, kMp4Type);
    header.set(http::beast_http::field::cache_control, "no-store");
    http::AddCors(header, cors);
    auto writer = r.StartChunked(std::move(header));
    if (!writer) return;
    std::make_shared<ChunkedSegment>(context, target, std::move(writer), ctx.executor)->Pump();
    return;
  }
  if (!next_part) return r.Send(NotFound("no such object", cors));
  auto responder = std::make_shared<Responder>(std::move(r));
  auto status = context.store->Wait(
      target.stream, target.rendition, wanted, ctx.executor, HoldDeadline(*context.store, settings),
      [responder, lookup, send, cors](Waiters::Outcome outcome) {
        auto data = outcome == Waiters::Outcome::kPublished ? lookup() : nullptr;
        if (data) return send(*responder, std::move(data));
        if (outcome == Waiters::Outcome::kDeadline) {
          return responder->Send(Unavailable("not published in time", cors));
        }
        responder->Send(NotFound("no such object", cors));
      });
  if (!status.ok()) responder->Send(Unavailable(std::string(status.message()), cors));
}

// The requests a viewer opens a stream with (O-3): playlists and the MPD.
bool IsEntry(Target::Kind kind) {
  return kind == Target::kMaster || kind == Target::kMedia || kind == Target::kLlMaster ||
         kind == Target::kLlMedia || kind == Target::kMpd;
}

// A stream published by packagers: playlists and objects come from the origin store.
void ServeFromOrigin(OriginDelivery& origin, RequestContext& ctx, Responder r,
                     const Target& target) {
  switch (target.kind) {
    case Target::kMaster:
      return origin.ServePlaylist(ctx, std::move(r), target.stream, "");
    case Target::kMedia:
      return origin.ServePlaylist(ctx, std::move(r), target.stream, target.rendition);
    case Target::kInit:
      return origin.ServeObject(ctx, std::move(r), target.stream, target.rendition,
                                ObjectKey{ObjectKey::kInit, -1, -1});
    case Target::kSegment:
      return origin.ServeObject(ctx, std::move(r), target.stream, target.rendition,
                                ObjectKey{ObjectKey::kTs, target.msn, -1});
    case Target::kM4s:
      return origin.ServeObject(ctx, std::move(r), target.stream, target.rendition,
                                ObjectKey{ObjectKey::kM4s, target.msn, -1});
    case Target::kPart:
      return origin.ServeObject(ctx, std::move(r), target.stream, target.rendition,
                                ObjectKey{ObjectKey::kPart, target.msn, target.part});
    case Target::kLlMaster:
    case Target::kLlMedia:
    case Target::kMpd:
      break;
  }
  r.Send(NotFound("published streams are served as HLS (index.m3u8) only", "*"));
}

}  // namespace

void AddHlsRoutes(http::Router& router, HlsContext context) {
  if (!context.playlists) context.playlists = std::make_shared<LowLatencyPlaylistCache>();
  // UTCTiming for DASH players (S-16): this node's clock.
  router.Add({http::Verb::get}, "/time", [](RequestContext&, Responder r) {
    http::Response res = http::MakeResponse(
        http::Status::ok, DashTimeBody(UnixMillis(RealClock::Get().Now())), "text/plain");
    res.set(http::beast_http::field::cache_control, "no-store");
    http::AddCors(res, "*");
    r.Send(std::move(res));
  });
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
    if (context.origin && context.origin->Serves(target->stream)) {
      return ServeFromOrigin(*context.origin, ctx, std::move(r), *target);
    }
    OttSettings ott = context.ott ? context.ott->Settings(target->stream) : OttSettings{};
    if (ott.enabled && IsEntry(target->kind)) {
      if (auto pass = ctx.QueryParam("pass")) {
        // O-7, O-16: a viewer sent here by another member.
        if (auto refused = context.ott->AdmitPass(ctx, target->stream, *pass, cors, active)) {
          return r.Send(std::move(*refused));
        }
      } else if (!target->pipeline->Working()) {
        // O-3: a new viewer of a stream that is not working here goes to a member where it is.
        std::string_view path = ctx.path.substr(1 + target->stream.size() + 1);
        std::string location = context.ott->RedirectTarget(ctx, target->stream, ott, path);
        if (!location.empty()) {
          http::Response res{http::Status::found, 11};
          res.set(http::beast_http::field::location, location);
          res.set(http::beast_http::field::cache_control, "no-store");
          http::AddCors(res, cors);
          return r.Send(std::move(res));
        }
      }
    }
    // S-15: plain playlist responses live at most half a target duration.
    int playlist_age = std::max(0, settings.segment_ms / 2000);
    switch (target->kind) {
      case Target::kMaster: {
        // HLS-TS variants: the renditions with an MPEG-TS form ("a1" is CMAF only).
        auto renditions = context.store->Renditions(target->stream);
        std::erase_if(renditions, [](const auto& w) { return w->info.tracks.empty(); });
        std::string body;
        if (ott.enabled && renditions.size() == 1 && !renditions[0]->segments.empty()) {
          // O-6: a single-rendition OTT stream lists backup members for players that switch.
          body = context.ott
                     ->MasterWithBackups(ctx, target->stream, ott, StreamInfLine(*renditions[0]),
                                         renditions[0]->info.name)
                     .value_or("");
        }
        bool personal = !body.empty();
        if (body.empty()) body = MasterPlaylist(renditions);
        if (body.empty()) return r.Send(NotFound("the stream has no segment yet", cors));
        http::Response res = PlaylistResponse(ctx.request, std::move(body), playlist_age, cors);
        // Backups depend on the viewer (player, scheme, address, rotation, passes): never
        // to be cached and handed to another viewer.
        if (personal) res.set(http::beast_http::field::cache_control, "private, no-store");
        return r.Send(std::move(res));
      }
      case Target::kMedia: {
        auto window = context.store->Window(target->stream, target->rendition);
        if (!window || window->segments.empty()) {
          return r.Send(NotFound("no such rendition (yet)", cors));
        }
        if (ott.enabled && UnixMillis(RealClock::Get().Now()) - window->last_publish_unix_ms >
                               ott.stale_after_ms) {
          // O-3a: a stale playlist would keep the player here; a 404 moves it to a backup.
          return r.Send(NotFound("the stream stopped on this node", cors));
        }
        return r.Send(PlaylistResponse(ctx.request, MediaPlaylist(*window), playlist_age, cors));
      }
      case Target::kLlMaster: {
        std::string body = LowLatencyMasterPlaylist(context.store->Renditions(target->stream));
        if (body.empty()) return r.Send(NotFound("the stream has no segment yet", cors));
        return r.Send(PlaylistResponse(ctx.request, std::move(body), playlist_age, cors));
      }
      case Target::kMpd: {
        DashOptions options;
        options.now_unix_ms = UnixMillis(RealClock::Get().Now());
        std::string body = DashManifest(context.store->Renditions(target->stream), options);
        if (body.empty()) return r.Send(NotFound("the stream has no segment yet", cors));
        http::Response res{http::Status::ok, 11};
        res.set(http::beast_http::field::content_type, "application/dash+xml");
        res.set(http::beast_http::field::cache_control, absl::StrCat("max-age=", playlist_age));
        res.body() = std::move(body);
        http::AddCors(res, cors);
        res.prepare_payload();
        return r.Send(std::move(res));
      }
      case Target::kLlMedia:
        return ServeLowLatencyPlaylist(context, ctx, *target, std::move(r));
      case Target::kInit: {
        auto window = context.store->Window(target->stream, target->rendition);
        if (!window || !window->info.init) return r.Send(NotFound("no init segment (yet)", cors));
        http::Response res = http::MediaResponse(ctx.request, window->info.init, kMp4Type);
        res.set(http::beast_http::field::cache_control, "max-age=60");
        http::AddCors(res, cors);
        return r.Send(std::move(res));
      }
      case Target::kM4s:
      case Target::kPart:
        return ServeFragment(context, ctx, *target, std::move(r));
      case Target::kSegment: {
        auto window = context.store->Window(target->stream, target->rendition);
        const Segment* segment = window ? window->Find(target->msn) : nullptr;
        if (!segment || !segment->ts) return r.Send(NotFound("no such segment", cors));
        http::Response res = http::MediaResponse(ctx.request, segment->ts, kTsType);
        res.set(http::beast_http::field::cache_control, "max-age=86400, immutable");
        http::AddCors(res, cors);
        return r.Send(std::move(res));
      }
    }
  });
}

void ServePush(StreamManager* streams, RequestContext& ctx, std::shared_ptr<http::BodyReader> body,
               Responder r, const std::string& stream, bool take_over) {
  auto pipeline = streams->Find(stream);
  if (!pipeline) {
    return r.Send(http::ErrorResponse(
        absl::NotFoundError(absl::StrCat("stream \"", stream, "\" is not placed on this node"))));
  }
  auto session = pipeline->BeginPush(take_over);
  if (!session.ok()) {
    log::Warn("push_refused", {{"stream", stream},
                               {"client", ctx.client.ToString()},
                               {"error", session.status().message()}});
    return r.Send(http::ErrorResponse(session.status()));
  }
  log::Info("push_started",
            {{"stream", stream}, {"client", ctx.client.ToString()}, {"took_over", take_over}});
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
                                             std::span<const uint8_t> chunk,
                                             bool done) { self->OnChunk(status, chunk, done); });
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
        responder->Send(
            http::ErrorResponse(absl::AbortedError("another publisher took over this stream")));
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
}

}  // namespace meshwork::streamer
