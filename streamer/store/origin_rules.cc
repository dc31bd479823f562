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

namespace {

int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

std::optional<std::string> OptionalString(const nlohmann::json& o, const char* key) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::optional<int64_t> OptionalInt(const nlohmann::json& o, const char* key) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

CandidateRange RangeFromJson(const nlohmann::json& o) {
  CandidateRange r;
  if (!o.is_object()) return r;
  r.pipeline = OptionalString(o, "pipeline");
  r.region = OptionalString(o, "region");
  r.from_msn = OptionalInt(o, "from_msn");
  r.to_msn = OptionalInt(o, "to_msn");
  return r;
}

}  // namespace

int64_t Template::Due(int64_t msn, int part) const {
  int64_t segment_end = base() + (msn + 1) * segment_ms;
  if (part < 0 || part_ms <= 0) return segment_end;
  return std::min(segment_end, base() + msn * segment_ms + (part + 1) * part_ms);
}

int64_t Template::ProducingMsn(int64_t now_ms) const {
  return FloorDiv(now_ms - base(), segment_ms);
}

int64_t Template::StartFor(int64_t msn, int64_t published_ms) const {
  return published_ms - (msn + 1) * segment_ms;
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

bool CandidateRange::Covers(const Candidate& c, int64_t msn) const {
  if (pipeline && *pipeline != c.pipeline) return false;
  if (region && *region != c.region) return false;
  if (from_msn && msn < *from_msn) return false;
  if (to_msn && msn > *to_msn) return false;
  return true;
}

OriginPolicy OriginPolicy::FromJson(const nlohmann::json& stream) {
  OriginPolicy p;
  if (!stream.is_object()) return p;
  auto number = [](const nlohmann::json& o, const char* key, int64_t fallback) {
    return OptionalInt(o, key).value_or(fallback);
  };
  p.tmpl.segment_ms = static_cast<int>(number(stream, "segment_ms", 2000));
  p.tmpl.part_ms = static_cast<int>(number(stream, "part_ms", 0));
  if (auto t = stream.find("template"); t != stream.end() && t->is_object()) {
    // A configured start is never negative (central's validation); absent, null or negative
    // means "derive it from the first publish".
    int64_t start = number(*t, "availability_start", -1);
    p.tmpl.availability_start_ms = start >= 0 ? start : Template::kUnknownStart;
    p.tmpl.segment_ms = static_cast<int>(number(*t, "segment_ms", p.tmpl.segment_ms));
    p.tmpl.part_ms = static_cast<int>(number(*t, "part_ms", p.tmpl.part_ms));
    p.tmpl.retry_deadline_ms = static_cast<int>(number(*t, "retry_deadline_ms", p.tmpl.segment_ms));
    p.tmpl.grace_ms = static_cast<int>(number(*t, "grace_ms", 200));
  } else {
    p.tmpl.retry_deadline_ms = p.tmpl.segment_ms;
  }
  if (p.tmpl.segment_ms <= 0) p.tmpl.segment_ms = 2000;
  if (auto it = stream.find("pipelines"); it != stream.end() && it->is_array()) {
    for (const auto& v : *it) {
      if (v.is_string()) p.pipelines.push_back(v.get<std::string>());
    }
  }
  if (auto it = stream.find("masks"); it != stream.end() && it->is_array()) {
    for (const auto& m : *it) p.masks.push_back(RangeFromJson(m));
  }
  p.version = static_cast<uint64_t>(std::max<int64_t>(1, number(stream, "version", 1)));
  if (auto it = stream.find("range_versions"); it != stream.end() && it->is_array()) {
    for (const auto& r : *it) {
      if (!r.is_object()) continue;
      p.range_versions.push_back(
          {RangeFromJson(r), static_cast<uint64_t>(std::max<int64_t>(0, number(r, "version", 0)))});
    }
  }
  p.live_window = static_cast<int>(number(stream, "live_window", 6));
  if (auto cors = OptionalString(stream, "cors")) p.cors = *cors;
  return p;
}

int OriginPolicy::Rank(const std::string& pipeline) const {
  auto it = std::find(pipelines.begin(), pipelines.end(), pipeline);
  return static_cast<int>(it - pipelines.begin());
}

bool OriginPolicy::Masked(const Candidate& c, int64_t msn) const {
  return std::any_of(masks.begin(), masks.end(),
                     [&](const CandidateRange& m) { return m.Covers(c, msn); });
}

uint64_t OriginPolicy::VersionOf(const Candidate& c, int64_t msn) const {
  uint64_t v = version;
  for (const auto& rv : range_versions) {
    if (rv.range.Covers(c, msn)) v = std::max(v, rv.version);
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

}  // namespace meshwork::streamer
