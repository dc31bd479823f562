// S-25 (one form between nodes): an edge receives a stream only in its CMAF form and makes the
// MPEG-TS form of each video rendition itself, from the same samples on the same timeline, so
// a segment crosses the network once, not twice.
//
// The packager's TS segment msn N of a video rendition (S-16a) holds that rendition's video
// and the first audio track, cut at the same boundaries as the CMAF segments N of the
// rendition and of the audio rendition ("a1"). TsMaker pairs them as the relay completes
// them: Offer() takes every complete CMAF segment of the stream's renditions and returns the
// TS segments it could make — a video segment when the audio segment of the same msn is
// there too (or the stream has no audio rendition); an audio-only source's rendition from
// its own samples. Frames come from fmp4_demuxer (90 kHz, the packager's timestamps), the TS
// from TsMuxer (one per rendition, so continuity counters run on across segments), each with
// the CMAF segment's timing: same msn, duration, PDT and first PTS as the upstream's TS.
//
// A video segment whose audio does not come (the audio rendition lags, or started later) is
// made without audio once a segment two msn later arrived for the same rendition, and
// counted (`made_without_audio`). Bounded: at most kKeptAudio audio segments and
// kKeptPerRendition waiting video segments per rendition (references to the relayed chunks,
// not copies).
//
// Thread-safe: the relay's rendition threads offer concurrently; one mutex, held while a
// segment is muxed (a few milliseconds).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "prometheus/counter.h"
#include "prometheus/registry.h"
#include "streamer/media/ts_muxer.h"
#include "streamer/store/origin_rules.h"
#include "streamer/store/rendition_window.h"

namespace meshwork::streamer::relay {

class TsMaker {
 public:
  static constexpr size_t kKeptAudio = 8;
  static constexpr size_t kKeptPerRendition = 4;

  // Metrics counted as segments are made; null members count nothing.
  struct Counters {
    prometheus::Counter* ok = nullptr;
    prometheus::Counter* without_audio = nullptr;
    prometheus::Counter* failed = nullptr;
    // The three of family `name` (label `result`: ok, without_audio, failed) in `metrics`.
    static Counters Register(prometheus::Registry& metrics, const std::string& name,
                             const std::string& help);
  };
  // `audio_rendition`: the stream's audio rendition ("a1"), empty when it has none.
  TsMaker(std::string audio_rendition, Counters counters)
      : audio_rendition_(std::move(audio_rendition)), counters_(counters) {}

  struct Segment {
    std::string rendition;
    int64_t msn = 0;
    std::vector<std::shared_ptr<const std::string>> chunks;  // the CMAF segment (its parts)
    std::shared_ptr<const MediaTiming> timing;
    std::shared_ptr<const RenditionInfo> info;  // holds the init segment
  };
  struct Made {
    std::string rendition;
    int64_t msn = 0;
    std::shared_ptr<const std::string> ts;
    std::shared_ptr<const MediaTiming> timing;
    std::shared_ptr<const RenditionInfo> info;
  };
  // A complete CMAF segment; `wants_ts`: the rendition has an MPEG-TS form upstream. Returns
  // the TS segments made now (possibly of other renditions that waited for this audio).
  std::vector<Made> Offer(Segment segment, bool wants_ts);

  bool has_audio_rendition() const { return !audio_rendition_.empty(); }
  uint64_t made() const;
  uint64_t made_without_audio() const;
  uint64_t failures() const;

 private:
  // The TS of `video` (a video rendition's segment, or an audio-only source's) with `audio`
  // (may be null); nullopt when a segment cannot be demuxed (logged, counted).
  std::optional<Made> Make(const Segment& video, const Segment* audio)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string audio_rendition_;
  const Counters counters_;
  mutable absl::Mutex mu_;
  std::map<int64_t, Segment> audio_ ABSL_GUARDED_BY(mu_);  // msn → the audio rendition's
  // rendition → msn → video segments waiting for their audio.
  std::map<std::string, std::map<int64_t, Segment>> waiting_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, media::TsMuxer> muxers_ ABSL_GUARDED_BY(mu_);
  uint64_t made_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t made_without_audio_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t failures_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace meshwork::streamer::relay
