#include "streamer/relay/feed_ts.h"

#include <vector>

#include "prometheus/counter.h"
#include "streamer/media/mp4_probe.h"

namespace meshwork::streamer::relay {

FeedTs::FeedTs(OriginStore* store, prometheus::Registry* metrics) : store_(store) {
  if (!metrics) return;
  counters_ = TsMaker::Counters::Register(
      *metrics, "meshwork_origin_ts_made_total",
      "MPEG-TS segments an origin made from the CMAF segments of a publish feed (S-23, S-25), by "
      "result: ok, without_audio, failed");
}

void FeedTs::OnPublish(const std::string& stream, const std::string& rendition, ObjectKey key,
                       const std::shared_ptr<const Candidate>& candidate) {
  if (key.kind != ObjectKey::kInit && key.kind != ObjectKey::kM4s) return;
  if (candidate->pipeline == "local" || candidate->pipeline == "relay") return;
  std::vector<TsMaker::Made> made;
  {
    absl::MutexLock lock(&mu_);
    Feed& feed = feeds_[{stream, candidate->pipeline}];
    if (key.kind == ObjectKey::kInit) {
      auto info = std::make_shared<RenditionInfo>();
      info->name = rendition;
      std::string init;
      for (const auto& chunk : candidate->chunks) init += *chunk;
      for (const auto& track : media::ProbeInitSegment(init)) {
        info->cmaf_tracks.push_back(track.info);
      }
      info->init = std::make_shared<const std::string>(std::move(init));
      // New tracks (or the stream placed here again): the next segment starts a new maker.
      feed.infos[rendition] = std::move(info);
      feed.maker.reset();
      return;
    }
    if (!candidate->timing) return;  // a packager's segment: it sends its own TS
    auto info = feed.infos.find(rendition);
    if (info == feed.infos.end() || info->second->cmaf_tracks.empty()) return;
    if (!feed.maker) {
      std::string audio;
      for (const auto& [name, i] : feed.infos) {
        if (!i->cmaf_tracks.empty() && !i->cmaf_video()) audio = name;
      }
      feed.maker = std::make_unique<TsMaker>(audio, counters_);
    }
    made =
        feed.maker->Offer({rendition, key.msn, candidate->chunks, candidate->timing, info->second},
                          info->second->cmaf_video());
  }
  for (auto& m : made) {
    OriginStore::PublishRequest request;
    request.stream = stream;
    request.rendition = m.rendition;
    request.key = ObjectKey{ObjectKey::kTs, m.msn, -1};
    request.pipeline = candidate->pipeline;
    request.region = candidate->region;
    request.size = m.ts->size();
    request.chunks = {m.ts};
    request.timing = m.timing;
    (void)store_->Publish(std::move(request));  // a stream removed meanwhile: nothing to do
  }
}

}  // namespace meshwork::streamer::relay
