// The one store of a node (L-1, L-2, L-7, L-10…L-14, L-17, L-19; spec 03, first paragraph):
// every object of every stream placed here, whatever made it — the local packager
// publishes init, `N.ts`, `N.m4s` and `N.P.m4s` as pipeline "local" (PublishLocal, zero
// copy), packagers publish over HTTP (`PUT` on the publish listener) — one candidate per
// pipeline, kept in memory and bounded per stream; each stream's policy (template, pipeline
// order, masks, versions) comes from central. Each rendition also keeps its playlist index
// (RenditionWindow: segments with timing, parts, the open segment), rebuilt by every publish,
// from which every playlist and MPD is rendered.
//
// Readers never wait for a publish's work: each stream is an immutable view (policy,
// renditions with their metadata and object index, notification state) replaced whole by a
// publish. A read finds the stream's slot in an index of weak references that Apply replaces
// whole (read through the calling thread's own cache: one atomic load while the index did not
// change, no lock) and takes the slot's current view under a short reader lock, which a
// publish holds only to swap one pointer, and copies one pointer. Publishes are serialised by
// one writers' mutex and copy only the small object index of the rendition they change, never
// a body.
// Holds (L-7, L-12) are waiters keyed by object, released by its next publish; blocking
// playlist reloads and streamed segments wait for a position of the rendition. Waiters are
// released after the writers' mutex is let go.
// Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/sync/snapshot.h"
#include "common/time/clock.h"
#include "nlohmann/json.hpp"
#include "streamer/store/object_index.h"
#include "streamer/store/origin_rules.h"
#include "streamer/store/rendition_window.h"
#include "streamer/store/waiters.h"

namespace meshwork::streamer {

// One rendition as published so far: immutable once shared.
struct OriginRendition {
  std::string name;
  RenditionMeta meta;
  ObjectIndex objects;
  uint64_t bytes = 0;
  bool fmp4 = false;  // published as CMAF (init.mp4 + .m4s) rather than MPEG-TS
  // The size of the newest segment's chosen candidate over its duration (master BANDWIDTH).
  uint64_t bitrate_bps = 0;
  // The playlist index, never null once the rendition exists.
  std::shared_ptr<const RenditionWindow> window;

  // The object's current state, or null. Counts as a store lookup (see OriginStore).
  std::shared_ptr<const StoredObject> Find(ObjectKey key) const;
};

// One stream: immutable once shared.
struct OriginStreamView {
  std::string name;
  std::shared_ptr<const OriginPolicy> policy;
  std::map<std::string, std::shared_ptr<const OriginRendition>> renditions;
  // L-10: the cumulative notification state as sent in X-Stream-Notifications (base64url
  // JSON), null before the first notification.
  std::shared_ptr<const std::string> notifications;
  uint64_t notification_seq = 0;
  nlohmann::json notification_events = nlohmann::json::array();
  uint64_t bytes = 0;
};

class OriginStore {
 public:
  struct Options {
    size_t min_retain_segments = 18;  // per rendition; at least 3 × the live window
    uint64_t max_stream_bytes = 512ull << 20;
    size_t max_waiters = 20'000;
    size_t max_notifications = 16;                // events kept in the cumulative state
    size_t max_notification_header_bytes = 4096;  // X-Stream-Notifications, encoded
    bool sweep_waiters = true;  // false: deadlines fire only on ExpireWaiters() (tests)
  };
  OriginStore(Options options, const Clock& clock);

  // The streams placed on this node. Streams no longer placed are dropped with their objects;
  // their waiters complete with kRemoved.
  void Apply(const StreamConfigs& streams);

  struct PublishRequest {
    std::string stream;
    std::string rendition;
    ObjectKey key;
    std::string pipeline;
    std::string region;
    uint32_t defects = 0;
    std::vector<std::shared_ptr<const std::string>> chunks;
    uint64_t size = 0;
    // From the local packager: the object's timing, and the rendition's tracks and targets.
    std::shared_ptr<const MediaTiming> timing;
    std::shared_ptr<const RenditionInfo> info;
  };
  enum class PublishResult { kCreated, kReplaced };
  // Makes a complete object visible (L-1). NotFound when the stream is not placed here.
  absl::StatusOr<PublishResult> Publish(PublishRequest request);

  // Called after every successful publish, on the publisher's thread, outside the store's
  // locks: in publish order for one publisher, but two publishers of one rendition (two
  // pipelines on two publish-listener threads, L-11) may run theirs in either order. A hook
  // must not block (queue and return). Add hooks before anything publishes; they are not
  // removed.
  using PublishHook =
      std::function<void(const std::string& stream, const std::string& rendition, ObjectKey key,
                         const std::shared_ptr<const Candidate>& candidate)>;
  void AddPublishHook(PublishHook hook) { hooks_.push_back(std::move(hook)); }

  // The local packager's publish (pipeline "local"): `chunks` are shared, not copied.
  absl::Status PublishLocal(const std::string& stream, const RenditionInfo& info, ObjectKey key,
                            std::vector<std::shared_ptr<const std::string>> chunks,
                            std::shared_ptr<const MediaTiming> timing);

  // L-10: adds `event` (a JSON object) to the stream's cumulative notification state.
  // Returns the new sequence number; NotFound when the stream is not placed here.
  absl::StatusOr<uint64_t> Notify(const std::string& stream, const nlohmann::json& event);
  // S-20: an edge keeps the newest X-Stream-Notifications its upstream sent (`header` as it
  // came, whose state has sequence `seq`): kept when `seq` is newer than the one held. Sizes
  // beyond the header bound are refused (OutOfRange); NotFound when the stream is not here.
  absl::Status AdoptNotifications(const std::string& stream, uint64_t seq, std::string header);

  // The stream's current view, or null when it is not placed here.
  std::shared_ptr<const OriginStreamView> View(const std::string& stream) const;

  // Decides a read of (stream, rendition, key) at the clock's now; counts index lookups.
  // A null rendition (unknown) gives kMissing.
  ReadDecision Decide(const OriginStreamView& view, const OriginRendition* rendition,
                      ObjectKey key) const;

  // Holds until the object is published again (its generation passes `seen_generation`) or
  // `deadline` (of clock().Monotonic()). ResourceExhausted beyond max_waiters.
  absl::Status Wait(const std::string& stream, const std::string& rendition, ObjectKey key,
                    uint64_t seen_generation, boost::asio::any_io_executor executor,
                    Waiters::TimePoint deadline, Waiters::Callback callback);

  // P-13: releases the viewers held for the object (kPublished) so that they look again: a
  // relay has just begun it in flight, and they join it as its bytes arrive instead of waiting
  // for the whole object. A released viewer that finds nothing new holds again.
  void WakeObjectWaiters(const std::string& stream, const std::string& rendition, ObjectKey key);

  // Holds until (stream, rendition) has published `position` (a blocking playlist reload,
  // a streamed segment); one already published completes at once. ResourceExhausted beyond
  // max_waiters.
  absl::Status WaitPosition(const std::string& stream, const std::string& rendition,
                            Position position, boost::asio::any_io_executor executor,
                            std::chrono::steady_clock::time_point deadline,
                            Waiters::Callback callback);

  // The playlist indexes of a stream's renditions in name order (empty when unknown).
  std::vector<std::shared_ptr<const RenditionWindow>> Windows(const std::string& stream) const;
  std::shared_ptr<const RenditionWindow> Window(const std::string& stream,
                                                const std::string& rendition) const;
  // The wall-clock ms of the stream's newest publish into any rendition (0: none yet).
  int64_t LastPublishMs(const std::string& stream) const;

  int64_t NowMs() const { return UnixMillis(clock_.Now()); }
  const Clock& clock() const { return clock_; }
  // Object index lookups made by reads so far (P-5: 404/410 storms make none).
  uint64_t lookups() const { return lookups_.load(std::memory_order_relaxed); }
  size_t waiting() const { return waiters_.size(); }
  // Answers the held requests whose deadline has passed (see Waiters::Expire).
  size_t ExpireWaiters() { return waiters_.Expire(); }

 private:
  using Slot = Snapshot<OriginStreamView>;
  std::shared_ptr<Slot> SlotOf(const std::string& stream) const;
  void TrimLocked(OriginStreamView& view, OriginRendition& changed)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);

  const Options options_;
  const Clock& clock_;
  uint64_t policy_serial_ = 0;  // OriginPolicy::serial of the last Apply (under write_mu_)
  absl::Mutex write_mu_;        // serialises publishes and configuration changes
  mutable absl::Mutex map_mu_;
  std::map<std::string, std::shared_ptr<Slot>> streams_ ABSL_GUARDED_BY(map_mu_);
  // What SlotOf() reads on every request: streams_ as weak references, replaced whole under
  // map_mu_ whenever streams_ changes and read through each thread's cache without a lock
  // (P-5); a cache never keeps a removed stream's slot alive.
  using SlotIndex = std::map<std::string, std::weak_ptr<Slot>, std::less<>>;
  void PublishSlotIndexLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(map_mu_);
  Snapshot<SlotIndex> slot_index_;
  std::atomic<uint64_t> serial_{0};
  mutable std::atomic<uint64_t> lookups_{0};
  Waiters waiters_;
  std::vector<PublishHook> hooks_;  // set before publishing starts, then only read
};

// The version each listed segment of `rendition` is served under (L-14), 0 where no
// candidate of it may be served (masked, L-13): what media playlists mark as EXT-X-GAP.
// `ts`: of the MPEG-TS form, else of the CMAF one, where a segment still in progress takes
// the version of its first part (a part once listed never turns from GAP to not-GAP: hls.js
// keeps a part's GAP flag for good). The result keeps `view` alive.
std::function<uint64_t(int64_t msn)> ListedVersions(std::shared_ptr<const OriginStreamView> view,
                                                    const std::string& rendition, bool ts);

// The most renditions one stream holds (a ladder is a handful; R-3).
inline constexpr size_t kMaxRenditionsPerStream = 64;

// Whether `key` may be published into `rendition` now: ResourceExhausted (429) for a new
// rendition past kMaxRenditionsPerStream, OutOfRange for an msn beyond kMaxMsn,
// FailedPrecondition for a segment due more than 3 segments from now (per the template; not
// checked for `timed` objects, the local packager's, whose timing makes the template) or
// more than 1000 ahead of the rendition's newest one.
absl::Status CheckPublishable(const OriginStreamView& view, const std::string& rendition,
                              ObjectKey key, int64_t now_ms, bool timed = false);

// The waiter key of one object (also used by tests).
std::string ObjectWaiterKey(const std::string& stream, const std::string& rendition, ObjectKey key);

}  // namespace meshwork::streamer
