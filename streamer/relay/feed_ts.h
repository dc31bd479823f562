// S-23, S-25 (one form between nodes): an origin fed by ingest nodes' publish feeds receives
// each stream in its CMAF form only — init, parts and segments, each with its X-Media-Timing —
// and makes the MPEG-TS form of every video rendition here, with the same TsMaker an edge's
// relay uses (same msn, duration, PDT and first PTS as the ingest's own TS). One TsMaker per
// (stream, pipeline), so two ingest nodes feeding the same origin (L-11) never mix; the TS is
// published under the pipeline and region of the CMAF segment it was made from.
//
// Only feed objects are taken: a candidate with timing from a pipeline other than the local
// packager's and the relay's (those make their TS themselves); a packager's objects (no
// timing) carry their own TS. The stream's audio rendition is the one whose init holds audio
// only ("a1"), known from the inits, which the feed sends before any segment.
//
// Thread-safety: OnPublish is the store's publish hook, called on publishers' threads (the
// publish listener's, never a viewer's); a video segment is muxed there, a few milliseconds,
// as a relay does on its own thread — the one hook that works rather than queues. One mutex
// guards the map of makers (each TsMaker has its own), and the TS is published after it is
// released (its own hooks run then: the recorder takes it, this one ignores it). Bounded: per
// (stream, pipeline), the inits of its renditions and TsMaker's own bounds; state of a stream
// removed from the store is dropped at its next init.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "prometheus/registry.h"
#include "streamer/relay/ts_maker.h"
#include "streamer/store/origin_store.h"

namespace meshwork::streamer::relay {

class FeedTs {
 public:
  // `store` outlives this; `metrics` may be null.
  FeedTs(OriginStore* store, prometheus::Registry* metrics);

  // The store's publish hook.
  void OnPublish(const std::string& stream, const std::string& rendition, ObjectKey key,
                 const std::shared_ptr<const Candidate>& candidate);

 private:
  struct Feed {
    std::map<std::string, std::shared_ptr<const RenditionInfo>> infos;  // by rendition
    std::unique_ptr<TsMaker> maker;  // made at the first segment, once the inits are known
  };

  OriginStore* store_;
  TsMaker::Counters counters_;
  absl::Mutex mu_;
  std::map<std::pair<std::string, std::string>, Feed> feeds_ ABSL_GUARDED_BY(mu_);
};

}  // namespace meshwork::streamer::relay
