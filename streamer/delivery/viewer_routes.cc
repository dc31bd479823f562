#include "streamer/delivery/viewer_routes.h"

#include "absl/strings/str_cat.h"
#include "common/http/content.h"
#include "common/http/response.h"
#include "streamer/access/access_gate.h"
#include "streamer/delivery/archive_routes.h"
#include "streamer/delivery/dash.h"
#include "streamer/delivery/ll_hls.h"
#include "streamer/delivery/media_bodies.h"
#include "streamer/delivery/origin_routes.h"
#include "streamer/delivery/playlists.h"
#include "streamer/delivery/responses.h"
#include "streamer/delivery/shedder.h"
#include "streamer/delivery/streamed_segment.h"
#include "streamer/delivery/viewer_path.h"
#include "streamer/ott/ott_gate.h"
#include "streamer/relay/relay.h"

namespace meshwork::streamer {

using http::RequestContext;
using http::Responder;

namespace {

// What a viewer path names (viewer_path.h), with the stream it names and what admission
// found for this viewer.
struct Target : ViewerPath {
  std::shared_ptr<StreamPipeline> pipeline;
  std::string carry;        // the query every URI written for this viewer carries
  std::string carry_token;  // the same for URIs that lead to another node
  std::string login;        // the viewer's login, and the most sessions it may hold here
  uint64_t max_sessions = 0;
  bool relayed = false;  // S-19: this node relays the stream (asked once per request)
};

std::optional<Target> Resolve(std::string_view path, const StreamManager& streams) {
  std::optional<Target> t(std::in_place);  // parsed in place: no string moved (P-5)
  auto is_stream = [&](std::string_view name) {
    t->pipeline = streams.Find(name);
    return t->pipeline != nullptr;
  };
  // The last lookup was the stream's, and found it. Every path returns `t`, so it is built in
  // the caller's storage (a second returned object would make it a move of five strings).
  if (!ParseViewerPath(path, is_stream, *t)) t.reset();
  return t;
}

// S-12: a blocking request held longer than three target durations answers 503.
Waiters::TimePoint HoldDeadline(const OriginStore& store, int segment_ms) {
  return store.clock().Monotonic() + HoldBound(segment_ms);
}

void ServeLowLatencyPlaylist(const ViewerContext& context, RequestContext& ctx,
                             const Target& target, Responder r) {
  const StreamConfig& settings = target.pipeline->config();
  const std::string cors = settings.cors;
  auto request = ParseBlockingRequest(ctx.query);
  if (!request.ok()) {
    http::Response res = http::ErrorResponse(request.status());
    http::AddCors(res, cors);
    return r.Send(std::move(res));
  }
  auto window = context.store->Window(target.stream, target.rendition);
  if (!window || window->segments.empty() || !window->has_cmaf) {
    return r.Send(NotFound("no such rendition (yet)", cors));
  }
  int target_s = (settings.segment_ms + 999) / 1000;
  // Answers with the window's current playlist; the body is the shared rendering (P-4: a
  // publish that releases thousands of held requests neither renders nor copies per request).
  auto answer = [context, target, request = *request, cors,
                 accepts_gzip = http::AcceptsGzip(ctx.request)](Responder& out, bool blocking) {
    auto w = context.store->Window(target.stream, target.rendition);
    if (!w) return out.Send(NotFound("the stream was removed", cors));
    const bool carried = !target.carry.empty();
    auto rendered =
        RenderedMedia(*context.store, target.stream, *w,
                      request.skip ? MediaForm::kLowLatencyDelta : MediaForm::kLowLatency, carried);
    int age = blocking ? 6 * ((w->info.target_duration_ms + 999) / 1000)  // S-15
                       : std::max(0, w->info.target_duration_ms / 2000);
    auto view = context.store->View(target.stream);
    SendMediaPlaylist(out, *rendered, target.carry, accepts_gzip, age, cors,
                      view ? view->notifications.get() : nullptr);
  };
  auto last = window->Last();
  if (!request->msn) {
    // P-9: a player tuning in, held for the next part when it is due soon enough.
    const std::optional<int64_t> hold_ms =
        request->skip || !last
            ? std::nullopt
            : TuneInHoldMs(context.store->NowMs() - window->last_publish_unix_ms,
                           window->info.part_target_ms, context.tune_in_hold_pct);
    if (!hold_ms) return answer(r, false);
    // After a segment's last part (its .m4s a moment behind), the next is the next segment's.
    const bool segment_done =
        last->part < 0 || (!window->open_parts.empty() && window->open_parts.back()->last);
    const Position next =
        segment_done ? Position{last->msn + 1, 0} : Position{last->msn, last->part + 1};
    auto responder = std::make_shared<Responder>(std::move(r));
    auto status = context.store->WaitPosition(
        target.stream, target.rendition, next, ctx.executor,
        context.store->clock().Monotonic() + std::chrono::milliseconds(*hold_ms),
        [responder, answer, cors](Waiters::Outcome outcome) {
          if (outcome == Waiters::Outcome::kRemoved) {
            return responder->Send(NotFound("the stream was removed", cors));
          }
          answer(*responder, false);  // published, or the deadline: the playlist as it is
        });
    if (!status.ok()) answer(*responder, false);  // no room to wait: at once
    return;
  }
  auto wanted =
      BlockingTarget(*request, *last, window->info.target_duration_ms, window->info.part_target_ms);
  if (!wanted.ok()) {
    http::Response res = http::ErrorResponse(wanted.status());
    http::AddCors(res, cors);
    return r.Send(std::move(res));
  }
  if (wanted->ReachedBy(*last)) return answer(r, true);
  auto responder = std::make_shared<Responder>(std::move(r));
  auto status = context.store->WaitPosition(
      target.stream, target.rendition, *wanted, ctx.executor,
      HoldDeadline(*context.store, settings.segment_ms),
      [responder, answer, cors, target_s](Waiters::Outcome outcome) {
        switch (outcome) {
          case Waiters::Outcome::kPublished:
            return answer(*responder, true);
          case Waiters::Outcome::kDeadline:
            return responder->Send(
                Unavailable(absl::StrCat("not published within ", 3 * target_s, " s"), cors));
          case Waiters::Outcome::kRemoved:
            return responder->Send(NotFound("the stream was removed", cors));
        }
      });
  if (!status.ok()) responder->Send(Unavailable(std::string(status.message()), cors));
}

// The requests a viewer opens a stream with (O-3): playlists and the MPD.
bool IsEntry(Target::Kind kind) {
  return kind == Target::kMaster || kind == Target::kMedia || kind == Target::kLlMaster ||
         kind == Target::kLlMedia || kind == Target::kMpd;
}

// S-18: the protocol a request names — playlists and manifests, MPEG-TS segments (HLS only)
// and parts (LL-HLS only); empty for init and CMAF segments, which LL-HLS and DASH share.
std::string_view ProtocolOf(Target::Kind kind) {
  switch (kind) {
    case Target::kMaster:
    case Target::kMedia:
    case Target::kSegment:
      return "hls";
    case Target::kLlMaster:
    case Target::kLlMedia:
    case Target::kPart:
      return "ll-hls";
    case Target::kMpd:
      return "dash";
    case Target::kInit:
    case Target::kM4s:
      return {};
  }
  return {};
}

ObjectKey KeyOf(const Target& t) {
  switch (t.kind) {
    case Target::kInit:
      return ObjectKey{ObjectKey::kInit, -1, -1};
    case Target::kSegment:
      return ObjectKey{ObjectKey::kTs, t.msn, -1};
    case Target::kM4s:
      return ObjectKey{ObjectKey::kM4s, t.msn, -1};
    default:
      return ObjectKey{ObjectKey::kPart, t.msn, t.part};
  }
}

// S-7 (LiveEdgeWorking) over whatever filled the store: local packager, relay or packagers.
bool Working(const ViewerContext& context, const Target& target) {
  return LiveEdgeWorking(context.store->LastPublishMs(target.stream), context.store->NowMs(),
                         target.pipeline->config().segment_ms);
}

// The GET of a viewer object or playlist of `target` (every stream, S-16/S-19).
void ServeViewerGet(const ViewerContext& context, RequestContext& ctx, const Target& target_ref,
                    Responder r);
// A relayed stream with nothing in the store yet: waits (up to three target durations) for
// the relay's first complete segment.
void HoldForRelay(const ViewerContext& context, RequestContext& ctx, const Target& target,
                  Responder r);
// The first rendition `target` needs that has no segment here yet: its own, or for a master
// every rendition the relay follows (v1 until it knows them); nullopt when none.
std::optional<std::string> ColdRendition(const ViewerContext& context, const Target& target);
void HoldForRelayUntil(const ViewerContext& context, RequestContext& ctx, const Target& target,
                       std::shared_ptr<Responder> responder, Waiters::TimePoint deadline);

// S-18: how long a play session stays known after its last request.
std::chrono::milliseconds SessionLifetime(const StreamConfig& settings) {
  return std::chrono::milliseconds(2 * settings.segment_ms);
}

// what the access verdict tells the rest of the request.
void Admit(Target& target, AccessGate::Result&& verdict) {
  target.carry = std::move(verdict.carry);
  target.carry_token = std::move(verdict.carry_token);
  target.login = std::move(verdict.login);
  target.max_sessions = verdict.max_sessions;
}

// An admitted request of a stream this node serves or relays.
void ServeAdmitted(const ViewerContext& context, RequestContext& ctx, const Target& target,
                   Responder r) {
  if (target.relayed) {
    // S-19, issue 30 "cold start held": a stream this edge relays; the first request starts
    // the relay, and a request whose renditions have no segment here yet waits for them (up
    // to three target durations) instead of a 404, then is answered like any other.
    context.relay->Touch(target.stream);
    if (ColdRendition(context, target)) return HoldForRelay(context, ctx, target, std::move(r));
  }
  ServeViewerGet(context, ctx, target, std::move(r));
}

}  // namespace

void AddViewerRoutes(http::Router& router, ViewerContext context) {
  // UTCTiming for DASH players (S-16): this node's clock.
  router.Add({http::Verb::get}, "/time", [context](RequestContext&, Responder r) {
    http::Response res =
        http::MakeResponse(http::Status::ok, DashTimeBody(context.store->NowMs()), "text/plain");
    res.set(http::beast_http::field::cache_control, "no-store");
    http::AddCors(res, "*");
    r.Send(std::move(res));
  });
  router.Add({http::Verb::options}, "/{path...}", [context](RequestContext& ctx, Responder r) {
    auto target = Resolve(ctx.path, *context.streams);
    r.Send(http::PreflightResponse(ctx.request,
                                   target ? target->pipeline->config().cors : std::string("*")));
  });
  router.Add({http::Verb::get}, "/{path...}", [context](RequestContext& ctx, Responder r) {
    if (context.archive) {
      auto archived = archive::ParseArchiveTarget(ctx.path);
      if (archived.kind != archive::ArchiveTarget::kNotArchive) {
        std::string carry;
        // archive reads of a protected stream need a token with `dvr`, checked on
        // the stream whose archive would be served (a stream unknown here is checked where
        // central's Route sends the viewer).
        auto archive_stream =
            context.access ? ArchiveStreamOf(*context.archive, archived) : std::nullopt;
        if (archive_stream) {
          const std::string& stream = *archive_stream;
          auto pipeline = context.streams->Find(stream);
          // Recorded here but no policy yet (the stream's configuration is being applied):
          // refused, not served open (A-1 fails closed).
          if (!pipeline) return r.Send(NotFound("no such stream on this node (yet)", "*"));
          auto verdict = context.access->Check(ctx, stream, true, pipeline->config().cors);
          if (verdict.ask) {  // the backend decides, asynchronously
            verdict.ask->query.protocol = "archive";
            auto responder = std::make_shared<Responder>(std::move(r));
            // `ctx` stays valid until the responder is used (types.h).
            return context.access->Resolve(
                std::move(*verdict.ask), SessionLifetime(pipeline->config()), ctx.executor,
                [context, &ctx, archived, responder](AccessGate::Result v) {
                  if (v.refusal) return responder->Send(std::move(*v.refusal));
                  ServeArchive(*context.archive, ctx, archived, std::move(*responder), v.carry);
                });
          }
          if (verdict.refusal) return r.Send(std::move(*verdict.refusal));
          carry = std::move(verdict.carry);
        }
        return ServeArchive(*context.archive, ctx, archived, std::move(r), carry);
      }
    }
    auto target = Resolve(ctx.path, *context.streams);
    if (!target && context.central) {
      if (auto stream = CentralRedirect::EntryStream(ctx.path)) {
        std::string file(ctx.path.substr(ctx.path.rfind('/') + 1));
        return context.central->Redirect(ctx, *std::move(stream), std::move(file), std::move(r));
      }
    }
    if (!target) return r.Send(NotFound("no such stream or object on this node", "*"));
    target->relayed = context.relay && context.relay->Relays(target->stream);
    if (context.access) {
      // every viewer request of a protected stream, before anything is served.
      auto verdict =
          context.access->Check(ctx, target->stream, false, target->pipeline->config().cors);
      if (verdict.ask) {  // the backend decides, asynchronously
        verdict.ask->query.protocol = std::string(ProtocolOf(target->kind));
        auto responder = std::make_shared<Responder>(std::move(r));
        auto active = SessionLifetime(target->pipeline->config());
        // `ctx` stays valid until the responder is used (types.h).
        return context.access->Resolve(
            std::move(*verdict.ask), active, ctx.executor,
            [context, &ctx, target = *std::move(target), responder](AccessGate::Result v) mutable {
              if (v.refusal) return responder->Send(std::move(*v.refusal));
              Admit(target, std::move(v));
              ServeAdmitted(context, ctx, target, std::move(*responder));
            });
      }
      if (verdict.refusal) return r.Send(std::move(*verdict.refusal));
      Admit(*target, std::move(verdict));
    }
    ServeAdmitted(context, ctx, *target, std::move(r));
  });
}

namespace {

void ServeViewerGet(const ViewerContext& context, RequestContext& ctx, const Target& target_ref,
                    Responder r) {
  {
    const Target* target = &target_ref;
    const StreamConfig& settings = target->pipeline->config();
    const std::string& cors = settings.cors;
    auto active = SessionLifetime(settings);  // S-18
    std::string_view agent;
    if (auto ua = ctx.request.find(http::beast_http::field::user_agent); ua != ctx.request.end()) {
      agent = ua->value();
    }
    // A CMAF object is an LL-HLS player's only after a playlist, which made its session: one
    // without a session is a DASH player's (S-18).
    switch (context.sessions->Touch(target->stream, ProtocolOf(target->kind), ctx.client, agent,
                                    active, {target->login, target->max_sessions}, "dash")) {
      case PlaySessions::Touched::kOverLimit:
        return r.Send(context.access->SessionLimit(target->stream, cors));
      case PlaySessions::Touched::kNew:
        if (context.access) context.access->CountAdmitted(target->stream);
        break;
      case PlaySessions::Touched::kKnown:
        break;
    }
    // An edge relaying the stream is not a member of its OTT group: no gate there (S-19).
    bool relayed = target->relayed;
    OttSettings ott =
        context.ott && !relayed ? context.ott->Settings(target->stream) : OttSettings{};
    if (ott.enabled && IsEntry(target->kind)) {
      if (auto pass = ctx.QueryParam("pass")) {
        // O-7, O-16: a viewer sent here by another member.
        if (auto refused = context.ott->AdmitPass(ctx, target->stream, *pass, cors, active)) {
          return r.Send(std::move(*refused));
        }
      } else if (!Working(context, *target)) {
        // O-3: a new viewer of a stream that is not working here goes to a member where it is.
        std::string_view path = ctx.path.substr(1 + target->stream.size() + 1);
        std::string location = context.ott->RedirectTarget(ctx, target->stream, ott, path);
        if (!location.empty()) location = hls::WithQuery(location, target->carry_token);
        if (!location.empty()) {
          http::Response res{http::Status::found, 11};
          res.set(http::beast_http::field::location, location);
          res.set(http::beast_http::field::cache_control, "no-store");
          http::AddCors(res, cors);
          return r.Send(std::move(res));
        }
      }
    }
    // L-16: playlists and manifests (the entries; objects are shed by OriginDelivery) are
    // live reads, class 2.
    if (context.shedder && IsEntry(target->kind) && context.shedder->Shed(RequestClass::kLive)) {
      return r.Send(ShedResponse("the node is shedding load", cors));
    }
    // S-15: plain playlist responses live at most half a target duration.
    int playlist_age = std::max(0, settings.segment_ms / 2000);
    const std::string& carry = target->carry;
    auto playlist = [&](std::string body, std::string_view type = kPlaylistType) {
      http::Response res =
          PlaylistResponse(ctx.request, std::move(body), playlist_age, cors, type, !carry.empty());
      if (auto view = context.store->View(target->stream); view && view->notifications) {
        res.set("X-Stream-Notifications", *view->notifications);  // L-10
      }
      return res;
    };
    switch (target->kind) {
      case Target::kMaster: {
        // HLS-TS variants: the renditions with an MPEG-TS form ("a1" is CMAF only).
        auto renditions = context.store->Windows(target->stream);
        bool any_ts = std::any_of(renditions.begin(), renditions.end(),
                                  [](const auto& w) { return w->has_ts; });
        if (any_ts) std::erase_if(renditions, [](const auto& w) { return !w->has_ts; });
        std::string body;
        // CS-1: with steering, every candidate node is a pathway (the O-6 backups among them).
        const auto steering =
            context.ott ? context.ott->Pathways(ctx, target->stream) : std::nullopt;
        const hls::Steering* pathways = steering ? &*steering : nullptr;
        if (!steering && ott.enabled && renditions.size() == 1 &&
            !renditions[0]->segments.empty()) {
          // O-6: a single-rendition OTT stream lists backup members for players that switch.
          body = context.ott
                     ->MasterWithBackups(ctx, target->stream, ott, TsVariant(*renditions[0]),
                                         renditions[0]->info.name, target->carry_token)
                     .value_or("");
        }
        bool personal = !body.empty() || steering;
        if (body.empty()) {
          // pathways lead to other nodes, where this node's session id means nothing:
          // their URIs (and so all of them) carry the token itself.
          const std::string& query = pathways ? target->carry_token : carry;
          // A stream published as CMAF only: its renditions as the CMAF master lists them
          // (an audio group, S-16a), or plainly when their tracks are not known.
          if (!any_ts) {
            body = LowLatencyMasterPlaylist(renditions, /*low_latency=*/false, query, pathways);
          }
          if (body.empty()) body = MasterPlaylist(renditions, query, pathways);
        }
        if (body.empty()) return r.Send(NotFound("the stream has no segment yet", cors));
        http::Response res = playlist(std::move(body));
        // Backups depend on the viewer (player, scheme, address, rotation, passes): never
        // to be cached and handed to another viewer.
        if (personal) res.set(http::beast_http::field::cache_control, "private, no-store");
        return r.Send(std::move(res));
      }
      case Target::kMedia: {
        auto window = context.store->Window(target->stream, target->rendition);
        if (!window || window->segments.empty()) {
          return r.Send(NotFound("no such rendition (yet)", cors));  // L-6
        }
        if (ott.enabled &&
            context.store->NowMs() - window->last_publish_unix_ms > ott.stale_after_ms) {
          // O-3a: a stale playlist would keep the player here; a 404 moves it to a backup.
          return r.Send(NotFound("the stream stopped on this node", cors));
        }
        auto rendered = RenderedMedia(*context.store, target->stream, *window, MediaForm::kLive,
                                      !carry.empty());
        if (rendered->plain->empty()) return r.Send(NotFound("no segment to list", cors));
        auto view = context.store->View(target->stream);
        return SendMediaPlaylist(r, *rendered, carry, http::AcceptsGzip(ctx.request), playlist_age,
                                 cors, view ? view->notifications.get() : nullptr);
      }
      case Target::kLlMaster: {
        const auto steering =
            context.ott ? context.ott->Pathways(ctx, target->stream) : std::nullopt;  // CS-1
        // with pathways (other nodes) the URIs carry the token, not this node's session id.
        std::string body = LowLatencyMasterPlaylist(context.store->Windows(target->stream), true,
                                                    steering ? target->carry_token : carry,
                                                    steering ? &*steering : nullptr);
        if (body.empty()) return r.Send(NotFound("the stream has no segment yet", cors));
        http::Response res = playlist(std::move(body));
        // Pathways depend on the viewer's scheme and address (O-11, O-13).
        if (steering) res.set(http::beast_http::field::cache_control, "private, no-store");
        return r.Send(std::move(res));
      }
      case Target::kMpd: {
        DashOptions options;
        options.now_unix_ms = context.store->NowMs();
        options.uri_query = carry;
        // CS-1: pathways with a steering server; S-17: else an OTT stream's backups.
        if (auto steering =
                context.ott ? context.ott->Pathways(ctx, target->stream) : std::nullopt) {
          options.pathways = std::move(steering->pathways);
          if (!steering->self_base.empty()) options.pathways.front().base = steering->self_base;
          options.steering_uri = hls::WithQuery(steering->server_uri, "format=dash");
        } else if (context.ott) {
          options.pathways = context.ott->MpdBackups(ctx, target->stream, ott);
        }
        // the segment template is resolved against other nodes' BaseURLs too: with any
        // pathway it carries the token, not this node's session id.
        if (!options.pathways.empty()) options.uri_query = target->carry_token;
        std::string body = DashManifest(context.store->Windows(target->stream), options);
        if (body.empty()) return r.Send(NotFound("the stream has no segment yet", cors));
        http::Response res = playlist(std::move(body), kMpdType);
        if (!options.pathways.empty()) {
          res.set(http::beast_http::field::cache_control, "private, no-store");  // per viewer
        }
        return r.Send(std::move(res));
      }
      case Target::kLlMedia:
        return ServeLowLatencyPlaylist(context, ctx, *target, std::move(r));
      case Target::kM4s: {
        if (StreamsAsParts(*context.store, target->stream, target->rendition, target->msn)) {
          http::Response header{http::Status::ok, 11};
          header.set(http::beast_http::field::content_type, kMp4Type);
          header.set(http::beast_http::field::cache_control, "no-store");
          http::AddCors(header, cors);
          auto writer = r.StartChunked(std::move(header));
          if (!writer) return;
          StreamSegmentParts(context.store, target->stream, target->rendition, target->msn,
                             HoldBound(settings.segment_ms), std::move(writer), ctx.executor);
          return;
        }
        break;
      }
      case Target::kInit:
      case Target::kSegment:
      case Target::kPart:
        break;
    }
    context.objects->ServeObject(ctx, std::move(r), target->stream, target->rendition,
                                 KeyOf(*target));
  }
}

void HoldForRelay(const ViewerContext& context, RequestContext& ctx, const Target& target,
                  Responder r) {
  HoldForRelayUntil(context, ctx, target, std::make_shared<Responder>(std::move(r)),
                    HoldDeadline(*context.store, target.pipeline->config().segment_ms));
}

std::optional<std::string> ColdRendition(const ViewerContext& context, const Target& target) {
  std::vector<std::string> needed{target.rendition};
  if (target.rendition.empty()) {
    needed = context.relay->Renditions(target.stream);
    if (needed.empty()) needed = {"v1"};
  }
  for (const auto& name : needed) {
    auto w = context.store->Window(target.stream, name);
    if (!w || w->segments.empty()) return name;
  }
  return std::nullopt;
}

void HoldForRelayUntil(const ViewerContext& context, RequestContext& ctx, const Target& target,
                       std::shared_ptr<Responder> responder, Waiters::TimePoint deadline) {
  auto cold = ColdRendition(context, target);
  if (!cold) return ServeViewerGet(context, ctx, target, std::move(*responder));
  std::string cors = target.pipeline->config().cors;
  // The rendition's first complete segment: the one whose parts are arriving, else anything.
  Position wanted{0, 0};
  if (auto w = context.store->Window(target.stream, *cold)) {
    if (auto last = w->Last()) wanted = Position{last->part < 0 ? last->msn + 1 : last->msn, -1};
  }
  auto status = context.store->WaitPosition(
      target.stream, *cold, wanted, ctx.executor, deadline,
      // `ctx` stays valid until the responder is used (types.h).
      [context, &ctx, target, responder, cors, deadline](Waiters::Outcome outcome) {
        if (outcome == Waiters::Outcome::kPublished) {
          // Parts come before their segment, and a master waits for every rendition.
          return HoldForRelayUntil(context, ctx, target, responder, deadline);
        }
        // The deadline: what is here is answered (a master of the renditions that came);
        // nothing at all is a 503.
        if (context.store->Windows(target.stream).empty()) {
          return responder->Send(
              Unavailable("the relay has no upstream for this stream yet", cors));
        }
        ServeViewerGet(context, ctx, target, std::move(*responder));
      });
  if (!status.ok()) responder->Send(Unavailable(std::string(status.message()), cors));
}

}  // namespace

}  // namespace meshwork::streamer
