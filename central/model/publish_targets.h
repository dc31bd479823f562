// S-23: where the ingest nodes of a stream publish what they package, as the REST API accepts
// it:
//
//   "publish": [{"to": "origin-1", "pipeline": "eu-a", "from": "ingest-eu"}, …]
//
// `to` is a streamer id (an origin node), `pipeline` the pipeline id the objects arrive as
// (L-1), `from` (optional) the one ingest node that publishes to this target — without it
// every node holding the stream does. Two ingest nodes in two sites fed the same source are
// then seed 001's two regional pipelines. At most 8 targets, no (to, pipeline, from) twice. Kept in
// canonical form only when non-empty, so streams without targets look as before.
#pragma once

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace meshwork::central {

inline constexpr size_t kMaxPublishTargets = 8;

// Validates `body`'s "publish" member and writes its canonical form into `out`.
absl::Status ResolvePublishTargets(const nlohmann::json& body, nlohmann::json& out);

}  // namespace meshwork::central
