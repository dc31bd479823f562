// S-23, S-25: a node's MediaTiming as the X-Media-Timing field and back (the text is
// relay::FormatPartTiming's). The field travels with every object between nodes — on an
// origin's answers to edges and on an ingest's publish feed to an origin — so that every
// node dates an object as the node that packaged it did. Header-only; no state.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "streamer/relay/upstream_playlist.h"
#include "streamer/store/origin_rules.h"

namespace meshwork::streamer::relay {

inline std::string MediaTimingField(const MediaTiming& t) {
  UpstreamEntry e;
  e.duration_us = t.duration * 100 / 9;
  e.program_date_time_ms = t.program_date_time_ms;
  e.independent = t.independent;
  e.discontinuity = t.discontinuity;
  e.timeline_origin = t.timeline_origin;
  e.start = t.start;
  e.last_part = t.last_part;
  return FormatPartTiming(e);
}

// nullopt unless the field is well-formed (ParsePartTiming) and gives the object's start.
inline std::optional<MediaTiming> MediaTimingFromField(std::string_view field) {
  auto e = ParsePartTiming(field, 0, 0);
  if (!e || !e->start) return std::nullopt;
  MediaTiming t;
  t.start = *e->start;
  t.duration = e->duration_us * 9 / 100;
  t.program_date_time_ms = e->program_date_time_ms;
  t.timeline_origin = e->timeline_origin.value_or(0);
  t.independent = e->independent;
  t.discontinuity = e->discontinuity;
  t.last_part = e->last_part;
  return t;
}

}  // namespace meshwork::streamer::relay
