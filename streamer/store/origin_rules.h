// The live origin's read rules (L-4…L-15) as pure functions of a stream's policy, the
// rendition's in-memory metadata and the time: which candidate a read gets, whether it is
// held, answered 404 with a TTL, or 410, and which request class it is. Nothing here touches
// object bodies, so the answers for future and long-gone objects cost no store lookup.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "streamer/config/stream_config.h"

namespace meshwork::streamer {

// The largest media sequence number accepted anywhere (2^40: 70 000 years of 2 s segments),
// so that due-time arithmetic never overflows.
inline constexpr int64_t kMaxMsn = int64_t{1} << 40;

// S-7, the one "working" rule: a stream works while its live edge advanced within three
// target durations of now — S-7's two, plus one segment of lag, since a segment is published
// only when the next one starts. `last_publish_ms` 0: nothing published yet (not working).
inline constexpr int kWorkingTargetDurations = 3;
inline bool LiveEdgeWorking(int64_t last_publish_ms, int64_t now_ms, int segment_ms) {
  return last_publish_ms > 0 &&
         now_ms - last_publish_ms <= int64_t{kWorkingTargetDurations} * segment_ms;
}

// What an object path names inside a rendition.
struct ObjectKey {
  enum Kind { kInit, kTs, kM4s, kPart } kind = kTs;
  int64_t msn = -1;  // -1 for init
  int part = -1;     // >= 0 for kPart
  auto operator<=>(const ObjectKey&) const = default;
  bool is_segment() const { return kind == kTs || kind == kM4s; }
};

// The object's file name under its rendition: init.mp4, N.ts, N.m4s, N.P.m4s (L-1).
std::string ObjectFileName(ObjectKey key);

// X-Defects (L-1) as a bit set.
enum Defect : uint32_t {
  kDefectShort = 1,
  kDefectMissingFrames = 2,
  kDefectMissing = 4,
  kDefectTimestampGap = 8,
};
// "short, missing-frames" form of a defect set, in a fixed order.
std::string DefectsToString(uint32_t defects);

// What the local packager knows of an object it made (S-5): packagers publishing over HTTP
// say none of it, and their objects' timing is read from the template instead.
struct MediaTiming {
  int64_t start = 0;     // 90 kHz, the stream's absolute timeline
  int64_t duration = 0;  // 90 kHz
  int64_t program_date_time_ms = 0;
  int64_t timeline_origin = 0;  // see Segment::timeline_origin
  bool discontinuity = false;
  bool independent = false;  // a part that starts with a keyframe
  bool last_part = false;    // a part that ends its segment (Part::last)
};

// One pipeline's copy of an object (L-11).
struct Candidate {
  std::string pipeline;
  std::string region;
  uint32_t defects = 0;
  std::vector<std::shared_ptr<const std::string>> chunks;  // the body (L-17)
  uint64_t size = 0;
  int64_t published_ms = 0;
  uint64_t serial = 0;  // distinct per publish on this node (ETag)
  // X-Stream-Notifications in force when it was published (L-10); null when none.
  std::shared_ptr<const std::string> notifications;
  std::shared_ptr<const MediaTiming> timing;  // null for packagers' objects
};

// An object: one candidate per pipeline. `generation` counts publishes of it.
struct StoredObject {
  std::vector<std::shared_ptr<const Candidate>> candidates;
  uint64_t generation = 0;
};

// A range of msns of a pipeline and/or region (StreamConfig's MsnRange).
using CandidateRange = MsnRange;
// Whether `range` covers candidate `c` of segment `msn`.
bool Covers(const CandidateRange& range, const Candidate& c, int64_t msn);

// The read rules' part of a stream's config (L-4…L-14), copied from its StreamConfig.
struct OriginPolicy {
  Template tmpl;
  std::vector<std::string> pipelines;  // preference order (L-11)
  std::vector<CandidateRange> masks;   // L-13
  uint64_t version = 1;                // L-14
  std::vector<RangeVersion> range_versions;
  int live_window = stream_defaults::kLiveWindow;
  std::string cors = stream_defaults::kCors;
  // Distinct for each configuration the store applied (OriginStore::Apply): playlists
  // rendered under one policy (masks, versions) are cached under its serial.
  uint64_t serial = 0;

  static OriginPolicy From(const StreamConfig& config);
  // Position of a pipeline in the preference order; unknown ones after, by name.
  int Rank(const std::string& pipeline) const;
  bool Masked(const Candidate& c, int64_t msn) const;
  // L-14: the cache version of an object served from `c`.
  uint64_t VersionOf(const Candidate& c, int64_t msn) const;
};

// L-11: the first unmasked candidate in preference order without defects, else the first
// unmasked one (with its defects); null when every candidate is masked.
std::shared_ptr<const Candidate> ChooseCandidate(const OriginPolicy& policy,
                                                 const StoredObject& object, int64_t msn);

// The in-memory metadata of a rendition that reads are decided from.
struct RenditionMeta {
  int64_t first_msn = -1;   // the oldest segment held (-1: none yet)
  int64_t newest_msn = -1;  // the newest segment published by any pipeline
  // The newest msn each pipeline delivered (L-12: only pipelines still delivering are
  // waited for).
  std::map<std::string, int64_t> pipeline_newest;
};

struct ReadDecision {
  enum Verdict {
    kServe,    // send `candidate`
    kHold,     // wait until published, at most until `until_ms` (L-7, L-12)
    kNotYet,   // 404 with a TTL of `ttl_ms` (L-8)
    kGone,     // 410 (L-9)
    kMissing,  // 404, short TTL: not published, and no template to say more
  } verdict = kMissing;
  std::shared_ptr<const Candidate> candidate;
  int64_t until_ms = 0;
  int64_t ttl_ms = 0;
  bool looked_up = false;   // the object index was consulted
  uint64_t generation = 0;  // the object's publish count when decided (0: absent)
};

// Decides a read of `key`. `lookup` returns the object (null when absent); it is called
// only when metadata alone cannot answer.
template <typename Lookup>
ReadDecision DecideRead(const OriginPolicy& policy, const RenditionMeta& meta, ObjectKey key,
                        int64_t now_ms, Lookup&& lookup);

// L-15: 1 publishes, 2 live-edge reads (playlists, init, objects within the live window),
// 3 DVR reads (older objects).
enum class RequestClass { kPublish = 1, kLive = 2, kDvr = 3 };
RequestClass ClassifyRead(const OriginPolicy& policy, const RenditionMeta& meta,
                          std::optional<ObjectKey> key, int64_t now_ms);

// ---- implementation of the template ----

namespace origin_internal {
ReadDecision DecideFound(const OriginPolicy& policy, const RenditionMeta& meta, ObjectKey key,
                         int64_t now_ms, const StoredObject* object);
bool BeyondNext(const OriginPolicy& policy, ObjectKey key, int64_t now_ms, int64_t* ttl_ms);
}  // namespace origin_internal

// L-7: before anything of a rendition is published, whether `key` is its next object — the
// segment msn 0 when the template starts in the future, else the first one due after now
// (the one being produced); for parts, that segment's first part due after now.
bool IsFirstDue(const Template& t, ObjectKey key, int64_t now_ms);

template <typename Lookup>
ReadDecision DecideRead(const OriginPolicy& policy, const RenditionMeta& meta, ObjectKey key,
                        int64_t now_ms, Lookup&& lookup) {
  ReadDecision d;
  if (key.kind != ObjectKey::kInit && policy.tmpl.known()) {
    // Before the oldest segment held: gone (never existed, or aged out of the window).
    if (meta.first_msn >= 0 && key.msn < meta.first_msn) {
      d.verdict = ReadDecision::kGone;
      return d;
    }
    int64_t ttl = 0;
    if (origin_internal::BeyondNext(policy, key, now_ms, &ttl)) {
      d.verdict = ReadDecision::kNotYet;
      d.ttl_ms = ttl;
      // The template says "not yet"; an object at the live edge (the newest published msn
      // or the one after it) is looked for all the same: a source whose timeline moved since
      // the template was derived (an edge's relayed stream after its source restarted)
      // publishes objects the template places in the future, and a listed object must never
      // be a 404. Further ahead, the template's answer stands without a lookup (P-5).
      if (meta.newest_msn < 0 || key.msn > meta.newest_msn + 1) return d;
      auto object = lookup();
      if (!object) return d;
      d = origin_internal::DecideFound(policy, meta, key, now_ms, object.get());
      d.looked_up = true;
      return d;
    }
  }
  auto object = lookup();
  d = origin_internal::DecideFound(policy, meta, key, now_ms, object.get());
  d.looked_up = true;
  return d;
}

}  // namespace meshwork::streamer
