// One relayed stream of an edge (S-19…S-21, S-25, P-13): Relay's per-stream worker, apart
// from relay.cc for the file's size. A control thread finds the upstream list and reads the
// upstream's LL-HLS master; then one thread per rendition follows that rendition's playlists
// with blocking reloads, fetches each init, part and (when not assembled from its parts)
// segment once, shares a hinted part with waiting viewers as its bytes arrive, makes the
// MPEG-TS form from the CMAF segments (TsMaker), and publishes everything into the one store.
//
// Threads: the constructor starts the control thread; Upstream(), UpstreamTimeline(),
// Renditions(), Touch() and finished() are called from any thread (atomics, `mu_`, and
// UpstreamList's own lock); everything private runs on the relay's own threads, a `Follow`
// on its rendition's thread only. `ts_maker_` is set by the control thread before it starts
// the rendition threads, which then share it (TsMaker locks inside).
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/http/client.h"
#include "common/log/log.h"
#include "streamer/relay/relay.h"
#include "streamer/relay/ts_maker.h"
#include "streamer/relay/upstream_list.h"
#include "streamer/relay/upstream_playlist.h"
#include "streamer/store/in_flight.h"
#include "streamer/store/origin_store.h"

namespace meshwork::streamer::relay {

class Relay::StreamRelay {
 public:
  using Chunk = std::shared_ptr<const std::string>;

  // Starts the relay's control thread (which starts one thread per rendition).
  StreamRelay(Relay* relay, std::string stream);
  // Stops and joins every thread of the relay (each fetch in flight ends by its deadline).
  ~StreamRelay();

  // The node fetched from now; empty when none.
  std::string Upstream() { return upstreams_.node_id(); }
  // Its timeline fingerprint as central gave it (S-6); empty when none.
  std::string UpstreamTimeline() { return upstreams_.timeline_fingerprint(); }

  // The renditions the upstream's master named (empty until it was read).
  std::vector<std::string> Renditions() {
    absl::MutexLock lock(&mu_);
    return renditions_;
  }

  void Touch() { last_touch_ns_.store(relay_->clock_.Monotonic().time_since_epoch().count()); }
  bool finished() const { return finished_.load(); }

 private:
  bool Idle() const {
    auto last = std::chrono::steady_clock::time_point(
        std::chrono::steady_clock::duration(last_touch_ns_.load()));
    return relay_->clock_.Monotonic() - last > relay_->options_.idle_timeout;
  }
  bool Running() const { return !stop_.load() && !Idle(); }

  // Finds the upstream list, reads the master playlist and follows every rendition until
  // the relay stops or goes idle.
  void Run();

  bool Connect() { return upstreams_.Connect(); }
  // S-21: moves on from `failed` (a base URL), counted once however many threads saw it fail.
  void NextUpstream(const std::string& failed) {
    if (upstreams_.Next(failed) && relay_->failures_metric_) relay_->failures_metric_->Increment();
  }
  std::string Base() { return upstreams_.base_url(); }

  // A retry back-off on the relay's own thread; ends at once when the relay stops.
  void Pause(std::chrono::milliseconds d) {
    stopping_.WaitForNotificationWithTimeout(absl::FromChrono(d));
  }

  // One upstream request to `base_url` on `client` (the calling thread's kept-alive
  // connection). 404 and 410 are NotFound, any other answer than 200 FailedPrecondition (the
  // upstream is there; transport failures and deadlines are Unavailable and DeadlineExceeded).
  // `timing` receives the answer's X-Media-Timing field (left as is when it has none); with
  // `in_flight`, the body's pieces and that field are handed to the object as they arrive (P-13).
  // Playlists are asked for gzip-compressed (P-16: a parent edge reloads one per part and
  // rendition) and inflated here; the bytes counted are the compressed ones, what crossed.
  absl::StatusOr<Chunk> Get(http::KeepAliveClient& client, const std::string& base_url,
                            const std::string& target, std::chrono::milliseconds timeout,
                            std::string* timing = nullptr, GrowingObject* in_flight = nullptr);

  // S-20/L-10: the upstream's newest notification state, kept for every response here.
  void AdoptNotifications(std::string header);

  absl::Status Publish(const std::string& rendition, ObjectKey key, std::vector<Chunk> chunks,
                       std::shared_ptr<const MediaTiming> timing,
                       std::shared_ptr<const RenditionInfo> info);

  // P-13: a part fetched from upstream (on its preload hint, or listed there and not relayed
  // yet), registered in InFlightObjects from before its first byte until the store has it (or
  // the relay moves on): ended on destruction.
  class Hinted {
   public:
    Hinted(InFlightObjects* registry, std::string stream, std::string rendition, ObjectKey key,
           std::shared_ptr<GrowingObject> object)
        : registry_(registry),
          stream_(std::move(stream)),
          rendition_(std::move(rendition)),
          key_(key),
          object_(std::move(object)) {}
    ~Hinted() {
      // Out of the registry first: a viewer that Fail wakes looks the object up again and must
      // not find the failed one (it would hold on it again, hop after hop, then answer 404).
      registry_->End(stream_, rendition_, key_, object_);
      object_->Fail();  // a no-op once complete
    }
    Hinted(const Hinted&) = delete;
    Hinted& operator=(const Hinted&) = delete;
    ObjectKey key() const { return key_; }
    GrowingObject& object() { return *object_; }
    Chunk bytes;  // the whole part once fetched

   private:
    InFlightObjects* registry_;
    std::string stream_, rendition_;
    ObjectKey key_;
    std::shared_ptr<GrowingObject> object_;
  };

  // The state of one rendition's relay.
  struct Follow {
    std::string name;
    http::KeepAliveClient client;  // this rendition's upstream connection
    std::shared_ptr<RenditionInfo> info;
    uint32_t timescale = 0;
    bool has_ts = false;                        // the upstream has the MPEG-TS form too
    int64_t last_segment = -1;                  // the last complete segment published
    std::pair<int64_t, int> last_part{-1, -1};  // the last part published
    // Parts relayed of segments not yet complete, contiguous from part 0.
    std::map<int64_t, std::vector<Chunk>> parts;
    // S-21: the program date-time of the segments relayed lately (msn → ms), the timeline a
    // new upstream must share, and the upstream whose playlist was last relayed.
    std::map<int64_t, int64_t> relayed_pdt;
    std::map<int64_t, int64_t> relayed_start;  // msn → start (90 kHz), for S-6 fingerprints
    std::string followed_base;
    // The upstream this round of the rendition's loop asks (taken once per round: another
    // rendition's failover does not send the requests of a checked playlist elsewhere).
    std::string base;
    int other_timeline_in_row = 0;
    std::unique_ptr<Hinted> hinted;  // the hinted part fetched ahead of its listing
    // The program date-time the playlist gives the parts of segment `open_msn` (its own).
    int64_t open_msn = -1;
    int64_t open_pdt = 0;
    // S-25, S-16a: where the upstream's current run of the timeline began (its objects'
    // X-Media-Timing), so this node's DASH Periods are the upstream's.
    int64_t timeline_origin = 0;
  };

  // Publishes a relayed part with its timing and remembers it (the segment it completes is
  // assembled from the parts kept here). False when the store refused it.
  bool PublishPart(Follow& f, const UpstreamEntry& e, const Chunk& bytes);

  int64_t StartOf(const Follow& f, const std::string& bytes) const;

  std::shared_ptr<const MediaTiming> TimingOf(const Follow& f, const UpstreamEntry& e,
                                              const std::string& bytes) const;

  // S-25: the timeline run the upstream dates its objects on, from an answer's timing field
  // (kept when the field has none: an upstream that does not send it, or a packager's object).
  static void AdoptOrigin(Follow& f, const std::string& field);

  bool FetchInit(Follow& f);

  // S-21: how long a part (or the blocking reload for the next one) may take before the
  // upstream counts as failed: two part targets and a little.
  static std::chrono::milliseconds PartDeadline(const Follow& f) {
    int64_t part_ms = f.info && f.info->part_target_ms > 0 ? f.info->part_target_ms : 1000;
    return std::chrono::milliseconds(2 * part_ms + 250);
  }

  // Relays what `playlist` lists beyond what was relayed already. An object the upstream
  // lists as a gap, or answers 404/410 for (two per round at most), is passed over (counted
  // and logged): waiting for it would hold every later one. Any other failure (connection,
  // deadline, a 5xx, a third 404/410) is returned, and the caller moves to the next upstream
  // (S-21).
  absl::Status Relay1(Follow& f, const UpstreamMediaPlaylist& playlist);
  void PassOver(Follow& f, const UpstreamEntry& e, std::string_view why);

  void FollowRendition(const std::string& name);

  // P-13: the part the upstream's preload hint names, asked for while the upstream makes it
  // (it holds the request until the part is out, L-7) and shared with the viewers asking for
  // it here as its bytes arrive; kept in `f.hinted` until the next playlist lists it with its
  // timing. False when the upstream failed (gone or stalled: S-21 moves on); an answer such
  // as 404 leaves it to the blocking reload.
  bool FetchHinted(Follow& f, std::pair<int64_t, int> hint);

  // The part `key` registered as in flight (null without a registry, or when it is full or
  // has the part already). Viewers held for the part before the fetch began join it now.
  std::unique_ptr<Hinted> BeginShared(Follow& f, ObjectKey key);

  Relay* relay_;
  const std::string stream_;
  // Set by Run() before the rendition threads start; read by them.
  std::unique_ptr<TsMaker> ts_maker_;
  std::atomic<bool> stop_{false};
  log::Throttle pass_over_log_{1000};  // PassOver's lines, all renditions
  absl::Notification stopping_;
  std::atomic<bool> finished_{false};
  std::atomic<int64_t> last_touch_ns_{0};
  std::thread control_;
  UpstreamList upstreams_;
  absl::Mutex mu_;
  std::vector<std::string> renditions_ ABSL_GUARDED_BY(mu_);
};

}  // namespace meshwork::streamer::relay
