#include "streamer/delivery/archive_routes.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "boost/asio/post.hpp"
#include "common/http/content.h"
#include "common/http/response.h"
#include "streamer/delivery/archive_mpd.h"
#include "streamer/delivery/ll_hls.h"
#include "streamer/delivery/responses.h"
#include "streamer/playlist/hls_writer.h"

namespace meshwork::streamer {

namespace {

using archive::ArchiveTarget;
using archive::Proto;
using archive::TrackKey;

constexpr size_t kMaxPlaylistSegments = 100'000;

http::Response BadRequest(std::string_view message) {
  return http::ErrorResponse(http::Status::bad_request, "bad_archive_request", message);
}

// "stream" or "stream/rendition" → the recorded stream and the rendition ("" for a master).
struct Resolved {
  std::string stream;
  std::string rendition;
  archive::DvrConfig config;
};
std::optional<Resolved> Resolve(const ArchiveContext& context, const std::string& prefix,
                                bool master_allowed) {
  if (master_allowed) {
    if (auto config = context.recorder->Config(prefix)) return Resolved{prefix, "", *config};
  }
  auto slash = prefix.rfind('/');
  if (slash == std::string::npos) return std::nullopt;
  std::string stream = prefix.substr(0, slash);
  std::string rendition = prefix.substr(slash + 1);
  if (!archive::SafeName(rendition)) return std::nullopt;
  auto config = context.recorder->Config(stream);
  if (!config) return std::nullopt;
  return Resolved{stream, rendition, *config};
}

std::string PeriodName(const ArchiveTarget& t) {
  return absl::StrCat("index-", t.from_ms / 1000, "-",
                      t.duration_ms ? std::to_string(*t.duration_ms / 1000) : "now",
                      t.proto == Proto::kFmp4 ? ".ll.m3u8" : ".m3u8");
}

// Sends an open archived file as the answer to `request` (Range honoured).
void SendOpenFile(const http::Request& request, std::shared_ptr<const http::OpenFile> file,
                  std::string_view content_type, http::Responder& responder) {
  http::Response header{http::Status::ok, 11};
  header.set(http::beast_http::field::cache_control, kImmutable);
  http::AddCors(header, "*");
  auto slice = http::PrepareMediaHeader(request, file->size(), content_type, header);
  if (!slice.send_body) return responder.Send(std::move(header));
  responder.SendFile(std::move(header), std::move(file), slice.offset, slice.length);
}

void ServeFile(const ArchiveContext& context, http::RequestContext& ctx, std::string path,
               std::string_view content_type, http::Responder responder) {
  if (context.files) {
    if (auto file = context.files->Find(path)) {
      return SendOpenFile(ctx.request, std::move(file), content_type, responder);
    }
  }
  // open/fstat may block on a busy disk: on the disk pool, never on the event loop.
  http::Request request = ctx.request;  // the header only (a GET has no body)
  auto token = context.shedder ? std::make_shared<Shedder::Token>(context.shedder) : nullptr;
  boost::asio::post(
      *context.disk, [files = context.files, path = std::move(path), content_type, token,
                      request = std::move(request), responder = std::move(responder)]() mutable {
        int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        struct stat st {};
        if (fd < 0 || ::fstat(fd, &st) != 0) {
          if (fd >= 0) ::close(fd);
          // Deleted by retention between the index lookup and the open.
          return responder.Send(NotFound("the archived segment is gone", "*"));
        }
        auto file = std::make_shared<http::OpenFile>(fd, static_cast<uint64_t>(st.st_size));
        if (files) files->Put(path, file);
        SendOpenFile(request, std::move(file), content_type, responder);
      });
}

// D-3: the static MPD, built on the disk pool (it reads each track's init and the head of
// the first segment of each period: ProbeArchiveMpd).
void ServeMpd(const ArchiveContext& context, http::RequestContext& ctx, const Resolved& resolved,
              int64_t from_ms, int64_t to_ms, int max_age, const std::string& carry,
              http::Responder responder) {
  http::Request request = ctx.request;
  auto token = context.shedder ? std::make_shared<Shedder::Token>(context.shedder) : nullptr;
  boost::asio::post(
      *context.disk, [index = context.index, root = resolved.config.root, stream = resolved.stream,
                      from_ms, to_ms, max_age, token, carry, request = std::move(request),
                      responder = std::move(responder)]() mutable {
        auto renditions = index->Renditions(stream, Proto::kFmp4);
        std::string reference;  // the first video rendition, else the first
        for (const auto& rendition : renditions) {
          auto probe =
              ProbeArchiveInit(root, *index, TrackKey{stream, Proto::kFmp4, rendition}, from_ms);
          if (probe && probe->info.is_video()) {
            reference = rendition;
            break;
          }
        }
        if (reference.empty() && !renditions.empty()) reference = renditions.front();
        std::vector<std::string> others;
        for (const auto& rendition : renditions) {
          if (rendition != reference) others.push_back(rendition);
        }
        auto periods = PlanArchiveMpd(*index, stream, reference, others, from_ms, to_ms);
        ProbeArchiveMpd(root, stream, periods);
        std::string body = ArchiveMpd(periods, carry);
        if (body.empty()) return responder.Send(NotFound("nothing recorded in that period", "*"));
        responder.Send(
            PlaylistResponse(request, std::move(body), max_age, "*", kMpdType, !carry.empty()));
      });
}

// The period's master playlist (ArchiveMasterPlaylist), built on the disk pool.
void ServeMaster(const ArchiveContext& context, http::RequestContext& ctx, const Resolved& resolved,
                 const ArchiveTarget& target, int64_t to_ms, int max_age, const std::string& carry,
                 http::Responder responder) {
  std::map<std::string, std::shared_ptr<const RenditionWindow>> live;
  for (const auto& w : context.store->Windows(resolved.stream)) live[w->info.name] = w;
  http::Request request = ctx.request;
  auto token = context.shedder ? std::make_shared<Shedder::Token>(context.shedder) : nullptr;
  boost::asio::post(
      *context.disk, [index = context.index, root = resolved.config.root, stream = resolved.stream,
                      live = std::move(live), target, to_ms, max_age, token, carry,
                      request = std::move(request), responder = std::move(responder)]() mutable {
        std::string body = ArchiveMasterPlaylist(*index, root, live, stream, target, to_ms, carry);
        if (body.empty()) return responder.Send(NotFound("nothing recorded in that period", "*"));
        responder.Send(PlaylistResponse(request, std::move(body), max_age, "*", kPlaylistType,
                                        !carry.empty()));
      });
}

}  // namespace

std::string ArchiveMasterPlaylist(
    const archive::ArchiveIndex& index, const std::filesystem::path& root,
    const std::map<std::string, std::shared_ptr<const RenditionWindow>>& live,
    const std::string& stream, const ArchiveTarget& t, int64_t to_ms,
    const std::string& uri_query) {
  const std::string name = PeriodName(t);
  std::vector<CmafRendition> renditions;
  for (const auto& rendition : index.Renditions(stream, t.proto)) {
    CmafRendition r;
    r.uri = absl::StrCat(rendition, "/", name);
    double peak = 0;
    const auto in_period =
        index.Range(TrackKey{stream, t.proto, rendition}, t.from_ms, to_ms, kMaxPlaylistSegments);
    // A rendition with nothing in the period (the ladder changed) is not offered: its playlist
    // would be a 404, and at the lowest bandwidth players would pick it first.
    if (in_period.empty()) continue;
    for (const auto& s : in_period) {
      peak = std::max(peak, s.size * 8000.0 / std::max<int64_t>(1, s.duration_ms));
    }
    r.variant.bandwidth = static_cast<uint64_t>(std::max<int64_t>(1, std::llround(peak)));
    if (t.proto == Proto::kFmp4) {
      std::optional<media::TrackInfo> track;
      if (auto it = live.find(rendition);
          it != live.end() && !it->second->info.cmaf_tracks.empty()) {
        track = it->second->info.cmaf_tracks.front();
      } else if (auto probe = ProbeArchiveInit(root, index, TrackKey{stream, t.proto, rendition},
                                               t.from_ms)) {
        track = probe->info;
      }
      if (track) {
        r.video = track->is_video();
        r.channels = track->channels;
        r.variant.codecs = track->codec_string;
      }
    }
    renditions.push_back(std::move(r));
  }
  if (renditions.empty()) return "";  // nothing recorded in the period
  if (t.proto == Proto::kFmp4) return CmafMaster(renditions, 7, uri_query);
  hls::Master master;  // MPEG-TS: each rendition carries its audio
  master.uri_query = uri_query;
  for (auto& r : renditions) {
    r.variant.uri = r.uri;
    master.variants.push_back(std::move(r.variant));
  }
  return hls::Write(master);
}

std::string ArchiveMediaPlaylist(const archive::ArchiveIndex& index, const TrackKey& track,
                                 int64_t from_ms, int64_t to_ms, bool vod,
                                 const std::string& uri_query) {
  auto segments = index.Range(track, from_ms, to_ms, kMaxPlaylistSegments);
  if (segments.empty()) return "";
  const bool cmaf = track.proto == Proto::kFmp4;
  hls::Media m;
  m.version = cmaf ? 7 : 3;
  int64_t target_ms = 0;
  for (const auto& s : segments) target_ms = std::max(target_ms, s.duration_ms);
  m.target_duration_s = static_cast<int>((target_ms + 999) / 1000);
  m.playlist_type = vod ? "VOD" : "EVENT";
  m.uri_query = uri_query;
  m.endlist = vod;
  std::optional<int64_t> init;
  const archive::ArchivedSegment* previous = nullptr;
  for (const auto& s : segments) {
    hls::SegmentLine line;
    line.discontinuity =
        previous && std::llabs(s.start_ms - previous->end_ms()) > kArchiveGapToleranceMs;
    if (cmaf) {
      auto wanted = index.InitFor(track, s.start_ms);
      if (wanted != init) {
        if (previous) line.discontinuity = true;  // a new init: a new timeline
        init = wanted;
        if (init) line.map_uri = absl::StrCat("dvr-init-", *init, ".mp4");
      }
    }
    line.program_date_time_ms = s.start_ms;
    line.duration90k = s.duration_ms * 90;
    line.uri = absl::StrCat("dvr-", s.start_ms, "-", s.duration_ms, ".",
                            std::string(archive::SegmentExtension(track.proto)));
    m.segments.push_back(std::move(line));
    previous = &s;
  }
  return hls::Write(m);
}

std::optional<std::string> ArchiveStreamOf(const ArchiveContext& context,
                                           const ArchiveTarget& target) {
  if (target.kind == ArchiveTarget::kBad) return std::nullopt;
  if (context.proxy && context.relay) {
    const std::string& prefix = target.prefix;
    for (std::string stream : {prefix, prefix.substr(0, prefix.rfind('/'))}) {
      if (context.relay->Relays(stream) && !context.recorder->Config(stream)) return stream;
    }
  }
  auto resolved = Resolve(context, target.prefix, target.kind == ArchiveTarget::kPlaylist);
  if (!resolved || (target.dash && !resolved->rendition.empty())) return std::nullopt;
  return resolved->stream;
}

void ServeArchive(const ArchiveContext& context, http::RequestContext& ctx,
                  const ArchiveTarget& target, http::Responder r, const std::string& carry) {
  if (target.kind == ArchiveTarget::kBad) return r.Send(BadRequest(target.error));
  if (context.shedder && context.shedder->Shed(RequestClass::kDvr)) {  // D-7
    return r.Send(ShedResponse("the node is shedding archive reads", "*"));
  }
  if (context.proxy && context.relay) {
    // An edge relaying the stream: "stream/…" or "stream/rendition/…" (S-19, D-3).
    std::string prefix = target.prefix;
    for (std::string stream : {prefix, prefix.substr(0, prefix.rfind('/'))}) {
      if (context.relay->Relays(stream) && !context.recorder->Config(stream)) {
        return context.proxy->Serve(stream, ctx.request, ctx.path, std::move(r));
      }
    }
  }
  auto resolved = Resolve(context, target.prefix, target.kind == ArchiveTarget::kPlaylist);
  // An MPD lists every rendition of the stream: its prefix is the stream, never a rendition.
  if (resolved && target.dash && !resolved->rendition.empty()) resolved.reset();
  if (!resolved && context.central) {
    // Z-22: no view of the stream here: central knows which node has it (D-5 applies there).
    std::string_view below = ctx.path.substr(std::min(ctx.path.size(), 2 + target.prefix.size()));
    return context.central->Redirect(ctx, target.prefix, std::string(below), std::move(r));
  }
  if (!resolved) return r.Send(NotFound("no archive of this stream on this node", "*"));
  if (!archive::Records(resolved->config, target.proto)) {
    return r.Send(
        NotFound(absl::StrCat("this stream's archive has no ",
                              std::string(archive::ProtoName(target.proto)), " recording"),
                 "*"));
  }
  int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(context.clock->Now().time_since_epoch())
          .count();
  if (target.kind == ArchiveTarget::kPlaylist) {
    int64_t depth_ms = resolved->config.depth_s * 1000;
    if (target.duration_ms && *target.duration_ms > depth_ms) {
      return r.Send(BadRequest(
          absl::StrCat("duration is over the archive depth (", resolved->config.depth_s, " s)")));
    }
    bool vod = target.duration_ms.has_value();
    int64_t to_ms = vod ? target.from_ms + *target.duration_ms : now_ms;
    if (context.ott && !ctx.QueryParam("pass")) {  // D-5 (a member's redirect is final)
      auto decision = context.ott->ArchiveHolder(
          ctx, resolved->stream, std::string(archive::ProtoName(target.proto)), target.from_ms,
          to_ms, context.index->Extent(resolved->stream, target.proto),
          ctx.path.substr(1 + resolved->stream.size() + 1));
      if (decision.kind == OttGate::ArchiveDecision::kNone) {
        return r.Send(NotFound("no member of the group has recorded that period", "*"));
      }
      if (decision.kind == OttGate::ArchiveDecision::kRedirect) {
        http::Response res{http::Status::found, 11};
        res.set(http::beast_http::field::location, decision.location);
        res.set(http::beast_http::field::cache_control, "no-store");
        http::AddCors(res, "*");
        return r.Send(std::move(res));
      }
    }
    // A VOD period that has ended is final; an event playlist changes with each segment.
    int max_age = vod && to_ms < now_ms ? 60 : 1;
    if (target.dash)
      return ServeMpd(context, ctx, *resolved, target.from_ms, to_ms, max_age, carry, std::move(r));
    if (resolved->rendition.empty()) {
      return ServeMaster(context, ctx, *resolved, target, to_ms, max_age, carry, std::move(r));
    }
    std::string body = ArchiveMediaPlaylist(
        *context.index, TrackKey{resolved->stream, target.proto, resolved->rendition},
        target.from_ms, to_ms, vod, carry);
    if (body.empty()) return r.Send(NotFound("nothing recorded in that period", "*"));
    return r.Send(PlaylistResponse(ctx.request, std::move(body), max_age, "*", kPlaylistType,
                                   !carry.empty()));
  }
  TrackKey track{resolved->stream, target.proto, resolved->rendition};
  auto dir = archive::TrackDir(resolved->config.root, track.stream, track.proto, track.rendition);
  if (target.kind == ArchiveTarget::kInit) {
    if (context.index->InitFor(track, target.start_ms) != target.start_ms) {
      return r.Send(NotFound("no such archived init segment", "*"));
    }
    return ServeFile(context, ctx, archive::InitPath(dir, target.start_ms).string(), kMp4Type,
                     std::move(r));
  }
  auto segment = context.index->Find(track, target.start_ms);
  if (!segment || segment->duration_ms != target.segment_duration_ms) {
    return r.Send(NotFound("no such archived segment", "*"));
  }
  ServeFile(
      context, ctx,
      archive::SegmentPath(dir, track.proto, segment->start_ms, segment->duration_ms).string(),
      target.proto == Proto::kTs ? kTsType : kMp4Type, std::move(r));
}

}  // namespace meshwork::streamer
