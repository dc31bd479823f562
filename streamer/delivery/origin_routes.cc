#include "streamer/delivery/origin_routes.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/http/byte_budget.h"
#include "common/http/content.h"
#include "common/http/response.h"
#include "common/json/bounded_json.h"
#include "common/log/log.h"
#include "common/metrics/metrics.h"
#include "common/status/absl_view.h"
#include "common/status/status_map.h"
#include "prometheus/counter.h"
#include "prometheus/histogram.h"
#include "streamer/delivery/in_flight_answer.h"
#include "streamer/delivery/publish_request.h"
#include "streamer/delivery/push_route.h"
#include "streamer/delivery/responses.h"
#include "streamer/relay/media_timing_field.h"
#include "streamer/relay/upstream_playlist.h"

namespace meshwork::streamer {

using http::RequestContext;
using http::Responder;
namespace field = http::beast_http;

namespace {

constexpr size_t kMaxManifestBytes = 1 << 20;
constexpr int kMaxHoldHops = 8;

std::optional<std::string_view> Header(const http::Request& request, std::string_view name) {
  auto it = request.find(boost::beast::string_view(name.data(), name.size()));
  if (it == request.end()) return std::nullopt;
  return std::string_view(it->value().data(), it->value().size());
}

std::string_view ContentType(ObjectKey key) {
  return key.kind == ObjectKey::kTs ? kTsType : kMp4Type;
}

// Reads a whole (small) body into a string, refusing more than `limit` bytes (OutOfRange,
// field "body"). With `keep` false the bytes are only counted (a body drained and dropped).
class SmallBody : public std::enable_shared_from_this<SmallBody> {
 public:
  using Done = std::function<void(absl::Status, std::string)>;
  SmallBody(std::shared_ptr<http::BodyReader> body, size_t limit, Done done, bool keep = true)
      : body_(std::move(body)), limit_(limit), done_(std::move(done)), keep_(keep) {}
  void Next() {
    body_->Read([self = shared_from_this()](const absl::Status& status,
                                            std::span<const uint8_t> bytes, bool done) {
      if (!status.ok()) return self->done_(status, "");
      self->size_ += bytes.size();
      if (self->keep_)
        self->data_.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      if (self->size_ > self->limit_) {
        return self->done_(WithField(absl::OutOfRangeError(
                                         absl::StrCat("body larger than ", self->limit_, " bytes")),
                                     "body"),
                           "");
      }
      if (done) return self->done_(absl::OkStatus(), std::move(self->data_));
      self->Next();
    });
  }

 private:
  std::shared_ptr<http::BodyReader> body_;
  size_t limit_;
  Done done_;
  const bool keep_;
  size_t size_ = 0;
  std::string data_;
};

http::Response TooLarge(std::string_view message) {
  return http::ErrorResponse(http::Status::payload_too_large, "payload_too_large", message);
}

}  // namespace

struct OriginDelivery::Metrics {
  prometheus::Histogram* publish_ack = nullptr;
  prometheus::Counter* slow_publish = nullptr;
  prometheus::Counter* lookups = nullptr;
  metrics::LabeledCounters publishes;
  metrics::LabeledCounters reads;
  std::atomic<uint64_t> slow{0};

  explicit Metrics(prometheus::Registry* registry) {
    if (!registry) return;
    publish_ack = &prometheus::BuildHistogram()
                       .Name("meshwork_publish_ack_seconds")
                       .Help("From the last byte of a published object to its acknowledgement")
                       .Register(*registry)
                       .Add({}, metrics::LatencyBuckets());
    slow_publish = &prometheus::BuildCounter()
                        .Name("meshwork_slow_publish_total")
                        .Help("Publishes acknowledged later than 500 ms after their last byte")
                        .Register(*registry)
                        .Add({});
    lookups = &prometheus::BuildCounter()
                   .Name("meshwork_origin_index_lookups_total")
                   .Help(
                       "Reads that had to consult the object index (404/410 decided from "
                       "metadata make none)")
                   .Register(*registry)
                   .Add({});
    publishes =
        metrics::LabeledCounters(prometheus::BuildCounter()
                                     .Name("meshwork_origin_publishes_total")
                                     .Help("Objects published on the publish listener, by result")
                                     .Register(*registry),
                                 "result",
                                 {"created", "replaced", "refused", "unauthorized", "bad_request",
                                  "broken", "too_large", "over_budget", "too_slow"});
    reads = metrics::LabeledCounters(
        prometheus::BuildCounter()
            .Name("meshwork_origin_reads_total")
            .Help("Reads of published objects, by answer")
            .Register(*registry),
        "answer", {"served", "in_flight", "held", "not_yet", "gone", "missing", "shed"});
  }
  void Publish(std::string_view result) { publishes.Increment(result); }
  void Read(std::string_view answer) { reads.Increment(answer); }
};

OriginDelivery::OriginDelivery(OriginOptions options, OriginStore* origin, StreamManager* streams,
                               Shedder* shedder, const PublishAuth* auth,
                               prometheus::Registry* registry)
    : options_(options),
      origin_(origin),
      streams_(streams),
      shedder_(shedder),
      auth_(auth),
      metrics_(std::make_unique<Metrics>(registry)) {}

OriginDelivery::~OriginDelivery() = default;

uint64_t OriginDelivery::slow_publishes() const { return metrics_->slow.load(); }

// ---------------------------------------------------------------------------------------
// Publishing

// One object upload: the body is copied once, into chunks of `chunk_bytes` that are kept as
// they are (L-17); nothing is visible until the last byte arrived (L-2).
class OriginDelivery::Upload : public std::enable_shared_from_this<Upload> {
 public:
  Upload(OriginDelivery* owner, std::shared_ptr<http::BodyReader> body, Responder r,
         OriginStore::PublishRequest request, http::ByteBudget* budget)
      : owner_(owner),
        body_(std::move(body)),
        r_(std::move(r)),
        request_(std::move(request)),
        hold_(budget),
        deadline_(owner->clock().Monotonic() + owner->options_.max_upload_time) {}

  void Next() {
    body_->Read([self = shared_from_this()](const absl::Status& status,
                                            std::span<const uint8_t> bytes,
                                            bool done) { self->OnChunk(status, bytes, done); });
  }

 private:
  void OnChunk(const absl::Status& status, std::span<const uint8_t> bytes, bool done) {
    if (!status.ok()) {
      owner_->metrics_->Publish("broken");
      log::Warn("publish_broken", {{"stream", request_.stream},
                                   {"object", Describe()},
                                   {"bytes", request_.size},
                                   {"error", status.ToString()}});
      return r_.Send(http::ErrorResponse(status));
    }
    if (!done && owner_->clock().Monotonic() > deadline_) {
      owner_->metrics_->Publish("too_slow");
      log::Warn("publish_too_slow", {{"stream", request_.stream},
                                     {"object", Describe()},
                                     {"bytes", request_.size + bytes.size()}});
      return r_.Send(http::ErrorResponse(
          http::Status::request_timeout, "request_timeout",
          absl::StrCat("the object's upload took longer than ",
                       owner_->options_.max_upload_time.count(), " ms (--max-upload-ms)")));
    }
    request_.size += bytes.size();
    if (request_.size > owner_->options_.max_object_bytes) {
      owner_->metrics_->Publish("too_large");
      return r_.Send(TooLarge(absl::StrCat("object larger than ", owner_->options_.max_object_bytes,
                                           " bytes (--max-object-bytes)")));
    }
    // Until its last byte the object is an unfinished upload: its bytes count against the
    // listener's cap, and past it the upload is refused rather than buffered.
    if (!hold_.Grow(bytes.size())) {
      owner_->metrics_->Publish("over_budget");
      http::Response busy = http::ErrorResponse(
          http::Status::service_unavailable, "unavailable",
          "the publish listener holds too many unfinished uploads; retry later");
      busy.set(http::beast_http::field::retry_after, "1");
      return r_.Send(std::move(busy));
    }
    const size_t chunk = owner_->options_.chunk_bytes;
    while (!bytes.empty()) {
      if (!current_) {
        current_ = std::make_shared<std::string>();
        current_->reserve(chunk);
      }
      size_t n = std::min(bytes.size(), chunk - current_->size());
      current_->append(reinterpret_cast<const char*>(bytes.data()), n);
      bytes = bytes.subspan(n);
      if (current_->size() == chunk) request_.chunks.push_back(std::move(current_));
    }
    if (!done) return Next();
    if (current_) {
      // A small last piece gives its unused reservation back (a cheap copy of few bytes).
      if (current_->size() < chunk / 4) current_->shrink_to_fit();
      request_.chunks.push_back(std::move(current_));
    }
    auto last_byte = std::chrono::steady_clock::now();
    std::string stream = request_.stream, object = Describe(), pipeline = request_.pipeline;
    auto result = owner_->origin_->Publish(std::move(request_));
    auto published = std::chrono::steady_clock::now();
    if (!result.ok()) {
      owner_->metrics_->Publish("refused");
      return r_.Send(http::ErrorResponse(result.status()));
    }
    bool created = *result == OriginStore::PublishResult::kCreated;
    owner_->metrics_->Publish(created ? "created" : "replaced");
    http::Response res{created ? http::Status::created : http::Status::no_content, 11};
    r_.Send(std::move(res));
    // L-18: from the last byte to the answer handed to the connection.
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - last_byte).count();
    if (owner_->metrics_->publish_ack) owner_->metrics_->publish_ack->Observe(seconds);
    if (seconds * 1000 > static_cast<double>(owner_->options_.slow_publish_ms)) {
      owner_->metrics_->slow.fetch_add(1);
      if (owner_->metrics_->slow_publish) owner_->metrics_->slow_publish->Increment();
      double index_ms = std::chrono::duration<double, std::milli>(published - last_byte).count();
      log::Warn("slow_publish",
                {{"stream", stream},
                 {"object", object},
                 {"pipeline", pipeline},
                 {"ack_ms", absl::StrFormat("%.1f", seconds * 1000)},
                 {"cause", index_ms * 2 > seconds * 1000 ? "index update (writers' lock)"
                                                         : "answer hand-off to the connection"}});
    }
  }

  std::string Describe() const {
    return absl::StrCat(request_.rendition, "/", ObjectFileName(request_.key));
  }

  OriginDelivery* owner_;
  std::shared_ptr<http::BodyReader> body_;
  Responder r_;
  OriginStore::PublishRequest request_;
  std::shared_ptr<std::string> current_;
  http::BudgetHold hold_;
  const std::chrono::steady_clock::time_point deadline_;
};

void OriginDelivery::ReceiveObject(RequestContext& ctx, std::shared_ptr<http::BodyReader> body,
                                   Responder r, OriginStore::PublishRequest request) {
  if (auto length = ctx.request.find(field::field::content_length); length != ctx.request.end()) {
    uint64_t n = 0;
    std::string_view v(length->value().data(), length->value().size());
    if (absl::SimpleAtoi(AbslView(v), &n) && n > options_.max_object_bytes) {
      metrics_->Publish("too_large");
      return r.Send(TooLarge(absl::StrCat("object of ", n, " bytes is larger than ",
                                          options_.max_object_bytes, " (--max-object-bytes)")));
    }
  }
  std::make_shared<Upload>(this, std::move(body), std::move(r), std::move(request),
                           ctx.upload_budget)
      ->Next();
}

void OriginDelivery::ReceiveNotification(RequestContext& ctx,
                                         std::shared_ptr<http::BodyReader> body, Responder r,
                                         std::string stream) {
  auto responder = std::make_shared<Responder>(std::move(r));
  auto reader = std::make_shared<SmallBody>(
      std::move(body), options_.max_notification_bytes,
      [this, responder, stream](absl::Status status, std::string data) {
        if (!status.ok()) {
          if (status.code() == absl::StatusCode::kOutOfRange) {
            return responder->Send(TooLarge(std::string(status.message())));
          }
          return responder->Send(http::ErrorResponse(status));
        }
        auto parsed = ParseBoundedJson(data, "body");
        if (!parsed.ok()) return responder->Send(http::ErrorResponse(parsed.status()));
        nlohmann::json event = *std::move(parsed);
        if (!event.is_object()) {
          return responder->Send(
              http::ErrorResponse(InvalidField("body", "must be a JSON object")));
        }
        auto id = event.find("id");
        if (id == event.end() || !id->is_string() || id->get<std::string>().empty() ||
            id->get<std::string>().size() > 128) {
          return responder->Send(
              http::ErrorResponse(InvalidField("id", "required: a string of 1 to 128 bytes")));
        }
        auto type = event.find("type");
        if (type == event.end() || !type->is_string() || type->get<std::string>().empty() ||
            type->get<std::string>().size() > 64) {
          return responder->Send(http::ErrorResponse(
              InvalidField("type", "required: a string of 1 to 64 bytes (e.g. ad-start)")));
        }
        for (const auto& [k, v] : event.items()) {
          if (k != "id" && k != "type" && k != "payload") {
            return responder->Send(
                http::ErrorResponse(InvalidField(k, "unknown member (id, type, payload)")));
          }
        }
        auto seq = origin_->Notify(stream, event);
        if (!seq.ok()) return responder->Send(http::ErrorResponse(seq.status()));
        log::Info("stream_notification", {{"stream", stream},
                                          {"id", id->get<std::string>()},
                                          {"type", type->get<std::string>()},
                                          {"seq", *seq}});
        responder->Send(http::JsonResponse(http::Status::ok, {{"seq", *seq}}));
      });
  (void)ctx;
  reader->Next();
}

void OriginDelivery::AddPublishRoutes(http::Router& router) {
  router.AddStreaming(
      {http::Verb::put, http::Verb::post}, "/{path...}",
      [this](RequestContext& ctx, std::shared_ptr<http::BodyReader> body, Responder r) {
        auto target = ParsePublishPath(ctx.path);
        if (!target.ok()) return r.Send(http::ErrorResponse(target.status()));
        bool post = ctx.request.method() == http::Verb::post;
        // M-3: the stream's (or the pipeline's) publish token, before any byte is taken.
        std::string pipeline;
        if (target->kind == PublishTarget::kObject) {
          pipeline = std::string(Header(ctx.request, "X-Pipeline").value_or(""));
        }
        auto authorized = auth_->Check(ctx, target->stream, pipeline);
        if (!authorized.ok()) {
          metrics_->Publish("unauthorized");
          return r.Send(PublishUnauthorized(authorized.status()));
        }
        switch (target->kind) {
          case PublishTarget::kPush:
            return ServePush(streams_, ctx, std::move(body), std::move(r), target->stream,
                             /*take_over=*/*authorized);
          case PublishTarget::kNotifications:
            if (!post) {
              return r.Send(http::ErrorResponse(http::Status::method_not_allowed,
                                                "method_not_allowed", "notifications take POST"));
            }
            if (!origin_->View(target->stream)) break;
            return ReceiveNotification(ctx, std::move(body), std::move(r), target->stream);
          case PublishTarget::kManifest: {
            // A packager's own playlist: drained and acknowledged, not kept — for a stream
            // this node holds (R-3: anyone else's body is not read at all).
            if (!origin_->View(target->stream)) break;
            auto responder = std::make_shared<Responder>(std::move(r));
            std::make_shared<SmallBody>(
                std::move(body), kMaxManifestBytes,
                [responder](absl::Status status, std::string) {
                  if (status.code() == absl::StatusCode::kOutOfRange) {
                    return responder->Send(TooLarge(std::string(status.message())));
                  }
                  if (!status.ok()) return responder->Send(http::ErrorResponse(status));
                  responder->Send(http::MakeResponse(http::Status::no_content, "", "text/plain"));
                },
                /*keep=*/false)
                ->Next();
            return;
          }
          case PublishTarget::kObject: {
            if (post) {
              return r.Send(http::ErrorResponse(http::Status::method_not_allowed,
                                                "method_not_allowed", "objects take PUT"));
            }
            auto headers = ParsePublishHeaders(Header(ctx.request, "X-Pipeline"),
                                               Header(ctx.request, "X-Region"),
                                               Header(ctx.request, "X-Defects"));
            if (!headers.ok()) {
              metrics_->Publish("bad_request");
              return r.Send(http::ErrorResponse(headers.status()));
            }
            if (!origin_->View(target->stream)) break;
            OriginStore::PublishRequest request;
            request.stream = target->stream;
            request.rendition = target->rendition;
            request.key = target->key;
            request.pipeline = std::move(headers->pipeline);
            request.region = std::move(headers->region);
            request.defects = headers->defects;
            // S-23: an ingest node's feed dates its objects as it packaged them (the origin then
            // serves them on the same timeline run); a packager sends none (template timing).
            if (auto field = Header(ctx.request, relay::kMediaTimingField)) {
              auto timing = relay::MediaTimingFromField(*field);
              if (!timing) {
                metrics_->Publish("bad_request");
                return r.Send(http::ErrorResponse(InvalidField(
                    relay::kMediaTimingField,
                    "must be duration_us=…;pdt=…;start=… (an ingest node's object timing)")));
              }
              request.timing = std::make_shared<const MediaTiming>(*timing);
            }
            return ReceiveObject(ctx, std::move(body), std::move(r), std::move(request));
          }
        }
        r.Send(http::ErrorResponse(absl::NotFoundError(
            absl::StrCat("stream \"", target->stream, "\" is not placed on this node"))));
      });
}

// ---------------------------------------------------------------------------------------
// Reading

void OriginDelivery::ServeObject(RequestContext& ctx, Responder r, const std::string& stream,
                                 const std::string& rendition, ObjectKey key) {
  Answer(&ctx, ResponderSlot(&r), stream, rendition, key, 0, nullptr);
}

void OriginDelivery::Answer(RequestContext* ctx, ResponderSlot r, const std::string& stream,
                            const std::string& rendition, ObjectKey key, int hops,
                            std::shared_ptr<Shedder::Token> token, int64_t hold_until_ms) {
  auto view = origin_->View(stream);
  if (!view) return r->Send(NotFound("the stream was removed from this node", "*"));
  const OriginPolicy& policy = *view->policy;
  auto it = view->renditions.find(rendition);
  const OriginRendition* rend = it == view->renditions.end() ? nullptr : it->second.get();
  ReadDecision d = origin_->Decide(*view, rend, key);
  if (d.verdict == ReadDecision::kHold) {
    // L-7, L-9: a request is held until the first hold's end, not a fresh one per wake-up
    // (the next object of a stream that stopped was held 8 × a segment and a retry).
    if (hold_until_ms == 0) {
      hold_until_ms = d.until_ms;
    } else if (origin_->NowMs() >= hold_until_ms) {
      d.verdict = d.candidate ? ReadDecision::kServe : ReadDecision::kMissing;
    } else {
      d.until_ms = std::min(d.until_ms, hold_until_ms);
    }
  }
  if (d.looked_up && metrics_->lookups) metrics_->lookups->Increment();
  bool costly = d.verdict == ReadDecision::kServe || d.verdict == ReadDecision::kHold;
  if (!token && costly) {
    // L-16: only answers that send a body or hold a request are worth shedding; 404/410
    // decided from metadata cost less than the 503 would.
    RequestClass cls =
        ClassifyRead(policy, rend ? rend->meta : RenditionMeta{}, key, origin_->NowMs());
    if (shedder_->Shed(cls)) {
      metrics_->Read("shed");
      return r->Send(ShedResponse("the node is shedding load", policy.cors));
    }
    token = std::make_shared<Shedder::Token>(shedder_);
  }
  if (options_.in_flight && d.verdict != ReadDecision::kServe && d.verdict != ReadDecision::kGone &&
      hops < kMaxHoldHops && ctx->request.method() == http::Verb::get &&
      !Header(ctx->request, "Range")) {
    // P-13: still arriving from upstream: sent as it comes rather than held until complete
    // (a whole GET; a range or HEAD waits for the store's copy).
    if (auto object = options_.in_flight->Find(stream, rendition, key)) {
      metrics_->Read("in_flight");
      http::Response header{http::Status::ok, 11};
      header.set(field::field::cache_control, kImmutable);
      header.set(field::field::content_type, ContentType(key));
      http::AddCors(header, policy.cors);
      auto shared = r.Share();
      return AnswerInFlight(
          std::move(object), shared, ctx->executor, std::move(header),
          [this, ctx, shared, stream, rendition, key, hops, token, hold_until_ms] {
            Answer(ctx, ResponderSlot(shared), stream, rendition, key, hops + 1, token,
                   hold_until_ms);
          });
    }
  }
  if (d.verdict == ReadDecision::kHold && hops >= kMaxHoldHops) {
    d.verdict = d.candidate ? ReadDecision::kServe : ReadDecision::kMissing;
  }
  switch (d.verdict) {
    case ReadDecision::kServe: {
      metrics_->Read("served");
      const Candidate& c = *d.candidate;
      uint64_t version = policy.VersionOf(c, key.msn);
      std::string etag = absl::StrCat("\"", c.serial, "-v", version, "\"");
      http::Response header{http::Status::ok, 11};
      // init.mp4 changes with the tracks (under the same name); media objects never do.
      header.set(field::field::cache_control,
                 key.kind == ObjectKey::kInit ? "max-age=60" : kImmutable);
      header.set(field::field::etag, etag);
      header.set("X-Pipeline", c.pipeline);
      if (c.defects) header.set("X-Defects", DefectsToString(c.defects));
      if (c.notifications) header.set("X-Stream-Notifications", *c.notifications);
      if ((key.kind == ObjectKey::kPart || key.kind == ObjectKey::kM4s) && c.timing) {
        // P-13, S-25: an edge lists a part as soon as its bytes are in, on this node's timeline
        // run (relay::ParsePartTiming).
        header.set(relay::kMediaTimingField, relay::MediaTimingField(*c.timing));
      }
      http::AddCors(header, policy.cors);
      if (auto inm = Header(ctx->request, "If-None-Match"); inm && *inm == etag) {
        header.result(http::Status::not_modified);
        return r->Send(std::move(header));
      }
      http::SharedBuffers body;
      for (const auto& chunk : c.chunks) body.Append(chunk);
      return http::SendMedia(ctx->request, *r, std::move(body), ContentType(key),
                             std::move(header));
    }
    case ReadDecision::kNotYet: {
      metrics_->Read("not_yet");
      // P-5: the same 404 for every future object, only its TTL written per request.
      http::AnswerFields ttl;
      ttl.Add("Cache-Control", "max-age=", d.ttl_ms / 1000);
      ttl.Add("X-Cache-TTL-Ms", "", d.ttl_ms);
      return r->SendPrepared(PreparedErrorAnswer(PreparedError::kNotYet, policy.cors), ttl);
    }
    case ReadDecision::kGone: {
      metrics_->Read("gone");
      int64_t window_s =
          (static_cast<int64_t>(policy.live_window) * policy.tmpl.segment_ms + 999) / 1000;
      http::AnswerFields window;
      window.Add("Cache-Control", "max-age=", std::max<int64_t>(window_s, 1));
      return r->SendPrepared(PreparedErrorAnswer(PreparedError::kGone, policy.cors), window);
    }
    case ReadDecision::kMissing:
      metrics_->Read("missing");
      return r->SendPrepared(
          PreparedErrorAnswer(rend ? PreparedError::kNoObject : PreparedError::kNoRendition,
                              policy.cors),
          http::AnswerFields());
    case ReadDecision::kHold:
      break;
  }
  metrics_->Read("held");
  int64_t wait_ms = std::max<int64_t>(1, d.until_ms - origin_->NowMs());
  auto deadline = origin_->clock().Monotonic() + std::chrono::milliseconds(wait_ms);
  auto shared = r.Share();
  auto status = origin_->Wait(
      stream, rendition, key, d.generation, ctx->executor, deadline,
      [this, ctx, shared, stream, rendition, key, hops, token,
       hold_until_ms](Waiters::Outcome outcome) {
        if (outcome == Waiters::Outcome::kRemoved) {
          return shared->Send(NotFound("the stream was removed from this node", "*"));
        }
        Answer(ctx, ResponderSlot(shared), stream, rendition, key, hops + 1, token, hold_until_ms);
      });
  if (!status.ok()) shared->Send(Unavailable(std::string(status.message()), policy.cors));
}

}  // namespace meshwork::streamer
