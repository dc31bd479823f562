// S-5: the timeline anchor central keeps with each stream.
//
// Where it lives: in the stream object itself, as the server-managed member
// "timeline_anchor": {"t90k": int, "wall_ms": int} or null. That is the simplest durable
// home: the object is already stored synced in RocksDB with its revision, a change through
// ConfigService::MutateObject is one atomic read-modify-write that bumps the revision, and the
// stream section central pushes to every node of the stream (C-2) then carries it — exactly
// the distribution the anchor needs, with nothing new to store, load or push. The cost is that
// the member shows in the REST object; it is read-only there: a PUT or PATCH may carry any
// well-formed value (a client repeating what it read), but the stored anchor is always kept
// (KeepTimelineAnchor), so a user's write never wipes or forges it.
//
// Pure functions; no dependency beyond JSON and absl (part of the fuzzed codecs).
#pragma once

#include <optional>

#include "absl/status/status.h"
#include "common/time/timeline_anchor.h"
#include "nlohmann/json.hpp"

namespace meshwork::central {

// Validates `body["timeline_anchor"]` (absent/null, or an object of exactly two integer
// members within IsPlausibleAnchor's bounds) and writes its canonical form into
// `out["timeline_anchor"]` (null when absent). InvalidArgument naming the field otherwise.
absl::Status ResolveTimelineAnchor(const nlohmann::json& body, nlohmann::json& out);

// The anchor of a canonical stream object (nullopt when null or unreadable).
std::optional<TimelineAnchor> StreamTimelineAnchor(const nlohmann::json& stream);
nlohmann::json TimelineAnchorJson(const std::optional<TimelineAnchor>& anchor);

// A PUT/PATCH result keeps the stored anchor (null for a new stream).
void KeepTimelineAnchor(nlohmann::json& canonical, const nlohmann::json* stored);

// Central's rule for a node's proposal: the first anchor of a stream is kept; a proposal that
// the kept anchor predicts within kAnchorToleranceMs is the same timeline (the node will adopt
// the kept one) and changes nothing; one it does not predict is another timeline and replaces
// it only when it is newer (later wall_ms) — so a node left on an older timeline (which keeps
// reporting its own anchor) cannot flip the stream back and forth with a node on the new one.
bool ShouldReplaceAnchor(const std::optional<TimelineAnchor>& kept, const TimelineAnchor& proposal);

}  // namespace meshwork::central
