// The live origin over HTTP (L-1…L-19).
//
// Publish listener (its own worker threads, L-3):
//   PUT  /{stream}/{rendition}/{init.mp4|N.ts|N.m4s|N.P.m4s}   an object (X-Pipeline,
//        X-Region, X-Defects), read in 256 KiB chunks as it arrives; visible only once
//        complete; 201 new, 204 replaced; 413 above the object size limit
//   PUT  /{stream}/{rendition}/*.m3u8|*.mpd    a packager's own manifest: accepted, ignored
//   POST /{stream}/notifications               L-10
//   PUT|POST /{stream}/publish                 continuous MPEG-TS push (S-1); a second
//        publisher of a live push gets 409 unless it presents the stream's token
// Every publish needs the stream's or pipeline's token when one is configured (401 without),
// and unfinished object uploads are held against the listener's byte cap (503 beyond it).
// Viewer listener: the objects of every stream (locally packaged or published), decided by
// the L-6…L-12 rules with shedding (L-16) in front; the playlists are viewer_routes'.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "common/http/router.h"
#include "common/time/clock.h"
#include "prometheus/registry.h"
#include "streamer/delivery/publish_auth.h"
#include "streamer/delivery/shedder.h"
#include "streamer/packager/stream_manager.h"
#include "streamer/store/in_flight.h"
#include "streamer/store/origin_store.h"

namespace meshwork::streamer {

struct OriginOptions {
  uint64_t max_object_bytes = 64ull << 20;
  size_t chunk_bytes = 256 * 1024;       // L-17
  size_t max_notification_bytes = 4096;  // the header it travels in is bounded too
  int64_t slow_publish_ms = 500;         // L-18
  // the longest an object upload may take from its first byte read to its last; a
  // client trickling bytes (each within the listener's read timeout) is answered 408 once it
  // is past this, its bytes dropped. A packager uploading a segment as it is made takes one
  // segment duration.
  std::chrono::milliseconds max_upload_time{120'000};
  const Clock* clock = nullptr;  // for the upload deadline; null = the real clock
  // P-13: objects an edge's relay is receiving; a read the store cannot serve yet is answered
  // from there as the bytes arrive. Null: none (a node that relays nothing). Outlives this.
  InFlightObjects* in_flight = nullptr;
};

class OriginDelivery {
 public:
  // `auth` decides who may publish (M-3); every pointer must outlive this object.
  OriginDelivery(OriginOptions options, OriginStore* origin, StreamManager* streams,
                 Shedder* shedder, const PublishAuth* auth, prometheus::Registry* registry);
  ~OriginDelivery();

  // The publish listener's routes (objects, manifests, notifications, push).
  void AddPublishRoutes(http::Router& router);

  // An object of any stream on this node (init, `.ts`, `.m4s`, part), decided by the store's
  // read rules (L-6…L-12) with shedding (L-16) in front; served zero-copy from its chunks.
  void ServeObject(http::RequestContext& ctx, http::Responder r, const std::string& stream,
                   const std::string& rendition, ObjectKey key);

  uint64_t slow_publishes() const;

 private:
  struct Metrics;
  class Upload;
  // The request's responder: used in place by an answer sent during the call (P-5: a 404 or
  // 410 allocates nothing for it), moved into a shared one only when the request outlives
  // the call (held, or sent as its bytes arrive).
  class ResponderSlot {
   public:
    explicit ResponderSlot(http::Responder* r) : in_place_(r) {}
    explicit ResponderSlot(std::shared_ptr<http::Responder> r)
        : shared_(std::move(r)), in_place_(shared_.get()) {}
    http::Responder* operator->() const { return in_place_; }
    http::Responder& operator*() const { return *in_place_; }
    std::shared_ptr<http::Responder> Share() {
      if (!shared_) {
        shared_ = std::make_shared<http::Responder>(std::move(*in_place_));
        in_place_ = shared_.get();
      }
      return shared_;
    }

   private:
    std::shared_ptr<http::Responder> shared_;
    http::Responder* in_place_;
  };
  void Answer(http::RequestContext* ctx, ResponderSlot r, const std::string& stream,
              const std::string& rendition, ObjectKey key, int hops,
              std::shared_ptr<Shedder::Token> token,
              int64_t hold_until_ms =
                  0);  // `hold_until_ms`: the first hold's end (the store's NowMs), 0 before any
  void ReceiveObject(http::RequestContext& ctx, std::shared_ptr<http::BodyReader> body,
                     http::Responder r, OriginStore::PublishRequest request);
  void ReceiveNotification(http::RequestContext& ctx, std::shared_ptr<http::BodyReader> body,
                           http::Responder r, std::string stream);

  const Clock& clock() const { return options_.clock ? *options_.clock : RealClock::Get(); }

  const OriginOptions options_;
  OriginStore* origin_;
  StreamManager* streams_;
  Shedder* shedder_;
  const PublishAuth* auth_;
  std::unique_ptr<Metrics> metrics_;
};

}  // namespace meshwork::streamer
