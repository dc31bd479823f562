#include "streamer/store/origin_rules.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace meshwork::streamer {

std::string ObjectFileName(ObjectKey key) {
  switch (key.kind) {
    case ObjectKey::kInit:
      return "init.mp4";
    case ObjectKey::kTs:
      return absl::StrCat(key.msn, ".ts");
    case ObjectKey::kM4s:
      return absl::StrCat(key.msn, ".m4s");
    case ObjectKey::kPart:
      return absl::StrCat(key.msn, ".", key.part, ".m4s");
  }
  return "";
}

std::string DefectsToString(uint32_t defects) {
  static constexpr std::pair<uint32_t, const char*> kNames[] = {
      {kDefectShort, "short"},
      {kDefectMissingFrames, "missing-frames"},
      {kDefectMissing, "missing"},
      {kDefectTimestampGap, "timestamp-gap"}};
  std::string out;
  for (const auto& [bit, name] : kNames) {
    if (!(defects & bit)) continue;
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

bool Covers(const CandidateRange& range, const Candidate& c, int64_t msn) {
  if (range.pipeline && *range.pipeline != c.pipeline) return false;
  if (range.region && *range.region != c.region) return false;
  if (range.from_msn && msn < *range.from_msn) return false;
  if (range.to_msn && msn > *range.to_msn) return false;
  return true;
}

OriginPolicy OriginPolicy::From(const StreamConfig& config) {
  OriginPolicy p;
  p.tmpl = config.tmpl;
  p.pipelines = config.pipelines;
  p.masks = config.masks;
  p.version = config.version;
  p.range_versions = config.range_versions;
  p.live_window = config.live_window;
  p.cors = config.cors;
  return p;
}

int OriginPolicy::Rank(const std::string& pipeline) const {
  auto it = std::find(pipelines.begin(), pipelines.end(), pipeline);
  return static_cast<int>(it - pipelines.begin());
}

bool OriginPolicy::Masked(const Candidate& c, int64_t msn) const {
  return std::any_of(masks.begin(), masks.end(),
                     [&](const CandidateRange& m) { return Covers(m, c, msn); });
}

uint64_t OriginPolicy::VersionOf(const Candidate& c, int64_t msn) const {
  uint64_t v = version;
  for (const auto& rv : range_versions) {
    if (Covers(rv.range, c, msn)) v = std::max(v, rv.version);
  }
  return v;
}

std::shared_ptr<const Candidate> ChooseCandidate(const OriginPolicy& policy,
                                                 const StoredObject& object, int64_t msn) {
  std::shared_ptr<const Candidate> first_clean, first_any;
  auto before = [&policy](const Candidate& a, const Candidate& b) {
    int ra = policy.Rank(a.pipeline), rb = policy.Rank(b.pipeline);
    return ra != rb ? ra < rb : a.pipeline < b.pipeline;
  };
  for (const auto& c : object.candidates) {
    if (policy.Masked(*c, msn)) continue;
    if (!first_any || before(*c, *first_any)) first_any = c;
    if (c->defects == 0 && (!first_clean || before(*c, *first_clean))) first_clean = c;
  }
  return first_clean ? first_clean : first_any;
}

namespace origin_internal {

bool BeyondNext(const OriginPolicy& policy, ObjectKey key, int64_t now_ms, int64_t* ttl_ms) {
  const Template& t = policy.tmpl;
  int64_t due = t.Due(key.msn, key.kind == ObjectKey::kPart ? key.part : -1);
  int64_t step = key.kind == ObjectKey::kPart && t.part_ms > 0 ? t.part_ms : t.segment_ms;
  if (due - now_ms <= step) return false;
  *ttl_ms = due - now_ms;
  return true;
}

ReadDecision DecideFound(const OriginPolicy& policy, const RenditionMeta& meta, ObjectKey key,
                         int64_t now_ms, const StoredObject* object) {
  ReadDecision d;
  std::shared_ptr<const Candidate> chosen;
  if (object) {
    chosen = ChooseCandidate(policy, *object, key.msn);
    d.generation = object->generation;
  }
  const Template& t = policy.tmpl;
  if (key.kind == ObjectKey::kInit || !t.known()) {
    d.verdict = chosen ? ReadDecision::kServe : ReadDecision::kMissing;
    d.candidate = std::move(chosen);
    return d;
  }
  int64_t due = t.Due(key.msn, key.kind == ObjectKey::kPart ? key.part : -1);
  if (!chosen) {
    if (now_ms > due + t.retry_deadline_ms) {
      d.verdict = ReadDecision::kGone;
    } else {
      d.verdict = ReadDecision::kHold;
      d.until_ms = due + t.retry_deadline_ms;
    }
    return d;
  }
  d.candidate = chosen;
  d.verdict = ReadDecision::kServe;
  if (now_ms >= due + t.grace_ms) return d;
  // L-12: a better-ranked pipeline that is still delivering (it published the previous
  // segment or later) and has no candidate here yet is waited for until due + grace.
  int chosen_rank = policy.Rank(chosen->pipeline);
  for (const auto& [pipeline, newest] : meta.pipeline_newest) {
    if (newest < key.msn - 1 || policy.Rank(pipeline) >= chosen_rank) continue;
    bool present = std::any_of(object->candidates.begin(), object->candidates.end(),
                               [&](const auto& c) { return c->pipeline == pipeline; });
    if (present) continue;
    d.verdict = ReadDecision::kHold;
    d.until_ms = due + t.grace_ms;
    return d;
  }
  return d;
}

}  // namespace origin_internal

RequestClass ClassifyRead(const OriginPolicy& policy, const RenditionMeta& meta,
                          std::optional<ObjectKey> key, int64_t now_ms) {
  if (!key || key->kind == ObjectKey::kInit) return RequestClass::kLive;
  int64_t edge = policy.tmpl.known() ? policy.tmpl.ProducingMsn(now_ms) : meta.newest_msn;
  if (edge < 0) return RequestClass::kLive;
  return key->msn >= edge - policy.live_window - 1 ? RequestClass::kLive : RequestClass::kDvr;
}

bool IsFirstDue(const Template& t, ObjectKey key, int64_t now_ms) {
  if (!t.known() || key.kind == ObjectKey::kInit) return false;
  const int64_t first = std::max<int64_t>(0, t.ProducingMsn(now_ms));
  if (key.msn != first) return false;
  if (key.kind != ObjectKey::kPart || t.part_ms <= 0) return true;
  // The part due after now whose predecessor is not: part 0 while the segment has not begun.
  const int64_t due = t.Due(key.msn, key.part);
  return due > now_ms && (key.part == 0 || t.Due(key.msn, key.part - 1) <= now_ms);
}

}  // namespace meshwork::streamer
