#include "streamer/relay/stream_relay.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/crypto/base64url.h"
#include "common/http/gunzip.h"
#include "common/json/bounded_json.h"
#include "common/log/log.h"
#include "streamer/media/mp4_probe.h"

namespace meshwork::streamer::relay {

namespace {

// S-21: nodes on one timeline give a segment the same date-time from the stream's anchor
// (S-5); a second leaves room for rounding and nothing for another timeline's segments.
constexpr int64_t kSameTimelineToleranceMs = 1000;
// S-6, S-21: one timeline starts a segment at the same PTS on every node; an audio
// rendition's segment starts within one audio frame of the video's (the fingerprint's).
constexpr int64_t kSameStartTolerance90k = 90 * 50;

}  // namespace

Relay::StreamRelay::StreamRelay(Relay* relay, std::string stream)
    : relay_(relay),
      stream_(std::move(stream)),
      upstreams_(stream_, &relay->upstreams_, relay->clock_) {
  Touch();
  control_ = std::thread([this] { Run(); });
}

Relay::StreamRelay::~StreamRelay() {
  stop_.store(true);
  stopping_.Notify();
  if (control_.joinable()) control_.join();
}

void Relay::StreamRelay::Run() {
  log::Info("relay_started", {{"stream", stream_}});
  std::vector<std::thread> renditions;
  http::KeepAliveClient client;
  while (Running() && renditions.empty()) {
    if (!Connect()) {
      Pause(std::chrono::milliseconds(500));
      continue;
    }
    std::string base = Base();
    auto master = Get(client, base, absl::StrCat("/", stream_, "/index.ll.m3u8"),
                      relay_->options_.fetch_timeout);
    if (!master.ok()) {
      NextUpstream(base);
      continue;
    }
    auto names = ParseMasterRenditions(**master);
    {
      absl::MutexLock lock(&mu_);
      renditions_ = names;
    }
    // S-25: the audio rendition ("a1") is muxed into each video rendition's MPEG-TS here.
    std::string audio;
    for (const auto& name : names) {
      if (name.starts_with("a")) audio = name;
    }
    ts_maker_ = std::make_unique<TsMaker>(audio, relay_->ts_counters_);
    for (const auto& name : names) {
      renditions.emplace_back([this, name] { FollowRendition(name); });
    }
    if (renditions.empty()) Pause(std::chrono::milliseconds(500));
  }
  for (auto& t : renditions) t.join();
  log::Info("relay_stopped", {{"stream", stream_}, {"idle", Idle()}});
  finished_.store(true);
}

absl::StatusOr<Relay::StreamRelay::Chunk> Relay::StreamRelay::Get(
    http::KeepAliveClient& client, const std::string& base_url, const std::string& target,
    std::chrono::milliseconds timeout, std::string* timing, GrowingObject* in_flight) {
  auto base = SplitBaseUrl(base_url);
  if (!base) return absl::UnavailableError("no upstream");
  http::ClientRequest request;
  request.host = base->first;
  request.port = base->second;
  request.target = target;
  request.timeout = timeout;
  request.body_limit_bytes = relay_->options_.max_object_bytes;
  if (in_flight) {
    request.on_header = [in_flight](const http::Response& header) {
      if (auto t = header.find(kMediaTimingField); t != header.end()) {
        in_flight->SetTiming(std::string(t->value()));
      }
    };
    request.on_body = [in_flight](std::string_view piece) { in_flight->Append(piece); };
  }
  if (relay_->options_.cluster_token) {
    request.headers.emplace_back("Authorization", "Bearer " + relay_->options_.cluster_token());
  }
  const bool playlist = std::string_view(target).substr(0, target.find('?')).ends_with(".m3u8");
  if (playlist) request.headers.emplace_back("Accept-Encoding", "gzip");
  relay_->requests_.fetch_add(1);
  if (relay_->requests_metric_) relay_->requests_metric_->Increment();
  auto res = client.Fetch(request);
  if (!res.ok()) return res.status();
  if (res->result() == http::Status::not_found || res->result() == http::Status::gone) {
    return absl::NotFoundError(absl::StrCat("upstream answered ", res->result_int()));
  }
  if (res->result() != http::Status::ok) {
    return absl::FailedPreconditionError(absl::StrCat("upstream answered ", res->result_int()));
  }
  if (relay_->bytes_metric_) {
    // P-16: bytes by the zone they came from, so an operator sees what enters a site.
    relay_->bytes_metric_->Add({{"upstream_zone", upstreams_.zone()}})
        .Increment(static_cast<double>(res->body().size()));
  }
  if (auto n = res->find("X-Stream-Notifications"); n != res->end()) {
    AdoptNotifications(std::string(n->value()));
  }
  if (auto t = res->find(kMediaTimingField); timing && t != res->end()) {
    *timing = std::string(t->value());
  }
  if (auto e = res->find(http::beast_http::field::content_encoding); e != res->end()) {
    if (!playlist || e->value() != "gzip") {
      return absl::DataLossError(
          absl::StrCat("upstream sent Content-Encoding ", std::string(e->value())));
    }
    auto text = http::Gunzip(res->body(), relay_->options_.max_object_bytes);
    if (!text.ok()) return text.status();
    return std::make_shared<const std::string>(std::move(*text));
  }
  return std::make_shared<const std::string>(std::move(res->body()));
}

void Relay::StreamRelay::AdoptNotifications(std::string header) {
  auto text = crypto::Base64UrlDecode(header);
  if (!text) return;
  auto state = ParseBoundedJson(*text, "X-Stream-Notifications", 8);
  if (!state.ok() || !state->is_object()) return;
  auto seq = state->find("seq");
  if (seq == state->end() || !seq->is_number_unsigned()) return;
  (void)relay_->store_->AdoptNotifications(stream_, seq->get<uint64_t>(), std::move(header));
}

absl::Status Relay::StreamRelay::Publish(const std::string& rendition, ObjectKey key,
                                         std::vector<Chunk> chunks,
                                         std::shared_ptr<const MediaTiming> timing,
                                         std::shared_ptr<const RenditionInfo> info) {
  OriginStore::PublishRequest request;
  request.stream = stream_;
  request.rendition = rendition;
  request.key = key;
  request.pipeline = relay_->options_.pipeline;
  for (const auto& c : chunks) request.size += c->size();
  request.chunks = std::move(chunks);
  request.timing = std::move(timing);
  request.info = std::move(info);
  return relay_->store_->Publish(std::move(request)).status();
}

bool Relay::StreamRelay::PublishPart(Follow& f, const UpstreamEntry& e, const Chunk& bytes) {
  auto timing = TimingOf(f, e, *bytes);
  if (!Publish(f.name, ObjectKey{ObjectKey::kPart, e.msn, e.part}, {bytes}, timing, f.info).ok()) {
    return false;
  }
  f.last_part = {e.msn, e.part};
  f.open_msn = e.msn;
  f.open_pdt = e.program_date_time_ms;
  auto& held = f.parts[e.msn];
  if (static_cast<int>(held.size()) == e.part) held.push_back(bytes);
  return true;
}

int64_t Relay::StreamRelay::StartOf(const Follow& f, const std::string& bytes) const {
  auto start = media::ProbeFragmentStart(bytes);
  if (!start || f.timescale == 0) return 0;
  return static_cast<int64_t>(static_cast<long double>(start->base_media_decode_time) * 90000.0L /
                              f.timescale);
}

std::shared_ptr<const MediaTiming> Relay::StreamRelay::TimingOf(const Follow& f,
                                                                const UpstreamEntry& e,
                                                                const std::string& bytes) const {
  auto t = std::make_shared<MediaTiming>();
  t->start = StartOf(f, bytes);
  t->duration = e.duration_us * 9 / 100;
  t->program_date_time_ms = e.program_date_time_ms;
  t->independent = e.independent;
  t->discontinuity = e.discontinuity;
  t->last_part = e.last_part;
  t->timeline_origin = f.timeline_origin;
  return t;
}

void Relay::StreamRelay::AdoptOrigin(Follow& f, const std::string& field) {
  if (field.empty()) return;
  if (auto e = ParsePartTiming(field, 0, 0); e && e->timeline_origin) {
    f.timeline_origin = *e->timeline_origin;
  }
}

bool Relay::StreamRelay::FetchInit(Follow& f) {
  auto init = Get(f.client, f.base, absl::StrCat("/", stream_, "/", f.name, "/init.mp4"),
                  relay_->options_.fetch_timeout);
  if (!init.ok()) return false;
  f.info = std::make_shared<RenditionInfo>();
  f.info->name = f.name;
  f.info->init = *init;
  for (const auto& track : media::ProbeInitSegment(**init)) {
    f.info->cmaf_tracks.push_back(track.info);
    if (!f.timescale) f.timescale = track.timescale;
  }
  if (auto view = relay_->store_->View(stream_)) {
    f.info->target_duration_ms = view->policy->tmpl.segment_ms;
    f.info->live_window = view->policy->live_window;
  }
  // HLS-TS viewers need the MPEG-TS form, which video renditions (and an audio-only
  // source's) have (S-16a): an audio rendition's TS objects are never published. The form
  // is made here from the CMAF segments (S-25, TsMaker), not fetched.
  f.has_ts = (f.info->cmaf_video() || !ts_maker_->has_audio_rendition()) &&
             Get(f.client, f.base, absl::StrCat("/", stream_, "/", f.name, "/index.m3u8"),
                 relay_->options_.fetch_timeout)
                 .ok();
  auto status = Publish(f.name, ObjectKey{ObjectKey::kInit, -1, -1}, {*init}, nullptr, f.info);
  return status.ok();
}

void Relay::StreamRelay::PassOver(Follow& f, const UpstreamEntry& e, std::string_view why) {
  relay_->passed_over_.fetch_add(1);
  if (relay_->passed_over_metric_) relay_->passed_over_metric_->Increment();
  uint64_t held_back = 0;
  if (pass_over_log_.Allow(UnixMillis(relay_->clock_.Now()), &held_back)) {
    log::Warn("relay_object_passed_over",
              {{"stream", stream_},
               {"held_back", held_back},
               {"rendition", f.name},
               {"object", ObjectFileName(e.part >= 0 ? ObjectKey{ObjectKey::kPart, e.msn, e.part}
                                                     : ObjectKey{ObjectKey::kM4s, e.msn, -1})},
               {"why", std::string(why)}});
  }
  if (e.part >= 0) {
    f.last_part = std::max(f.last_part, std::make_pair(e.msn, e.part));
    return;
  }
  f.last_segment = e.msn;
  f.parts.erase(f.parts.begin(), f.parts.upper_bound(e.msn));
}

absl::Status Relay::StreamRelay::Relay1(Follow& f, const UpstreamMediaPlaylist& playlist) {
  if (playlist.part_target_us > 0 && f.info->part_target_ms != playlist.part_target_us / 1000) {
    // The info already given to the store (and to other renditions' MPEG-TS made from this
    // one's segments) is read by other threads: a changed one is a new object.
    auto info = std::make_shared<RenditionInfo>(*f.info);
    info->part_target_ms = static_cast<int>(playlist.part_target_us / 1000);
    f.info = std::move(info);
  }
  // A 404/410 for one or two listed objects is the upstream's (a part out of its window);
  // for more, the upstream lost the stream (restarted empty): the next upstream has them.
  int not_found = 0;
  constexpr int kMaxPassedOverPerRound = 2;
  auto pass_over_not_found = [&](const UpstreamEntry& e, const absl::Status& status) {
    if (++not_found > kMaxPassedOverPerRound) return false;
    PassOver(f, e, std::string(status.message()));
    return true;
  };
  std::map<int64_t, int> listed_parts;  // msn → parts the playlist lists for it
  for (const auto& e : playlist.entries) {
    if (e.part >= 0) ++listed_parts[e.msn];
  }
  for (const auto& e : playlist.entries) {
    if (!Running()) return absl::OkStatus();
    if (e.msn <= f.last_segment) continue;
    std::string name = ObjectFileName(e.part >= 0 ? ObjectKey{ObjectKey::kPart, e.msn, e.part}
                                                  : ObjectKey{ObjectKey::kM4s, e.msn, -1});
    if (e.part >= 0) {
      if (std::make_pair(e.msn, e.part) <= f.last_part) continue;
      if (e.gap) {
        PassOver(f, e, "listed as a gap");
        continue;
      }
      // A listed part is complete upstream: it comes at once or the upstream is gone (the
      // one fetched on the hint is here already).
      ObjectKey key{ObjectKey::kPart, e.msn, e.part};
      std::unique_ptr<Hinted> hinted;
      if (f.hinted && f.hinted->key() == key) hinted = std::move(f.hinted);
      std::string timing;
      absl::StatusOr<Chunk> bytes;
      if (hinted) {
        bytes = hinted->bytes;
      } else {
        // S-25: still crossing to this node, so viewers held for it get its bytes as they
        // come (an upstream's hint can be gone by the time its playlist reaches a slow edge).
        hinted = BeginShared(f, key);
        bytes = Get(f.client, f.base, absl::StrCat("/", stream_, "/", f.name, "/", name),
                    PartDeadline(f), &timing, hinted ? &hinted->object() : nullptr);
        // `hinted` fails the object for its readers on every path but success.
        if (absl::IsNotFound(bytes.status()) && pass_over_not_found(e, bytes.status())) continue;
        if (!bytes.ok()) return bytes.status();  // `hinted` fails the object for its readers
        if (hinted) hinted->object().Complete();
      }
      AdoptOrigin(f, timing);
      PublishPart(f, e, *bytes);
      continue;
    }
    // A complete segment: from its parts when every one of them was relayed, else fetched.
    if (e.gap) {
      PassOver(f, e, "listed as a gap");
      continue;
    }
    std::vector<Chunk> chunks;
    auto held = f.parts.find(e.msn);
    auto listed = listed_parts.find(e.msn);
    if (held != f.parts.end() && listed != listed_parts.end() &&
        static_cast<int>(held->second.size()) == listed->second) {
      chunks = held->second;
    } else {
      std::string timing;
      auto bytes = Get(f.client, f.base, absl::StrCat("/", stream_, "/", f.name, "/", name),
                       relay_->options_.fetch_timeout, &timing);
      if (absl::IsNotFound(bytes.status()) && pass_over_not_found(e, bytes.status())) continue;
      if (!bytes.ok()) return bytes.status();
      AdoptOrigin(f, timing);
      chunks = {*bytes};
    }
    auto timing = TimingOf(f, e, *chunks.front());
    (void)Publish(f.name, ObjectKey{ObjectKey::kM4s, e.msn, -1}, chunks, timing, f.info);
    // S-25: the MPEG-TS form made from the CMAF segments (this one, or a video segment that
    // waited for this audio).
    for (auto& made :
         ts_maker_->Offer({f.name, e.msn, std::move(chunks), timing, f.info}, f.has_ts)) {
      (void)Publish(made.rendition, ObjectKey{ObjectKey::kTs, made.msn, -1}, {made.ts}, made.timing,
                    made.info);
    }
    f.last_segment = e.msn;
    if (e.program_date_time_ms != 0) {
      f.relayed_pdt[e.msn] = e.program_date_time_ms;
      while (f.relayed_pdt.size() > 32) f.relayed_pdt.erase(f.relayed_pdt.begin());
    }
    if (timing->start != 0) {
      f.relayed_start[e.msn] = timing->start;
      while (f.relayed_start.size() > 32) f.relayed_start.erase(f.relayed_start.begin());
    }
    f.parts.erase(f.parts.begin(), f.parts.upper_bound(e.msn));
  }
  return absl::OkStatus();
}

void Relay::StreamRelay::FollowRendition(const std::string& name) {
  Follow f;
  f.name = name;
  std::optional<std::pair<int64_t, int>> wanted;
  while (Running()) {
    std::string base = Base();
    f.base = base;  // every request of this round goes there, whatever other threads do
    if (!f.info && !FetchInit(f)) {
      NextUpstream(base);
      if (!Connect()) Pause(std::chrono::milliseconds(200));
      continue;
    }
    // A blocking reload for the hinted part: held upstream until it is out. Its deadline
    // is two part targets and a little: no progress within that (or a broken connection)
    // moves the relay to another upstream at once (S-21); the playlist it gets there
    // lists what this one missed.
    std::string target = absl::StrCat("/", stream_, "/", name, "/index.ll.m3u8");
    auto timeout = relay_->options_.fetch_timeout;
    if (wanted) {
      absl::StrAppend(&target, "?_HLS_msn=", wanted->first, "&_HLS_part=", wanted->second);
      timeout = PartDeadline(f);
    }
    auto text = Get(f.client, f.base, target, timeout);
    std::optional<UpstreamMediaPlaylist> playlist;
    if (text.ok()) playlist = ParseMediaPlaylist(**text);
    if (!playlist) {
      wanted.reset();
      NextUpstream(base);
      if (!Connect()) Pause(std::chrono::milliseconds(200));
      continue;
    }
    // S-21: a new upstream is followed only on the timeline relayed so far; one on another
    // timeline is passed over while the others are tried (three in a row at most: when
    // every upstream moved to a new timeline, the edge follows it).
    // Two checks: the date-times the playlist gives, and (S-6) the media start of the
    // segment central's fingerprint of the upstream names.
    if (!f.followed_base.empty() && base != f.followed_base &&
        (!SameTimeline(f.relayed_pdt, *playlist, kSameTimelineToleranceMs,
                       f.info->target_duration_ms) ||
         !SameFingerprint(f.relayed_start, upstreams_.timeline_fingerprint(),
                          kSameStartTolerance90k)) &&
        f.other_timeline_in_row < 3) {
      ++f.other_timeline_in_row;
      log::Warn("relay_upstream_other_timeline",
                {{"stream", stream_}, {"rendition", name}, {"upstream", base}});
      wanted.reset();
      NextUpstream(base);
      if (!Connect()) Pause(std::chrono::milliseconds(200));
      continue;
    }
    f.other_timeline_in_row = 0;
    f.followed_base = base;
    auto relayed = Relay1(f, *playlist);
    f.hinted.reset();  // listed and published by now, or not coming: the store decides
    if (!relayed.ok()) {
      // A listed object that did not come from an upstream that still lists it: it is
      // complete there, so the upstream is failing (S-21: the next one lists it too).
      log::Warn("relay_object_failed", {{"stream", stream_},
                                        {"rendition", name},
                                        {"upstream", base},
                                        {"error", std::string(relayed.message())}});
      wanted.reset();
      NextUpstream(base);
      if (!Connect()) Pause(std::chrono::milliseconds(200));
      continue;
    }
    wanted = playlist->hint;
    if (wanted && !FetchHinted(f, *wanted)) {
      wanted.reset();
      NextUpstream(base);
      if (!Connect()) Pause(std::chrono::milliseconds(200));
    }
  }
}

bool Relay::StreamRelay::FetchHinted(Follow& f, std::pair<int64_t, int> hint) {
  InFlightObjects* registry = relay_->options_.in_flight;
  ObjectKey key{ObjectKey::kPart, hint.first, hint.second};
  if (!registry || std::make_pair(key.msn, key.part) <= f.last_part) return true;
  auto hinted = BeginShared(f, key);
  if (!hinted) return true;  // the registry is full: the part is fetched once listed
  GrowingObject* object = &hinted->object();
  std::string timing_field;
  auto bytes =
      Get(f.client, f.base, absl::StrCat("/", stream_, "/", f.name, "/", ObjectFileName(key)),
          PartDeadline(f), &timing_field, object);
  if (!bytes.ok()) {
    if (absl::IsFailedPrecondition(bytes.status()) || absl::IsNotFound(bytes.status())) {
      return true;
    }
    log::Warn("relay_hinted_part_failed", {{"stream", stream_},
                                           {"rendition", f.name},
                                           {"part", ObjectFileName(key)},
                                           {"error", std::string(bytes.status().message())}});
    return false;
  }
  object->Complete();
  // With its timing in the answer the part is listed here at once (the playlist that lists
  // it upstream is still on its way); the parts of the open segment carry its date-time.
  auto entry = ParsePartTiming(timing_field, key.msn, key.part);
  if (entry && entry->timeline_origin) f.timeline_origin = *entry->timeline_origin;
  if (entry && key.part > 0) {
    if (f.open_msn != key.msn || f.last_part != std::make_pair(key.msn, key.part - 1)) {
      entry.reset();  // not the next part of the segment followed so far
    } else {
      entry->program_date_time_ms = f.open_pdt;
    }
  }
  if (entry && PublishPart(f, *entry, *bytes)) return true;  // `hinted` ends: the store has it
  hinted->bytes = *bytes;
  f.hinted = std::move(hinted);
  return true;
}

std::unique_ptr<Relay::StreamRelay::Hinted> Relay::StreamRelay::BeginShared(Follow& f,
                                                                            ObjectKey key) {
  InFlightObjects* registry = relay_->options_.in_flight;
  if (!registry) return nullptr;
  auto object = registry->Begin(stream_, f.name, key);
  if (!object) return nullptr;
  relay_->store_->WakeObjectWaiters(stream_, f.name, key);
  return std::make_unique<Hinted>(registry, stream_, f.name, key, std::move(object));
}

}  // namespace meshwork::streamer::relay
