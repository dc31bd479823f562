#include "streamer/relay/ts_maker.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "streamer/media/fmp4_demuxer.h"
#include "streamer/media/mp4_probe.h"

namespace meshwork::streamer::relay {

TsMaker::Counters TsMaker::Counters::Register(prometheus::Registry& metrics,
                                              const std::string& name, const std::string& help) {
  auto& made = prometheus::BuildCounter().Name(name).Help(help).Register(metrics);
  Counters out;
  out.ok = &made.Add({{"result", "ok"}});
  out.without_audio = &made.Add({{"result", "without_audio"}});
  out.failed = &made.Add({{"result", "failed"}});
  return out;
}
namespace {

constexpr uint16_t kVideoPid = 0x100;
constexpr uint16_t kAudioPid = 0x101;

// The first track of a segment's init with `pid`; nullopt when the init is unreadable.
std::optional<media::ProbedTrack> TrackOf(const RenditionInfo& info, uint16_t pid) {
  if (!info.init) return std::nullopt;
  auto tracks = media::ProbeInitSegment(*info.init);
  if (tracks.empty()) return std::nullopt;
  tracks.front().info.pid = pid;
  return tracks.front();
}

std::string Joined(const std::vector<std::shared_ptr<const std::string>>& chunks) {
  if (chunks.size() == 1) return *chunks.front();
  std::string out;
  size_t n = 0;
  for (const auto& c : chunks) n += c->size();
  out.reserve(n);
  for (const auto& c : chunks) out += *c;
  return out;
}

}  // namespace

std::vector<TsMaker::Made> TsMaker::Offer(Segment segment, bool wants_ts) {
  std::vector<Made> out;
  absl::MutexLock lock(&mu_);
  auto make = [&](const Segment& video, const Segment* audio) {
    if (auto made = Make(video, audio)) out.push_back(std::move(*made));
  };
  if (!audio_rendition_.empty() && segment.rendition == audio_rendition_) {
    const int64_t msn = segment.msn;
    // Older than every kept one (a publisher sending out of order): it would be the one the
    // trim below drops.
    if (audio_.size() >= kKeptAudio && msn < audio_.begin()->first) return out;
    auto& kept = audio_[msn] = std::move(segment);
    while (audio_.size() > kKeptAudio) audio_.erase(audio_.begin());
    for (auto& [rendition, waiting] : waiting_) {
      auto it = waiting.find(msn);
      if (it == waiting.end()) continue;
      make(it->second, &kept);
      waiting.erase(it);
    }
    return out;
  }
  if (!wants_ts) return out;
  const bool video = segment.info && segment.info->cmaf_video();
  if (!video || audio_rendition_.empty()) {
    make(segment, nullptr);  // an audio-only source, or a stream without audio
    return out;
  }
  if (auto it = audio_.find(segment.msn); it != audio_.end()) {
    make(segment, &it->second);
    return out;
  }
  auto& waiting = waiting_[segment.rendition];
  const int64_t msn = segment.msn;
  waiting[msn] = std::move(segment);
  // Waited long enough (two newer segments of this rendition): made without its audio.
  while (!waiting.empty() &&
         (waiting.begin()->first <= msn - 2 || waiting.size() > kKeptPerRendition)) {
    ++made_without_audio_;
    if (counters_.without_audio) counters_.without_audio->Increment();
    log::Warn("relay_ts_without_audio",
              {{"rendition", waiting.begin()->second.rendition}, {"msn", waiting.begin()->first}});
    make(waiting.begin()->second, nullptr);
    waiting.erase(waiting.begin());
  }
  return out;
}

std::optional<TsMaker::Made> TsMaker::Make(const Segment& video, const Segment* audio) {
  auto fail = [&](std::string_view why) -> std::optional<Made> {
    ++failures_;
    if (counters_.failed) counters_.failed->Increment();
    log::Warn("relay_ts_failed",
              {{"rendition", video.rendition}, {"msn", video.msn}, {"error", why}});
    return std::nullopt;
  };
  if (!video.info) return fail("no init segment");
  const bool has_video = video.info->cmaf_video();
  auto main_track = TrackOf(*video.info, has_video ? kVideoPid : kAudioPid);
  if (!main_track) return fail("unreadable init segment");
  std::vector<media::TrackInfo> tracks{main_track->info};
  auto frames = media::DemuxFragments(Joined(video.chunks), *main_track);
  if (!frames.error.empty()) return fail(frames.error);
  if (audio && audio->info && has_video) {
    auto audio_track = TrackOf(*audio->info, kAudioPid);
    if (audio_track && audio_track->info.is_audio()) {
      auto audio_frames = media::DemuxFragments(Joined(audio->chunks), *audio_track);
      if (audio_frames.error.empty()) {
        tracks.push_back(audio_track->info);
        frames.frames.insert(frames.frames.end(),
                             std::make_move_iterator(audio_frames.frames.begin()),
                             std::make_move_iterator(audio_frames.frames.end()));
      } else {
        log::Warn("relay_ts_audio_failed", {{"msn", audio->msn}, {"error", audio_frames.error}});
      }
    }
  }
  // Decode order across the tracks, as a packager interleaves them.
  std::stable_sort(frames.frames.begin(), frames.frames.end(),
                   [](const media::Frame& a, const media::Frame& b) { return a.dts < b.dts; });
  // One muxer per rendition and set of tracks: continuity counters run on across segments,
  // and a segment that gained or lost its audio starts a muxer of its own.
  const std::string key = absl::StrCat(video.rendition, "/", tracks.size());
  auto muxer = muxers_.find(key);
  if (muxer == muxers_.end()) muxer = muxers_.emplace(key, media::TsMuxer(tracks)).first;
  size_t bytes = 0;
  for (const auto& c : video.chunks) bytes += c->size();
  auto ts = std::make_shared<std::string>();
  ts->reserve(bytes * 11 / 10 + 4096);
  muxer->second.WriteTables(*ts);
  for (const auto& f : frames.frames) muxer->second.WriteFrame(f, *ts);
  ++made_;
  if (counters_.ok) counters_.ok->Increment();
  return Made{video.rendition, video.msn, std::move(ts), video.timing, video.info};
}

uint64_t TsMaker::made() const {
  absl::MutexLock lock(&mu_);
  return made_;
}
uint64_t TsMaker::made_without_audio() const {
  absl::MutexLock lock(&mu_);
  return made_without_audio_;
}
uint64_t TsMaker::failures() const {
  absl::MutexLock lock(&mu_);
  return failures_;
}

}  // namespace meshwork::streamer::relay
