// How the one store keeps each rendition's playlist index (RenditionWindow) in step with its
// objects: the timing of an object from the local packager's MediaTiming, or from the
// template and the fragment's own decode time for a packager's; the due times of a locally
// packaged timeline; the object a rendition publishes next. Internal to OriginStore: called
// under its writers' mutex on copies not yet shared.
#pragma once

#include <cstdint>

#include "streamer/store/origin_rules.h"
#include "streamer/store/origin_store.h"
#include "streamer/store/rendition_window.h"

namespace meshwork::streamer::store_internal {

// The timing of an object that came without any (a packager's): from the template, on a
// media timeline where msn N starts at N·segment duration.
MediaTiming TemplateTiming(const Template& t, ObjectKey key);

// The availability start that makes the template's due times those of a locally packaged
// timeline: the wall clock at its origin less the number its first segment had.
int64_t LocalAvailabilityStart(const MediaTiming& t, int64_t msn, int segment_ms);

// Rebuilds `r.window` after `candidate` was published as `key` (`info`: the local
// packager's rendition description, null for a packager's object).
void UpdateWindow(OriginRendition& r, const OriginPolicy& policy, ObjectKey key,
                  const Candidate& candidate, const RenditionInfo* info, int64_t now_ms);

// Drops from `r.window` the segments the store no longer holds (below r.meta.first_msn).
void TrimWindow(OriginRendition& r);

// Whether `key` is the object the rendition will publish next, given its last position.
bool IsNextObject(const RenditionWindow& w, ObjectKey key);

}  // namespace meshwork::streamer::store_internal
