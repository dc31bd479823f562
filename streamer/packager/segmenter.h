// The deterministic segmenter (S-4, S-5, S-7).
//
// Timeline: a frame's 90 kHz timestamp is extended to an absolute value T = pts + W·2^33 + D,
// where the wrap count W is chosen once, from the wall clock at the first frame, so that
// T/90 is the closest such value to "now" in Unix milliseconds (nodes whose clocks agree
// within hours pick the same W), and D is 0 until the source's timeline jumped.
// Segment msn k starts at the first keyframe at or after k·segment duration, so msn and
// boundaries are a pure function of the source timestamps: two nodes fed the same source
// agree, whenever each started.
//
// Program date-time (S-5) is wall-clock time from the stream's timeline anchor (see
// common/time/timeline_anchor.h): PDT(segment) = anchor.wall_ms + (start − anchor.t90k)/90.
// The anchor comes from `TimelineAnchors` (central's, pushed with the stream): when a
// timeline starts (first frame, or after a discontinuity) the segmenter adopts central's
// anchor if it predicts this node's clock for the current T within kAnchorToleranceMs;
// otherwise it proposes its own {T of this frame, clock now} and uses it at once (the load
// report carries it to central). A central anchor that arrives or changes later is adopted
// the same way mid-timeline (nodes that proposed at the same time converge on central's).
// A segment is dated with the anchor in use when it was opened. It carries as its
// `timeline_origin` where its run of the timeline began: the anchor's point, or the first
// segment after a discontinuity (DASH starts a Period there, S-16a).
//
// A jump of the timeline (source restarted, input switched) is a discontinuity: D is set so
// the timeline resumes where it stopped plus the wall-clock time of the gap; every video
// rendition closes its open segment at its last frame, drops frames until its next keyframe,
// and marks the segment that keyframe opens (EXT-X-DISCONTINUITY), which takes the next msn:
// msn stay consecutive (RFC 8216), so after a gap they are offset from the multiples. The
// anchor is then chosen again, as above. A source whose timestamps step back by less than
// half a second is not jumping: its segments may then overlap by that much.
//
// Tracks: a segment open when a track is announced (audio's first ADTS header typically
// follows the first keyframe) lacks it. Before a rendition's first published segment it is
// dropped; after, it is published as made (leaving it out would leave its msn out of the
// playlists) and the next segment, made for the new tracks, is marked a discontinuity — so
// whether a segment is marked depends on what the node saw. A video track whose codec
// changed (H.264 ↔ HEVC) is handled as a jump of its rendition's timeline: the open segment
// ends at its last frame of the old codec, and the next keyframe opens a segment marked a
// discontinuity.
//
// Renditions: one per video track (PID order: v1, v2, …), whose MPEG-TS segments carry the
// first audio track muxed (HLS-TS); in CMAF form (S-16a) each carries its video only and
// the audio is a rendition of its own, "a1", cut at v1's boundaries and part boundaries
// within an AAC frame, once its audio reaches them (same msn, same part indices; a PES of
// several AAC frames is cut between them), its parts and segments dated by their samples.
// Audio-only sources make one rendition v1 in both forms.
//
// Each segment is produced twice from the same frames: as MPEG-TS (HLS) and as fMP4 (CMAF)
// parts of `part_ms` (a part closes at the first video frame at or after each part multiple
// from the segment start) whose concatenation is the .m4s segment (LL-HLS, DASH).
//
// A node that starts while a segment is under way never publishes that segment (nor its
// parts): the same msn must mean the same media on every node, and this one did not see the
// segment's first keyframe. Its first published segment is the first it saw from its
// boundary.
//
// Not thread-safe: one per stream, fed from one thread at a time (TimelineAnchors is the
// only state shared with other threads).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "common/log/log.h"
#include "common/stream/defaults.h"
#include "common/time/clock.h"
#include "streamer/media/fmp4_writer.h"
#include "streamer/media/frame.h"
#include "streamer/media/ts_muxer.h"
#include "streamer/packager/timeline_anchors.h"
#include "streamer/store/rendition_window.h"

namespace meshwork::streamer {

struct SegmenterOptions {
  int segment_ms = stream_defaults::kSegmentMs;
  int part_ms = stream_defaults::kPartMs;  // LL-HLS part target (S-10)
  int live_window = stream_defaults::kLiveWindow;
  // A forward jump larger than this (or any backward jump beyond half a second) is a
  // discontinuity rather than a pause of a continuous source.
  int max_forward_gap_ms = 10'000;
  size_t max_segment_bytes = 64ull << 20;
};

class Segmenter {
 public:
  using PublishFn =
      std::function<void(const RenditionInfo& info, std::shared_ptr<const Segment> segment)>;
  // A part of the open segment `msn` is complete (LL-HLS, S-10).
  using PublishPartFn = std::function<void(const RenditionInfo& info, int64_t msn,
                                           int64_t segment_start, std::shared_ptr<const Part>)>;

  // `anchors` (may be null: the segmenter then only uses its own proposals) must outlive
  // the segmenter.
  Segmenter(SegmenterOptions options, const Clock& clock, TimelineAnchors* anchors,
            PublishFn publish, PublishPartFn publish_part = nullptr);
  ~Segmenter();

  void OnTrack(const media::TrackInfo& track);
  void OnFrame(const media::Frame& frame);
  // The frames that follow come from another source: expect (and accept) a timeline jump.
  void OnSourceChanged();

  // S-5: the anchor segments are dated with (nullopt before the first frame).
  std::optional<TimelineAnchor> anchor() const { return anchor_; }

  // S-6: "msn:start:duration" of the latest segment of the first rendition ("" before one).
  std::string Fingerprint() const { return fingerprint_; }
  int64_t segments_published() const { return published_; }

  static constexpr int64_t kWrap = int64_t{1} << 33;

 private:
  struct Rendition;
  int64_t Extend(int64_t pts);
  void CheckJump(int64_t t);
  // Chooses the anchor at a timeline start, and adopts a new central anchor (S-5).
  void UpdateAnchor(int64_t t);
  Rendition* RenditionFor(uint16_t video_pid);
  Rendition* AudioRendition();  // "a1", made at the first audio frame of a video source
  // A break in what the segments hold without a jump in time (another input): every
  // rendition's next cut is a discontinuity that starts a new run.
  void MarkBreak();
  void Cut(Rendition& r, int64_t start, bool keyframe_start);
  void Open(Rendition& r, int64_t msn, int64_t start, bool discontinuity, bool whole);
  void Close(Rendition& r, int64_t end);
  // `last`: the part closes its segment (Close).
  void FlushPart(Rendition& r, int64_t end, bool last = false);
  // "a1" follows v1's part ends, closes and opens once its audio reaches them (audio often
  // arrives a PES behind the video of the same time): `Follow` queues one, `AddAudio` cuts
  // an arriving frame at the queued steps it crosses and applies them, `CatchUp` applies
  // those at or before `t` without waiting for audio (audio stopped, or a jump).
  struct FollowStep;
  void Follow(FollowStep step);
  void AddAudio(Rendition& a, media::Frame frame);
  void CatchUp(int64_t t);
  void ApplyStep(Rendition& a);
  void RebuildWriters(Rendition& r);
  // Wall clock of `t` by the anchor `r`'s open segment is dated with.
  static int64_t ProgramDateTimeMs(const Rendition& r, int64_t t);

  SegmenterOptions options_;
  const Clock& clock_;
  PublishFn publish_;
  PublishPartFn publish_part_;
  std::unique_ptr<TimelineAnchors> own_anchors_;  // when none was given
  TimelineAnchors* anchors_;
  std::optional<TimelineAnchor> anchor_;  // in use
  bool need_anchor_ = true;               // a timeline starts with the next frame
  // A source jumping on every frame logs one discontinuity and one proposal a second.
  log::Throttle jump_log_{1000};
  log::Throttle anchor_log_{1000};
  uint64_t central_seen_ = 0;  // central_generation() last looked at
  // Where the current run of the timeline began (90 kHz): the anchor's point, or the start
  // of the segment after the last discontinuity. Segments carry it as their timeline_origin.
  int64_t run_origin_ = 0;
  int64_t segment_ticks_;
  int64_t part_ticks_;
  std::optional<int64_t> base_;  // W·2^33, set at the first frame
  int64_t offset_ = 0;           // D
  std::optional<int64_t> last_t_;
  std::chrono::steady_clock::time_point last_frame_at_;
  bool expect_jump_ = false;
  bool pending_discontinuity_ = false;
  int64_t last_msn_ = -1;        // highest msn opened by any rendition
  int64_t jump_floor_msn_ = -1;  // last_msn_ at the last jump: the msn taken before it
  bool new_run_ = false;         // a jump happened and no cut after it has begun the new run yet
  int64_t msn_offset_ = 0;       // multiples skipped so far (msn = floor(T / duration) − offset)
  // The msn given to each recent multiple of the segment duration (its first cut), so that
  // every rendition numbers the same media alike; the last 16 are kept.
  std::map<int64_t, int64_t> msn_by_multiple_;
  std::map<uint16_t, media::TrackInfo> tracks_;
  std::optional<uint16_t> audio_pid_;
  std::optional<int64_t> first_audio_t_;
  std::map<uint16_t, std::unique_ptr<Rendition>> renditions_;  // by video PID (or audio PID)
  std::unique_ptr<Rendition> audio_;                           // "a1" (video sources only)
  Rendition* leader_ = nullptr;                                // v1 of a video source
  std::string fingerprint_;
  int64_t published_ = 0;
};

}  // namespace meshwork::streamer
