#include "streamer/packager/stream_pipeline.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "streamer/ingest/url.h"

namespace meshwork::streamer {

namespace {
constexpr uint16_t kFirstVideoPid = 0x100;
constexpr uint16_t kAudioPid = 0x1f0;
// The video tracks of one input that become renditions (the rest are ignored, R-3).
constexpr uint16_t kMaxVideoTracks = 8;
}  // namespace

struct StreamPipeline::Input {
  std::string url;
  std::unique_ptr<media::TsDemuxer> demuxer;
  std::optional<std::chrono::steady_clock::time_point> last_frame;
  // Bytes received, and the count and time the last bitrate was measured from.
  uint64_t bytes = 0;
  uint64_t rate_bytes = 0;
  std::chrono::steady_clock::time_point rate_since{};
  uint64_t bitrate_kbit = 0;
  std::map<uint16_t, uint16_t> pid_map;         // input PID → canonical PID
  std::map<uint16_t, media::TrackInfo> tracks;  // by canonical PID
  bool warned_video_tracks = false;             // input_track_ignored logged
};

namespace {

MediaTiming SegmentTiming(const Segment& s) {
  MediaTiming t;
  t.start = s.start;
  t.duration = s.duration;
  t.program_date_time_ms = s.program_date_time_ms;
  t.timeline_origin = s.timeline_origin;
  t.discontinuity = s.discontinuity;
  return t;
}

}  // namespace

void StreamPipeline::PublishInitLocked(const RenditionInfo& info) {
  // init.mp4 changes only with the tracks: published again when the writer made a new one.
  auto& last = published_init_[info.name];
  if (!info.init || last == info.init) return;
  last = info.init;
  auto status = store_->PublishLocal(config_->name, info, ObjectKey{ObjectKey::kInit, -1, -1},
                                     {info.init}, nullptr);
  if (!status.ok()) LogRefused(info.name, "init.mp4", status);
}

void StreamPipeline::LogRefused(const std::string& rendition, const std::string& object,
                                const absl::Status& status) {
  log::Warn("local_publish_refused", {{"stream", config_->name},
                                      {"rendition", rendition},
                                      {"object", object},
                                      {"error", status.ToString()}});
}

StreamPipeline::StreamPipeline(std::shared_ptr<const StreamConfig> config, OriginStore* store,
                               const Clock& clock)
    : config_(std::move(config)), store_(store), clock_(clock) {
  SegmenterOptions options;
  options.segment_ms = config_->segment_ms;
  options.part_ms = config_->part_ms;
  options.live_window = config_->live_window;
  absl::MutexLock lock(&mu_);
  segmenter_ = std::make_unique<Segmenter>(
      options, clock_, &anchors_,
      // Both run under mu_ (the segmenter is fed from OnFrameLocked): the store sees each
      // rendition's objects in the order they were made.
      [this](const RenditionInfo& info, std::shared_ptr<const Segment> segment)
          ABSL_NO_THREAD_SAFETY_ANALYSIS {
            last_publish_ms_.store(UnixMillis(clock_.Now()));
            PublishInitLocked(info);
            auto timing = std::make_shared<const MediaTiming>(SegmentTiming(*segment));
            if (!segment->parts.empty()) {
              // The .m4s is its parts' bytes, shared as they are (zero copy).
              std::vector<std::shared_ptr<const std::string>> chunks;
              for (const auto& p : segment->parts) chunks.push_back(p->data);
              auto status = store_->PublishLocal(config_->name, info,
                                                 ObjectKey{ObjectKey::kM4s, segment->msn, -1},
                                                 std::move(chunks), timing);
              if (!status.ok()) LogRefused(info.name, absl::StrCat(segment->msn, ".m4s"), status);
            }
            if (segment->ts) {
              auto status = store_->PublishLocal(config_->name, info,
                                                 ObjectKey{ObjectKey::kTs, segment->msn, -1},
                                                 {segment->ts}, std::move(timing));
              if (!status.ok()) LogRefused(info.name, absl::StrCat(segment->msn, ".ts"), status);
            }
          },
      [this](const RenditionInfo& info, int64_t msn, int64_t, std::shared_ptr<const Part> part)
          ABSL_NO_THREAD_SAFETY_ANALYSIS {
            PublishInitLocked(info);
            auto timing = std::make_shared<MediaTiming>();
            timing->start = part->start;
            timing->duration = part->duration;
            timing->program_date_time_ms = part->program_date_time_ms;
            timing->timeline_origin = part->timeline_origin;
            timing->independent = part->independent;
            timing->last_part = part->last;
            timing->discontinuity = part->discontinuity;
            auto status = store_->PublishLocal(config_->name, info,
                                               ObjectKey{ObjectKey::kPart, msn, part->index},
                                               {part->data}, std::move(timing));
            if (!status.ok()) {
              LogRefused(info.name, absl::StrCat(msn, ".", part->index, ".m4s"), status);
            }
          });
  for (size_t i = 0; i < config_->inputs.size(); ++i) {
    auto input = std::make_unique<Input>();
    // Kept for reports (/status, central) and logs: credentials in the query never leave.
    input->url = ingest::RedactUrl(config_->inputs[i]);
    for (PushSlot* slot : {&push_, &rtmp_}) {
      if (input->url.rfind(slot->scheme, 0) == 0 && !slot->input) slot->input = i;
    }
    media::TsDemuxer::Callbacks callbacks;
    // The demuxer calls back synchronously from Feed(), which runs under mu_.
    callbacks.on_track = [this, i](const media::TrackInfo& t)
                             ABSL_NO_THREAD_SAFETY_ANALYSIS { OnTrackLocked(i, t); };
    callbacks.on_frame = [this, i](media::Frame&& f)
                             ABSL_NO_THREAD_SAFETY_ANALYSIS { OnFrameLocked(i, std::move(f)); };
    input->demuxer = std::make_unique<media::TsDemuxer>(std::move(callbacks));
    inputs_.push_back(std::move(input));
  }
}

StreamPipeline::~StreamPipeline() {
  for (auto& s : sources_) s->Stop();
  sources_.clear();
}

void StreamPipeline::TakePublishers() {
  absl::MutexLock lock(&mu_);
  packages_here_ = true;
}

void StreamPipeline::Start() {
  {
    absl::MutexLock lock(&mu_);
    if (retired_) return;
    packages_here_ = true;
  }
  for (size_t i = 0; i < config_->inputs.size(); ++i) {
    const std::string& url = config_->inputs[i];
    if (url.rfind("publish://", 0) == 0 || url.rfind("rtmp://", 0) == 0) continue;  // pushed
    auto source =
        ingest::StartSource(url, [this, i](std::span<const uint8_t> bytes) { OnBytes(i, bytes); });
    if (!source.ok()) {
      log::Error("input_failed", {{"stream", config_->name},
                                  {"url", ingest::RedactUrl(url)},
                                  {"error", source.status().ToString()}});
      continue;
    }
    sources_.push_back(std::move(*source));
  }
  log::Info("stream_started",
            {{"stream", config_->name}, {"inputs", static_cast<int64_t>(config_->inputs.size())}});
}

void StreamPipeline::Retire() {
  {
    absl::MutexLock lock(&mu_);
    retired_ = true;
    for (PushSlot* slot : {&push_, &rtmp_}) {
      ++slot->session;
      slot->live = false;
    }
  }
  sources_.clear();  // outside mu_: a source's thread may be waiting for it in OnBytes
}

void StreamPipeline::OnBytes(size_t input, std::span<const uint8_t> bytes) {
  absl::MutexLock lock(&mu_);
  inputs_[input]->bytes += bytes.size();
  inputs_[input]->demuxer->Feed(bytes);
}

absl::StatusOr<uint64_t> StreamPipeline::BeginSlot(PushSlot& slot, bool take_over) {
  if (retired_) {
    return absl::UnavailableError(
        absl::StrCat("stream \"", config_->name, "\" is being reconfigured; publish again"));
  }
  if (!packages_here_) {
    return absl::NotFoundError(
        absl::StrCat("stream \"", config_->name,
                     "\" is not packaged on this node (other nodes fill it); publish to its "
                     "ingest node"));
  }
  if (!slot.input) {
    return absl::NotFoundError(
        absl::StrCat("stream \"", config_->name, "\" takes no ", slot.scheme, " input"));
  }
  if (slot.live && !take_over) {
    return absl::AlreadyExistsError(
        absl::StrCat("stream \"", config_->name,
                     "\" already has a live publisher; only a publisher with the stream's "
                     "publish token may take over"));
  }
  slot.live = true;
  ++slot.session;
  // A new publisher is a new source: forget the previous one's demuxer state and which of
  // its PIDs carried which track (S-3: the new one's video and audio, on whatever PIDs, are
  // v1's and a1's again, not new renditions or ignored audio).
  Input& input = *inputs_[*slot.input];
  if (input.demuxer) input.demuxer->Reset();
  input.pid_map.clear();
  input.tracks.clear();
  return slot.session;
}

absl::StatusOr<uint64_t> StreamPipeline::BeginPush(bool take_over) {
  absl::MutexLock lock(&mu_);
  return BeginSlot(push_, take_over);
}

bool StreamPipeline::FeedPush(uint64_t session, std::span<const uint8_t> bytes) {
  absl::MutexLock lock(&mu_);
  if (session != push_.session) return false;  // superseded
  inputs_[*push_.input]->bytes += bytes.size();
  inputs_[*push_.input]->demuxer->Feed(bytes);
  return true;
}

void StreamPipeline::EndPush(uint64_t session) {
  absl::MutexLock lock(&mu_);
  if (session != push_.session) return;  // superseded: the live session is another one
  push_.live = false;
  inputs_[*push_.input]->demuxer->Flush();
}

absl::StatusOr<uint64_t> StreamPipeline::BeginRtmp(bool take_over) {
  absl::MutexLock lock(&mu_);
  return BeginSlot(rtmp_, take_over);
}

bool StreamPipeline::PushTrack(uint64_t session, const media::TrackInfo& track) {
  absl::MutexLock lock(&mu_);
  if (session != rtmp_.session) return false;
  OnTrackLocked(*rtmp_.input, track);
  return true;
}

bool StreamPipeline::PushFrame(uint64_t session, media::Frame&& frame) {
  absl::MutexLock lock(&mu_);
  if (session != rtmp_.session) return false;
  inputs_[*rtmp_.input]->bytes += frame.data ? frame.data->size() : 0;
  OnFrameLocked(*rtmp_.input, std::move(frame));
  return true;
}

void StreamPipeline::EndRtmp(uint64_t session) {
  absl::MutexLock lock(&mu_);
  if (session == rtmp_.session) rtmp_.live = false;
}

uint16_t StreamPipeline::CanonicalPidLocked(Input& input, uint16_t pid) {
  auto it = input.pid_map.find(pid);
  return it == input.pid_map.end() ? 0 : it->second;
}

void StreamPipeline::OnTrackLocked(size_t index, const media::TrackInfo& track) {
  Input& input = *inputs_[index];
  uint16_t canonical = CanonicalPidLocked(input, track.pid);
  if (canonical == 0) {
    if (track.is_audio()) {
      bool has_audio = std::any_of(input.pid_map.begin(), input.pid_map.end(),
                                   [](const auto& p) { return p.second == kAudioPid; });
      if (has_audio) return;  // only the first audio track is carried
      canonical = kAudioPid;
    } else {
      uint16_t videos =
          static_cast<uint16_t>(std::count_if(input.pid_map.begin(), input.pid_map.end(),
                                              [](const auto& p) { return p.second != kAudioPid; }));
      // each video track is a rendition with its own segment buffers, and every audio
      // frame is muxed into each; a source listing hundreds would multiply both.
      if (videos >= kMaxVideoTracks) {
        if (!input.warned_video_tracks) {
          input.warned_video_tracks = true;
          log::Warn("input_track_ignored",
                    {{"stream", config_->name},
                     {"input", input.url},
                     {"pid", track.pid},
                     {"reason", absl::StrCat("more than ", kMaxVideoTracks, " video tracks")}});
        }
        return;
      }
      canonical = kFirstVideoPid + videos;
    }
    input.pid_map[track.pid] = canonical;
  }
  media::TrackInfo mapped = track;
  mapped.pid = canonical;
  input.tracks[canonical] = mapped;
  if (index == active_) segmenter_->OnTrack(mapped);
}

void StreamPipeline::ChooseActiveLocked(size_t delivering) {
  auto now = clock_.Monotonic();
  auto timeout = std::chrono::milliseconds(config_->input_timeout_ms);
  auto live = [&](size_t i) {
    return inputs_[i]->last_frame && now - *inputs_[i]->last_frame < timeout;
  };
  size_t next = active_;
  if (delivering < active_) {
    next = delivering;  // an earlier input recovered
  } else if (delivering != active_ && !live(active_)) {
    next = delivering;  // the active input went silent
    for (size_t i = 0; i < delivering; ++i) {
      if (live(i)) {
        next = i;
        break;
      }
    }
  }
  if (next == active_) return;
  log::Warn(
      "input_switched",
      {{"stream", config_->name}, {"from", inputs_[active_]->url}, {"to", inputs_[next]->url}});
  active_ = next;
  segmenter_->OnSourceChanged();
  for (const auto& [pid, track] : inputs_[next]->tracks) segmenter_->OnTrack(track);
}

void StreamPipeline::OnFrameLocked(size_t index, media::Frame&& frame) {
  Input& input = *inputs_[index];
  uint16_t canonical = CanonicalPidLocked(input, frame.pid);
  if (canonical == 0) return;
  input.last_frame = clock_.Monotonic();
  if (index != active_) ChooseActiveLocked(index);
  if (index != active_) return;
  frame.pid = canonical;
  segmenter_->OnFrame(frame);
}

bool StreamPipeline::Working() const {
  return LiveEdgeWorking(last_publish_ms_.load(), UnixMillis(clock_.Now()), config_->segment_ms);
}

void StreamPipeline::FillReport(v1::StreamReport& report) const {
  report.set_name(config_->name);
  report.set_working(Working());
  int64_t last = last_publish_ms_.load();
  report.set_live_window_age_s(last > 0 ? (UnixMillis(clock_.Now()) - last) / 1000.0 : -1);
  {
    absl::MutexLock lock(&mu_);
    report.set_timeline_fingerprint(segmenter_->Fingerprint());
    report.set_active_input(inputs_[active_]->url);
    auto now = clock_.Monotonic();
    for (size_t i = 0; i < inputs_.size(); ++i) {
      Input& in = *inputs_[i];
      // A bitrate over at least a second, whichever reader (report or /status) comes first.
      if (now - in.rate_since >= std::chrono::seconds(1)) {
        double seconds = std::chrono::duration<double>(now - in.rate_since).count();
        in.bitrate_kbit =
            in.rate_since == std::chrono::steady_clock::time_point{}
                ? 0
                : static_cast<uint64_t>((in.bytes - in.rate_bytes) * 8 / 1000.0 / seconds);
        in.rate_bytes = in.bytes;
        in.rate_since = now;
      }
      auto* r = report.add_inputs();
      r->set_url(in.url);
      r->set_active(i == active_);
      r->set_bitrate_kbit(in.bitrate_kbit);
      r->set_last_frame_age_s(
          in.last_frame ? std::chrono::duration<double>(now - *in.last_frame).count() : -1);
    }
  }
  if (auto anchor = anchors_.InUse()) {
    report.mutable_timeline_anchor()->set_t90k(anchor->t90k);
    report.mutable_timeline_anchor()->set_wall_unix_ms(anchor->wall_ms);
  }
  for (const auto& window : store_->Windows(config_->name)) {
    auto* r = report.add_renditions();
    r->set_name(window->info.name);
    std::string codecs;
    const auto& tracks =
        window->info.tracks.empty() ? window->info.cmaf_tracks : window->info.tracks;
    for (const auto& t : tracks) {
      if (t.codec_string.empty()) continue;
      if (!codecs.empty()) codecs += ",";
      codecs += t.codec_string;
    }
    r->set_codecs(codecs);
    r->set_bitrate_kbit(window->peak_bitrate_bps / 1000);
  }
}

}  // namespace meshwork::streamer
