#include "streamer/packager/segmenter.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "streamer/media/codec_parsers.h"

namespace meshwork::streamer {

// A step of v1 that "a1" takes once its audio gets there (Follow).
struct Segmenter::FollowStep {
  enum Kind { kPart, kClose, kOpen } kind = kPart;
  int64_t at = 0;  // 90 kHz: the part's end, the close's end, the open's start
  int index = 0;   // kPart, kClose: the part index it ends under (S-16a)
  // kOpen: what Open takes, and the anchor and run origin in use at the leader's cut.
  int64_t msn = 0;
  bool discontinuity = false;
  bool whole = false;
  std::optional<TimelineAnchor> anchor;
  int64_t origin = 0;

  static FollowStep Ending(Kind kind, int64_t at, int index) {
    FollowStep step;
    step.kind = kind;
    step.at = at;
    step.index = index;
    return step;
  }
};

struct MuxedTrack {
  uint16_t pid = 0;
  media::Codec codec = media::Codec::kUnknown;
  size_t config = 0;  // a hash of what the track's init describes
  bool operator==(const MuxedTrack&) const = default;
};
using TrackKeyList = std::vector<MuxedTrack>;

struct Segmenter::Rendition {
  RenditionInfo info;
  uint16_t video_pid = 0;                 // 0 for audio-only and for "a1"
  bool follower = false;                  // "a1": its cuts and parts follow the leader's
  std::unique_ptr<media::TsMuxer> muxer;  // null when the rendition has no MPEG-TS form
  std::unique_ptr<media::Fmp4Writer> fmp4;
  std::vector<MuxedTrack> muxed_tracks;  // what the writers were made for (TrackKeys)
  std::optional<int64_t> first_t;        // the first frame seen that drives its cuts
  bool started = false;                  // a segment was opened before (later ones are whole)
  // The fMP4 side of the open segment.
  std::vector<media::Frame> part_frames;
  size_t part_frame_bytes = 0;  // their data, counted against max_segment_bytes
  bool capped = false;          // the open segment reached max_segment_bytes (logged once)
  int part_index = 0;
  int64_t part_start = 0;
  uint32_t fragment_sequence = 0;
  std::vector<std::shared_ptr<const Part>> parts;
  uint64_t cmaf_bytes = 0;   // of the parts made so far
  size_t last_ts_bytes = 0;  // the previous segment's MPEG-TS size (to reserve the next)
  // The open segment.
  bool open = false;
  bool whole = false;  // seen from its boundary: it (and its parts) may be published
  int64_t msn = -1;
  int64_t start = 0;
  int64_t last_t = 0;       // timestamp of the last frame that drives cuts
  int64_t last_step = 0;    // and its distance from the one before (≈ frame duration)
  bool has_last_t = false;  // last_t is a frame's (until then there is no step to measure)
  // The timeline jumped since this rendition's last cut: its next one is a discontinuity
  // (another video rendition's keyframe may have taken the stream's pending one first).
  bool jumped = false;
  bool published_any = false;   // a segment of it went out (a later one left out is a hole)
  bool tracks_changed = false;  // the segment closed lacked a track: the next is discontinuous
  bool discontinuity = false;
  std::optional<TimelineAnchor> anchor;  // dates the open segment: the one in use at its cut
  int64_t origin = 0;                    // where its run of the timeline began (run_origin_)
  std::string bytes;
  std::deque<FollowStep> steps;  // "a1": the leader's steps its audio has not reached yet

  bool InTs(uint16_t pid) const {
    return std::any_of(info.tracks.begin(), info.tracks.end(),
                       [pid](const auto& t) { return t.pid == pid; });
  }
  bool InCmaf(uint16_t pid) const {
    return std::any_of(info.cmaf_tracks.begin(), info.cmaf_tracks.end(),
                       [pid](const auto& t) { return t.pid == pid; });
  }
};

namespace {

// "a1": moves out of `frames` what starts at or after `at` — whole frames, and the ADTS frames
// of a PES across `at` — and returns it, in order.
std::vector<media::Frame> TakeFramesFrom(std::vector<media::Frame>& frames, int64_t at) {
  std::vector<media::Frame> later;
  size_t kept = 0;
  for (auto& f : frames) {
    if (auto rest = media::SplitAdtsAt(f, at)) later.push_back(std::move(*rest));
    if (!f.data) continue;
    if (&frames[kept] != &f) frames[kept] = std::move(f);
    ++kept;
  }
  frames.resize(kept);
  return later;
}

size_t DataBytes(const std::vector<media::Frame>& frames) {
  size_t bytes = 0;
  for (const auto& f : frames) bytes += f.data ? f.data->size() : 0;
  return bytes;
}

// what the open segment holds — its MPEG-TS bytes, its parts and the frames of the part
// in progress — is bounded; past it frames are dropped until the next cut (a source without
// keyframes, or audio whose video stopped, would otherwise grow it for ever). Logged once.
template <typename R>
bool OverCap(R& r, size_t max_bytes) {
  if (r.bytes.size() + r.cmaf_bytes + r.part_frame_bytes <= max_bytes) return false;
  if (!r.capped) {
    r.capped = true;
    log::Warn("segment_too_large", {{"msn", r.msn},
                                    {"rendition", r.info.name},
                                    {"max_segment_bytes", max_bytes},
                                    {"action", "frames dropped until the next cut"}});
  }
  return true;
}

// What a rendition's writers were made for, per track: its PID, codec, and what its init
// segment describes (S-10: an encoder restarted at another resolution, or AAC at another
// rate, needs a new init; the fMP4 samples carry no parameter sets of their own). The
// picture size and codec string stand for the SPS (a PPS alone changing is not counted: some
// encoders alternate PPSs, which would cut a segment each time).
MuxedTrack KeyOf(const media::TrackInfo& t) {
  std::string config = absl::StrCat(t.codec_string, "|", t.width, "x", t.height, "|", t.sample_rate,
                                    "|", t.channels, "|", t.audio_specific_config);
  return MuxedTrack{t.pid, t.codec, std::hash<std::string>{}(config)};
}

TrackKeyList TrackKeys(const RenditionInfo& info) {
  TrackKeyList keys;
  for (const auto& t : info.tracks) keys.push_back(KeyOf(t));
  keys.push_back(MuxedTrack{});  // separates the two forms
  for (const auto& t : info.cmaf_tracks) keys.push_back(KeyOf(t));
  return keys;
}

// Whether `now` only adds tracks to `before` (none gone, none with another codec): frames
// of the tracks a segment was made for are still what its writers expect.
bool OnlyAdded(const TrackKeyList& before, const TrackKeyList& now) {
  return std::all_of(before.begin(), before.end(), [&now](const auto& key) {
    return std::find(now.begin(), now.end(), key) != now.end();
  });
}

int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

}  // namespace

Segmenter::Segmenter(SegmenterOptions options, const Clock& clock, TimelineAnchors* anchors,
                     PublishFn publish, PublishPartFn publish_part)
    : options_(options),
      clock_(clock),
      publish_(std::move(publish)),
      publish_part_(std::move(publish_part)),
      own_anchors_(anchors ? nullptr : std::make_unique<TimelineAnchors>()),
      anchors_(anchors ? anchors : own_anchors_.get()),
      segment_ticks_(static_cast<int64_t>(options.segment_ms) * 90),
      part_ticks_(static_cast<int64_t>(std::max(options.part_ms, 50)) * 90) {}

void Segmenter::RebuildWriters(Rendition& r) {
  r.muxer = r.info.tracks.empty() ? nullptr : std::make_unique<media::TsMuxer>(r.info.tracks);
  r.fmp4 = std::make_unique<media::Fmp4Writer>(r.info.cmaf_tracks);
  r.info.init = std::make_shared<const std::string>(r.fmp4->InitSegment());
  r.muxed_tracks = TrackKeys(r.info);
}

int64_t Segmenter::ProgramDateTimeMs(const Rendition& r, int64_t t) {
  return r.anchor ? r.anchor->WallAt(t) : FloorDiv(t, 90);  // (no anchor: unreachable)
}

// The tracks of each form of a rendition (see the header): video renditions mux the audio
// into MPEG-TS only; "a1" is CMAF only; an audio-only v1 has its audio in both.
void SetTracks(const std::map<uint16_t, media::TrackInfo>& tracks, std::optional<uint16_t> audio,
               uint16_t video_pid, bool follower, RenditionInfo& info) {
  info.tracks.clear();
  info.cmaf_tracks.clear();
  if (follower) {
    if (audio) info.cmaf_tracks.push_back(tracks.at(*audio));
    return;
  }
  if (video_pid) {
    info.tracks.push_back(tracks.at(video_pid));
    info.cmaf_tracks.push_back(tracks.at(video_pid));
    if (audio) info.tracks.push_back(tracks.at(*audio));
    return;
  }
  if (audio) {
    info.tracks.push_back(tracks.at(*audio));
    info.cmaf_tracks.push_back(tracks.at(*audio));
  }
}

void Segmenter::FlushPart(Rendition& r, int64_t end, bool last) {
  if (r.part_frames.empty()) return;
  if (&r == leader_ && audio_ && !last) {
    // "a1" closes its part where v1 does (within an AAC frame, once its audio gets there),
    // under the same index (S-16a: the renditions' parts line up, so a player switching
    // between them finds the same msn.part everywhere).
    Follow(FollowStep::Ending(FollowStep::kPart, end, r.part_index));
  }
  // "a1" holds the audio that starts before the leader's part ends (AddAudio) and is dated
  // by it, so its playlists list the time its samples cover: a player that places parts by
  // the listed times (Shaka) finds no hole between them.
  auto part = std::make_shared<Part>();
  part->index = r.part_index;
  part->start = r.follower ? r.part_frames.front().dts : r.part_start;
  // A source stepping back in time can end a part before it began: it lasts a tick then,
  // and the next one starts after it, so parts stay contiguous and sum to their segment.
  const int64_t part_end =
      std::max(r.follower ? media::AdtsEnd(r.part_frames.back()) : end, part->start + 1);
  part->duration = part_end - part->start;
  part->last = last;
  part->discontinuity = r.discontinuity;
  part->independent =
      r.part_frames.front().keyframe && r.part_frames.front().codec != media::Codec::kAac;
  if (!r.video_pid) part->independent = true;
  std::map<uint16_t, int64_t> end_dts;
  if (r.video_pid) end_dts[r.video_pid] = end;
  part->data = std::make_shared<const std::string>(
      r.fmp4->Fragment(r.part_frames, ++r.fragment_sequence, end_dts));
  r.part_frames.clear();
  r.part_frame_bytes = 0;
  part->program_date_time_ms = ProgramDateTimeMs(r, part->start);
  part->timeline_origin = r.origin;
  r.cmaf_bytes += part->data->size();
  r.parts.push_back(part);
  ++r.part_index;
  r.part_start = r.follower ? end : part_end;
  if (publish_part_ && r.whole) publish_part_(r.info, r.msn, r.start, std::move(part));
}

Segmenter::~Segmenter() = default;

void Segmenter::OnTrack(const media::TrackInfo& track) {
  tracks_[track.pid] = track;
  if (track.is_audio() && !audio_pid_) audio_pid_ = track.pid;
  // Renditions carry a copy of the track infos; refresh them (resolution changes show).
  for (auto& [pid, r] : renditions_) {
    SetTracks(tracks_, audio_pid_, r->video_pid, false, r->info);
    // A track that changed codec or configuration (KeyOf): what comes now is not for the open
    // segment's writers. As at a jump, the segment ends at its last frame and the next
    // keyframe opens one marked a discontinuity, with writers and an init for the new tracks
    // (so no segment mixes codecs or configurations, and none is left out).
    if (r->open && !OnlyAdded(r->muxed_tracks, TrackKeys(r->info))) {
      r->jumped = true;
      jump_floor_msn_ = last_msn_;
      new_run_ = true;
    }
  }
  if (audio_) SetTracks(tracks_, audio_pid_, 0, true, audio_->info);
}

int64_t Segmenter::Extend(int64_t pts) {
  if (!base_) {
    int64_t now90k = UnixMillis(clock_.Now()) * 90;
    int64_t wraps = static_cast<int64_t>(
        std::llround(static_cast<double>(now90k - pts) / static_cast<double>(kWrap)));
    base_ = wraps * kWrap;
  }
  return pts + *base_ + offset_;
}

void Segmenter::OnSourceChanged() {
  expect_jump_ = true;
  first_audio_t_.reset();
  if (!last_t_) return;
  // S-2: another input's frames follow, even on a continuous timeline (redundant encoders
  // locked to one timecode): its P-frames refer to pictures the old input sent, so the open
  // segments end at their last frame and the next keyframe opens one after a discontinuity,
  // as at a jump, without moving the timeline.
  MarkBreak();
}

void Segmenter::MarkBreak() {
  pending_discontinuity_ = true;
  for (auto& [pid, r] : renditions_) r->jumped = true;
  // As after a jump: the msn of the multiple being cut is taken (numbered afresh), and the
  // next cut begins a new run of the timeline (a DASH Period, S-16a).
  jump_floor_msn_ = last_msn_;
  new_run_ = true;
}

void Segmenter::CheckJump(int64_t t) {
  auto now = clock_.Monotonic();
  if (last_t_) {
    int64_t step = t - *last_t_;
    bool jumped = step < -45'000 || step > int64_t{options_.max_forward_gap_ms} * 90;
    if (jumped) {
      // Resume where the timeline stopped, plus the time the source was away.
      int64_t gap =
          std::chrono::duration_cast<std::chrono::milliseconds>(now - last_frame_at_).count() * 90;
      int64_t resume = *last_t_ + std::max<int64_t>(gap, 90 * 40);
      offset_ += resume - t;
      pending_discontinuity_ = true;
      for (auto& [pid, r] : renditions_) r->jumped = true;
      jump_floor_msn_ = last_msn_;
      new_run_ = true;
      need_anchor_ = true;  // a new timeline: choose its anchor again (S-7)
      // A source can jump on every frame: one line a second at most.
      uint64_t held_back = 0;
      if (jump_log_.Allow(UnixMillis(clock_.Now()), &held_back)) {
        log::Info("timeline_discontinuity", {{"step_ms", step / 90},
                                             {"gap_ms", gap / 90},
                                             {"expected", expect_jump_},
                                             {"held_back", held_back}});
      }
    }
  }
  expect_jump_ = false;
  last_frame_at_ = now;
}

void Segmenter::UpdateAnchor(int64_t t) {
  uint64_t generation = anchors_->central_generation();
  if (!need_anchor_ && generation == central_seen_) return;
  central_seen_ = generation;
  const int64_t now = UnixMillis(clock_.Now());
  std::optional<TimelineAnchor> central = anchors_->Central();
  if (central && AnchorPredicts(*central, t, now)) {
    if (anchor_ != central) {
      anchor_ = central;
      run_origin_ = anchor_->t90k;
      anchors_->SetInUse(*anchor_);
      log::Info("timeline_anchor_adopted", {{"t90k", anchor_->t90k},
                                            {"wall_ms", anchor_->wall_ms},
                                            {"error_ms", central->WallAt(t) - now}});
    }
  } else if (need_anchor_) {
    anchor_ = TimelineAnchor{t, now};
    run_origin_ = t;
    anchors_->SetInUse(*anchor_);
    uint64_t held_back = 0;
    if (anchor_log_.Allow(now, &held_back)) {
      log::Info("timeline_anchor_proposed",
                {{"t90k", t},
                 {"wall_ms", now},
                 {"central_error_ms", central ? central->WallAt(t) - now : int64_t{0}},
                 {"central", central.has_value()},
                 {"held_back", held_back}});
    }
  }
  need_anchor_ = false;
}

Segmenter::Rendition* Segmenter::RenditionFor(uint16_t pid) {
  auto it = renditions_.find(pid);
  if (it != renditions_.end()) return it->second.get();
  auto r = std::make_unique<Rendition>();
  const media::TrackInfo& track = tracks_[pid];
  r->video_pid = track.is_video() ? pid : 0;
  r->info.name = absl::StrCat("v", renditions_.size() + 1);
  r->info.target_duration_ms = options_.segment_ms;
  r->info.part_target_ms = options_.part_ms;
  r->info.live_window = options_.live_window;
  SetTracks(tracks_, audio_pid_, r->video_pid, false, r->info);
  RebuildWriters(*r);
  Rendition* raw = r.get();
  renditions_.emplace(pid, std::move(r));
  if (raw->video_pid && !leader_) leader_ = raw;
  return raw;
}

Segmenter::Rendition* Segmenter::AudioRendition() {
  if (audio_) return audio_.get();
  audio_ = std::make_unique<Rendition>();
  audio_->follower = true;
  audio_->info.name = "a1";
  audio_->info.target_duration_ms = options_.segment_ms;
  audio_->info.part_target_ms = options_.part_ms;
  audio_->info.live_window = options_.live_window;
  SetTracks(tracks_, audio_pid_, 0, true, audio_->info);
  RebuildWriters(*audio_);
  return audio_.get();
}

void Segmenter::Follow(FollowStep step) {
  if (!audio_) return;
  // After a jump the audio's times restart elsewhere: what "a1" still owes the old timeline
  // is done now.
  if (step.kind == FollowStep::kOpen && step.discontinuity) {
    CatchUp(std::numeric_limits<int64_t>::max());
  }
  const int64_t at = step.at;
  const bool close = step.kind == FollowStep::kClose;
  audio_->steps.push_back(std::move(step));
  if (close) return;  // taken with the open that follows it (a1 is never left closed)
  // Audio that is already past the step (muxers often send it ahead of the video of the same
  // time) is cut there now.
  Rendition& a = *audio_;
  while (!a.steps.empty() && !a.part_frames.empty() &&
         media::AdtsEnd(a.part_frames.back()) > a.steps.front().at) {
    ApplyStep(a);
  }
  // Audio more than a segment behind (or stopped) does not hold "a1" back, nor grow the queue.
  CatchUp(at - segment_ticks_);
}

void Segmenter::CatchUp(int64_t t) {
  while (audio_ && !audio_->steps.empty() && audio_->steps.front().at <= t) ApplyStep(*audio_);
}

void Segmenter::ApplyStep(Rendition& a) {
  FollowStep step = std::move(a.steps.front());
  a.steps.pop_front();
  // What the part holds from the step's time on is the next part's.
  std::vector<media::Frame> later = TakeFramesFrom(a.part_frames, step.at);
  a.part_frame_bytes = DataBytes(a.part_frames);
  switch (step.kind) {
    case FollowStep::kPart:
      // v1's index even after one of v1's parts had no audio (a1 then skips a number): the
      // index names the same time on every pipeline of the stream, so an origin choosing each
      // part among pipelines (L-12) never mixes two numberings.
      a.part_index = step.index;
      FlushPart(a, step.at);
      break;
    case FollowStep::kClose:
      a.part_index = step.index;  // its last part under v1's index (S-16a)
      Close(a, step.at);
      break;
    case FollowStep::kOpen:
      Open(a, step.msn, step.at, step.discontinuity, step.whole);
      a.anchor = step.anchor;  // as dated at v1's cut
      a.origin = step.origin;
      break;
  }
  for (auto& f : later) AddAudio(a, std::move(f));
}

// Audio that comes while "a1" is closed with nothing queued is dropped: before the first open
// and after a jump (with audio sent ahead of video, the first segment then starts up to a PES
// after v1's cut). Audio more than a segment late (CatchUp went on without it) joins the part
// in progress: the times listed stay those of the samples, contiguous with what came before.
void Segmenter::AddAudio(Rendition& a, media::Frame frame) {
  auto append = [&](media::Frame f) {
    if (!a.open || !f.data || !a.InCmaf(f.pid) || OverCap(a, options_.max_segment_bytes)) return;
    a.part_frame_bytes += f.data->size();
    a.part_frames.push_back(std::move(f));
  };
  // A frame past a step's time takes the step first; one across it (a PES of several AAC
  // frames) is cut there, its head before the step and its tail after.
  while (!a.steps.empty()) {
    const int64_t at = a.steps.front().at;
    if (frame.dts >= at) {
      ApplyStep(a);
      continue;
    }
    auto rest = media::SplitAdtsAt(frame, at);
    if (!rest) break;
    append(std::move(frame));
    frame = std::move(*rest);
    ApplyStep(a);
  }
  append(std::move(frame));
}

void Segmenter::Close(Rendition& r, int64_t end) {
  if (!r.open) return;
  if (&r == leader_ && audio_) Follow(FollowStep::Ending(FollowStep::kClose, end, r.part_index));
  auto discard = [&r] {
    r.bytes.clear();
    r.part_frames.clear();
    r.part_frame_bytes = 0;
    r.parts.clear();
    r.cmaf_bytes = 0;
    r.open = false;
  };
  if (r.muxed_tracks != TrackKeys(r.info)) {
    // A track appeared while this segment was open (typically audio, whose first ADTS
    // header follows the first keyframe): the segment lacks it. At the start, players
    // switching renditions or codecs mid-stream is worse than one segment less. Later, a
    // segment left out would leave its msn out of the rendition's playlists (RFC 8216 numbers
    // segments by their place), so it is published as made, and the next one, made for the
    // new tracks, follows a discontinuity (as RFC 8216 asks for a change of tracks). A track
    // that changed codec ended the segment at its last frame of the old one (OnTrack).
    if (!r.published_any) {
      log::Info("segment_dropped",
                {{"msn", r.msn}, {"rendition", r.info.name}, {"reason", "tracks changed"}});
      return discard();
    }
    r.tracks_changed = true;
    log::Info("tracks_changed", {{"msn", r.msn}, {"rendition", r.info.name}});
  }
  if (!r.whole) {
    log::Info("segment_dropped", {{"msn", r.msn},
                                  {"rendition", r.info.name},
                                  {"reason", "joined after its first keyframe"}});
    return discard();
  }
  FlushPart(r, end, true);
  auto segment = std::make_shared<Segment>();
  segment->msn = r.msn;
  segment->start = r.start;
  segment->duration = std::max<int64_t>(end - r.start, 1);
  if (!r.parts.empty()) {  // the span of its parts ("a1"'s are dated by its audio)
    segment->start = r.parts.front()->start;
    segment->duration =
        std::max<int64_t>(r.parts.back()->start + r.parts.back()->duration - segment->start, 1);
  }
  segment->program_date_time_ms = ProgramDateTimeMs(r, segment->start);
  segment->timeline_origin = r.origin;
  segment->discontinuity = r.discontinuity;
  r.last_ts_bytes = r.bytes.size();
  if (r.muxer) segment->ts = std::make_shared<const std::string>(std::move(r.bytes));
  r.bytes.clear();
  segment->parts = std::move(r.parts);
  r.parts.clear();
  r.cmaf_bytes = 0;
  r.open = false;
  if (renditions_.begin()->second.get() == &r) {
    fingerprint_ = absl::StrCat(segment->msn, ":", segment->start, ":", segment->duration);
  }
  ++published_;
  r.published_any = true;
  publish_(r.info, std::move(segment));
}

void Segmenter::Cut(Rendition& r, int64_t start, bool discontinuity) {
  int64_t multiple = FloorDiv(start, segment_ticks_);
  // Every rendition cutting at the same multiple gets the msn the first one chose there.
  auto known = msn_by_multiple_.find(multiple);
  int64_t k = known != msn_by_multiple_.end() ? known->second : multiple - msn_offset_;
  if (r.open && k <= r.msn && !discontinuity) return;  // same segment continues
  // A jump ends the open segment at its last frame, not at the resumed timeline (nor past
  // it: a source's last step before the jump can be longer than the time it was away).
  Close(r, discontinuity ? std::min(r.last_t + std::max<int64_t>(r.last_step, 90),
                                    std::max(start, r.last_t + 1))
                         : start);
  // After a jump the timeline may resume inside the multiple of the segment just closed (a
  // source back within a segment duration): that multiple's msn is taken, so it is numbered
  // afresh like an unknown one — unless another rendition already numbered it after the
  // jump. Nor does a rendition ever open an msn it already had.
  const bool reused =
      known != msn_by_multiple_.end() &&
      ((discontinuity && known->second <= jump_floor_msn_) || known->second <= r.msn);
  if (known == msn_by_multiple_.end() || reused) {
    // Media sequence numbers of a playlist are consecutive (RFC 8216): when the timeline
    // skips multiples (a gap, a GOP longer than the segment duration), the numbering closes
    // up and stays shifted from then on.
    int64_t previous = std::max(r.msn, last_msn_);
    if (previous >= 0 && k > previous + 1) {
      msn_offset_ += k - (previous + 1);
      k = previous + 1;
    }
    if (previous >= 0 && k <= previous && (discontinuity || r.msn >= 0)) k = previous + 1;
    msn_by_multiple_[multiple] = k;
    while (msn_by_multiple_.size() > 16) msn_by_multiple_.erase(msn_by_multiple_.begin());
  }
  // The first segment this node opens is whole only if it saw the stream before the
  // multiple (or the keyframe sits on it): otherwise an earlier keyframe of the same
  // segment went by unseen, and another node's msn k starts there.
  // A discontinuity starts a new run of the timeline here (a new DASH Period, S-16a): the
  // numbering closed up across the gap, so the media timeline no longer follows the msn.
  // Only the stream's first cut after the jump does: another rendition's keyframe may come
  // in another multiple, and the run must not begin twice.
  if (discontinuity && new_run_) {
    if (known == msn_by_multiple_.end() || reused) run_origin_ = start;
    new_run_ = false;
  }
  bool whole = r.started || discontinuity || start == multiple * segment_ticks_ ||
               (r.first_t && *r.first_t < multiple * segment_ticks_);
  Open(r, k, start, discontinuity, whole);
  last_msn_ = std::max(last_msn_, k);
  if (&r == leader_ && audio_) {
    Follow({FollowStep::kOpen, start, 0, k, discontinuity, whole, anchor_, run_origin_});
  }
}

void Segmenter::Open(Rendition& r, int64_t msn, int64_t start, bool discontinuity, bool whole) {
  r.open = true;
  r.capped = false;
  r.started = true;
  r.whole = whole;
  r.msn = msn;
  r.start = start;
  r.anchor = anchor_;
  r.origin = run_origin_;
  r.discontinuity = discontinuity || r.tracks_changed;
  r.tracks_changed = false;
  // The step from the last frame before a jump to the first after it is the jump, not a
  // frame's duration: a jump right after this one must not close the segment that far on.
  if (discontinuity) r.has_last_t = false;
  r.bytes.clear();
  // Room for a segment like the last one: no reallocation while it is muxed (P-7).
  r.bytes.reserve(r.last_ts_bytes + r.last_ts_bytes / 8);
  // Tracks may have appeared since the muxer was made (audio's first ADTS header often comes
  // after the first video frame): a segment boundary is where the muxer can change.
  if (r.muxed_tracks != TrackKeys(r.info)) RebuildWriters(r);
  if (r.muxer) r.muxer->WriteTables(r.bytes);
  r.part_frames.clear();
  r.part_frame_bytes = 0;
  r.part_index = 0;
  r.part_start = start;
  r.parts.clear();
  r.cmaf_bytes = 0;
}

void Segmenter::OnFrame(const media::Frame& frame) {
  if (!tracks_.contains(frame.pid)) return;  // no track info yet
  int64_t t = Extend(frame.dts);
  CheckJump(t);
  t = Extend(frame.dts);  // the offset may have changed
  UpdateAnchor(t);
  int64_t pts = Extend(frame.pts);
  last_t_ = t;

  bool has_video = false;
  for (const auto& [pid, track] : tracks_) has_video |= track.is_video();
  bool discontinuity = pending_discontinuity_;

  auto write = [&](Rendition& r) {
    if (!r.open) return;
    if (OverCap(r, options_.max_segment_bytes)) return;
    media::Frame shifted = frame;
    shifted.pts = pts;
    shifted.dts = t;
    if (r.muxer && r.InTs(frame.pid)) r.muxer->WriteFrame(shifted, r.bytes);
    // Parts close on the frame that drives cuts: video, or audio when there is none ("a1"
    // takes its audio through AddAudio, not here).
    bool drives = frame.codec != media::Codec::kAac || !r.video_pid;
    // Part i of a segment ends at the first frame at or after start + (i+1)·part target, so a
    // segment has ceil(duration / part target) parts; a part may run one frame over the
    // target, which the playlist's PART-TARGET accounts for.
    if (drives && !r.part_frames.empty() && t >= r.start + (r.part_index + 1) * part_ticks_) {
      FlushPart(r, t);
    }
    if (r.InCmaf(frame.pid)) {
      r.part_frame_bytes += shifted.data ? shifted.data->size() : 0;
      r.part_frames.push_back(std::move(shifted));
    }
    if (drives) {
      // The first frame has no step: measured from 0, a jump right after it closed the
      // segment a timeline's worth long (found by segmenter_fuzz).
      if (r.has_last_t && t > r.last_t) r.last_step = t - r.last_t;
      r.last_t = t;
      r.has_last_t = true;
    }
  };

  if (frame.codec == media::Codec::kAac) {
    if (!audio_pid_ || frame.pid != *audio_pid_) return;
    if (!has_video) {
      // Audio often precedes the first video PES (and its SPS): only after two segment
      // durations of audio without any video is the source taken as audio-only.
      if (!first_audio_t_) first_audio_t_ = t;
      if (t - *first_audio_t_ < 2 * segment_ticks_) return;
      Rendition* r = RenditionFor(frame.pid);
      if (!r->first_t) r->first_t = *first_audio_t_;
      Cut(*r, t, discontinuity);
      pending_discontinuity_ = false;
      r->jumped = false;
    } else {
      AudioRendition();  // opens at v1's next cut
    }
    // After a jump, audio waits for the video keyframe that opens the next segment.
    if (has_video && pending_discontinuity_) return;
    // Not into a segment still open from before a jump (its rendition's keyframe has not
    // come yet): the audio is after the jump.
    for (auto& [pid, r] : renditions_) {
      if (!r->jumped) write(*r);
    }
    if (audio_) {
      media::Frame shifted = frame;
      shifted.pts = pts;
      shifted.dts = t;
      AddAudio(*audio_, std::move(shifted));
    }
    return;
  }
  Rendition* r = RenditionFor(frame.pid);
  if (!r->first_t) r->first_t = t;
  discontinuity |= r->jumped;
  if (frame.keyframe) {
    Cut(*r, t, discontinuity);
    pending_discontinuity_ = false;
    r->jumped = false;
  } else if (discontinuity) {
    // The timeline jumped mid-GOP: nothing can follow until the next keyframe.
    if (r->open) {
      Close(*r,
            std::min(r->last_t + std::max<int64_t>(r->last_step, 90), std::max(t, r->last_t + 1)));
    }
    return;
  }
  write(*r);
}

}  // namespace meshwork::streamer
