// One stream placed on this node: its inputs (S-1), input failover (S-2), one demuxer per
// input, and the segmenter publishing into the node's one store as pipeline "local" (init,
// `N.ts`, `N.m4s` as its parts' bytes, `N.P.m4s`).
//
// Failover: inputs are ranked in configured order; the active one is the first input that
// delivered a frame within `input_timeout_ms`. While the active input is silent past the
// timeout the next live one takes over; when an earlier input recovers it takes over again.
// Every input is demuxed (so recovery is seen), only the active one is packaged.
//
// Thread-safe: network sources, the push handler and report builders call in from their own
// threads; one mutex serialises the media path of the stream.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/time/clock.h"
#include "meshwork/v1/types.pb.h"
#include "streamer/config/stream_config.h"
#include "streamer/ingest/source.h"
#include "streamer/media/ts_demuxer.h"
#include "streamer/packager/segmenter.h"
#include "streamer/store/origin_store.h"

namespace meshwork::streamer {

class StreamPipeline {
 public:
  // `config` is the stream's config when the pipeline was made; a change of its packaging
  // settings makes a new pipeline (StreamManager), so it never changes under a pipeline.
  StreamPipeline(std::shared_ptr<const StreamConfig> config, OriginStore* store,
                 const Clock& clock);
  ~StreamPipeline();  // stops every source

  // Only a pipeline that packages its stream on this node takes publishers: one made for a
  // stream other nodes fill (relayed, S-19; published into, S-23) keeps its settings and
  // refuses them (NotFound), so an encoder pointed at the wrong node is told, not mixed in.
  // StreamManager calls TakePublishers() when it makes a pipeline that packages here (before
  // the pipeline can be found), and makes a new pipeline when a stream's role changes.
  void TakePublishers();
  // Starts the network sources (and takes publishers); failures are logged and retried by the
  // sources themselves (a bad URL is logged and skipped).
  void Start();
  // The stream was removed or its packaging changed (StreamManager made a new pipeline): its
  // sources stop now, and its live push and RTMP sessions are superseded (their next data is
  // refused, so their publishers reconnect, to the new pipeline). New sessions are refused.
  // Called from the thread that calls Start().
  void Retire();

  const StreamConfig& config() const { return *config_; }

  // S-5: the stream's anchor as central keeps it (nullopt: none yet). Any thread.
  void SetTimelineAnchor(std::optional<TimelineAnchor> anchor) { anchors_.SetCentral(anchor); }
  std::optional<TimelineAnchor> timeline_anchor() const { return anchors_.Central(); }

  // HTTP push (publish://). While a push session is live (begun, not ended), a new one is
  // refused with AlreadyExists (409) unless `take_over` (M-3: it holds the stream's token);
  // a session that takes over supersedes the live one, whose later chunks are ignored
  // (FeedPush returns false: its handler then stops reading). NotFound when the stream takes
  // no push input.
  absl::StatusOr<uint64_t> BeginPush(bool take_over);
  bool FeedPush(uint64_t session, std::span<const uint8_t> bytes);
  void EndPush(uint64_t session);

  // RTMP publishing (an `rtmp://` input): the same session rules as HTTP push, but what
  // arrives is already frames (streamer/rtmp turns FLV tags into them). A new session is a
  // new source: its tracks are announced again. PushTrack/PushFrame return false once the
  // session is superseded. NotFound when the stream takes no rtmp:// input.
  absl::StatusOr<uint64_t> BeginRtmp(bool take_over);
  bool PushTrack(uint64_t session, const media::TrackInfo& track);
  bool PushFrame(uint64_t session, media::Frame&& frame);
  void EndRtmp(uint64_t session);

  // S-7: the live edge advanced recently enough (LiveEdgeWorking: 3 target durations).
  bool Working() const;
  void FillReport(meshwork::v1::StreamReport& report) const;

 private:
  struct Input;
  void OnBytes(size_t input, std::span<const uint8_t> bytes);
  void OnTrackLocked(size_t input, const media::TrackInfo& track)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void OnFrameLocked(size_t input, media::Frame&& frame) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ChooseActiveLocked(size_t delivering) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Canonical PIDs, so that every input's tracks map to the same renditions.
  uint16_t CanonicalPidLocked(Input& input, uint16_t pid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::shared_ptr<const StreamConfig> config_;
  void PublishInitLocked(const RenditionInfo& info) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void LogRefused(const std::string& rendition, const std::string& object,
                  const absl::Status& status);

  OriginStore* store_;
  const Clock& clock_;
  TimelineAnchors anchors_;  // thread-safe; read by the segmenter, set by StreamManager
  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<Input>> inputs_ ABSL_GUARDED_BY(mu_);
  size_t active_ ABSL_GUARDED_BY(mu_) = 0;
  std::unique_ptr<Segmenter> segmenter_ ABSL_GUARDED_BY(mu_);
  // The init.mp4 last published per rendition.
  std::map<std::string, std::shared_ptr<const std::string>> published_init_ ABSL_GUARDED_BY(mu_);
  // An input that publishers write into (publish:// or rtmp://): one live session at a time.
  struct PushSlot {
    const char* scheme;
    std::optional<size_t> input;  // index in inputs_ (fixed after construction)
    uint64_t session = 0;
    bool live = false;  // `session` began and has not ended
  };
  absl::StatusOr<uint64_t> BeginSlot(PushSlot& slot, bool take_over)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  PushSlot push_ ABSL_GUARDED_BY(mu_){.scheme = "publish://", .input = std::nullopt};
  PushSlot rtmp_ ABSL_GUARDED_BY(mu_){.scheme = "rtmp://", .input = std::nullopt};
  bool packages_here_ ABSL_GUARDED_BY(mu_) = false;  // TakePublishers() or Start() ran
  bool retired_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<int64_t> last_publish_ms_{0};
  // Started by Start(), stopped by Retire() or the destructor (all on one thread).
  std::vector<std::unique_ptr<ingest::Source>> sources_;
};

}  // namespace meshwork::streamer
