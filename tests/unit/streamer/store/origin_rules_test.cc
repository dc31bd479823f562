// The live origin's read rules (L-4…L-15), decided with explicit times (no real clock).
#include "streamer/store/origin_rules.h"

#include <catch2/catch.hpp>

#include "streamer/store/window_index.h"

namespace meshwork::streamer {
namespace {

constexpr int64_t kStart = 1'700'000'000'000;  // availability_start, epoch ms

// The read rules' policy of a stream object, as a node gets it from central.
OriginPolicy PolicyFrom(const nlohmann::json& stream) {
  return OriginPolicy::From(*ParseStreamConfig("s", stream));
}

OriginPolicy Policy() {
  return PolicyFrom(
      {{"segment_ms", 2000},
       {"part_ms", 500},
       {"live_window", 6},
       {"pipelines", {"eu-a", "us-b"}},
       {"template",
        {{"availability_start", kStart}, {"retry_deadline_ms", 2000}, {"grace_ms", 200}}}});
}

std::shared_ptr<const Candidate> Made(std::string pipeline, uint32_t defects = 0,
                                      std::string region = "") {
  auto c = std::make_shared<Candidate>();
  c->pipeline = std::move(pipeline);
  c->defects = defects;
  c->region = std::move(region);
  return c;
}

StoredObject Object(std::vector<std::shared_ptr<const Candidate>> candidates) {
  StoredObject o;
  o.candidates = std::move(candidates);
  o.generation = o.candidates.size();
  return o;
}

// Decides with a lookup that records whether it ran.
ReadDecision Decide(const OriginPolicy& p, const RenditionMeta& meta, ObjectKey key, int64_t now,
                    const StoredObject* object, bool* looked = nullptr) {
  return DecideRead(p, meta, key, now, [&] {
    if (looked) *looked = true;
    return object ? std::make_shared<StoredObject>(*object) : nullptr;
  });
}

TEST_CASE("L-4 due(msn) follows the template and parts are due as they end") {
  OriginPolicy p = Policy();
  CHECK(p.tmpl.Due(0) == kStart + 2000);
  CHECK(p.tmpl.Due(10) == kStart + 22'000);
  CHECK(p.tmpl.Due(10, 0) == kStart + 20'500);
  CHECK(p.tmpl.Due(10, 3) == kStart + 22'000);
  CHECK(p.tmpl.ProducingMsn(kStart + 20'000) == 10);
  CHECK(p.tmpl.ProducingMsn(kStart + 21'999) == 10);
  CHECK(p.tmpl.StartFor(10, kStart + 22'000) == kStart);
}

TEST_CASE("L-9 a start derived before 1970 is still a known start, and old objects are gone") {
  OriginPolicy p = Policy();
  p.tmpl.availability_start_ms = -900'000;  // msn numbering ahead of the wall clock (S-5)
  CHECK(p.tmpl.known());
  CHECK(PolicyFrom(nlohmann::json::object()).tmpl.known() == false);
  RenditionMeta meta;
  auto d =
      origin_internal::DecideFound(p, meta, ObjectKey{ObjectKey::kTs, 1, -1}, 10'000'000, nullptr);
  CHECK(d.verdict == ReadDecision::kGone);
}

TEST_CASE("L-4 before the start is known, a part's template timing and due time are finite") {
  OriginPolicy p = Policy();
  p.tmpl = Template{};  // no configured start, nothing published yet
  p.tmpl.part_ms = 500;
  REQUIRE_FALSE(p.tmpl.known());
  auto timing = store_internal::TemplateTiming(p.tmpl, ObjectKey{ObjectKey::kPart, -1, 1});
  CHECK(timing.program_date_time_ms == -2000 + 500);
  CHECK(p.tmpl.Due(-1, 1) == -2000 + 1000);
  CHECK(p.tmpl.ProducingMsn(4000) == 2);
}

TEST_CASE("L-5 retry_deadline_ms defaults to segment_ms") {
  auto p = PolicyFrom({{"segment_ms", 4000}, {"template", {{"availability_start", 0}}}});
  CHECK(p.tmpl.retry_deadline_ms == 4000);
  CHECK(p.tmpl.grace_ms == 200);
  CHECK(PolicyFrom({{"segment_ms", 3000}}).tmpl.retry_deadline_ms == 3000);
}

TEST_CASE("L-8 a future object gets 404 with a TTL ending at its due time, without a lookup") {
  OriginPolicy p = Policy();
  RenditionMeta meta{0, 9, {{"eu-a", 9}}};
  int64_t now = kStart + 20'123;  // msn 10 is being produced
  for (int64_t msn : {12, 13, 100}) {
    bool looked = false;
    auto d = Decide(p, meta, {ObjectKey::kTs, msn, -1}, now, nullptr, &looked);
    CHECK(d.verdict == ReadDecision::kNotYet);
    CHECK(d.ttl_ms == p.tmpl.Due(msn) - now);  // millisecond precision
    CHECK_FALSE(looked);
  }
  // 11 is due 3.877 s from now: more than one segment ahead → 404 too, TTL to the ms.
  auto d = Decide(p, meta, {ObjectKey::kTs, 11, -1}, now, nullptr);
  CHECK(d.verdict == ReadDecision::kNotYet);
  CHECK(d.ttl_ms == 3877);
  // Parts step by part_ms: the part after next is already "future".
  d = Decide(p, meta, {ObjectKey::kPart, 10, 2}, now, nullptr);
  CHECK(d.verdict == ReadDecision::kNotYet);
  CHECK(d.ttl_ms == p.tmpl.Due(10, 2) - now);
}

TEST_CASE("L-8 a published object at the live edge is served even where the template says future") {
  // An edge's relayed stream whose source restarted on a later timeline: its objects come
  // ahead of the template the edge derived. What was published (and listed) is served; what
  // lies further ahead is still a 404 decided without a lookup.
  OriginPolicy p = Policy();
  int64_t now = kStart + 20'123;              // by the template, msn 10 is being produced
  RenditionMeta meta{0, 14, {{"eu-a", 14}}};  // but msn 14 is published already
  StoredObject segment = Object({Made("eu-a")});
  bool looked = false;
  auto d = Decide(p, meta, {ObjectKey::kM4s, 14, -1}, now, &segment, &looked);
  CHECK(d.verdict == ReadDecision::kServe);
  CHECK(looked);
  d = Decide(p, meta, {ObjectKey::kPart, 15, 1}, now, &segment);  // the open segment's part
  CHECK(d.verdict == ReadDecision::kServe);
  looked = false;
  d = Decide(p, meta, {ObjectKey::kPart, 15, 3}, now, nullptr, &looked);  // not there yet
  CHECK(d.verdict == ReadDecision::kNotYet);
  CHECK(looked);
  looked = false;
  d = Decide(p, meta, {ObjectKey::kM4s, 17, -1}, now, nullptr, &looked);
  CHECK(d.verdict == ReadDecision::kNotYet);
  CHECK_FALSE(looked);
}

TEST_CASE("L-7 the next due object is held until its retry deadline") {
  OriginPolicy p = Policy();
  RenditionMeta meta{0, 9, {{"eu-a", 9}}};
  int64_t now = kStart + 20'123;
  auto d = Decide(p, meta, {ObjectKey::kTs, 10, -1}, now, nullptr);
  CHECK(d.verdict == ReadDecision::kHold);
  CHECK(d.until_ms == p.tmpl.Due(10) + 2000);
  // The next part, too.
  d = Decide(p, meta, {ObjectKey::kPart, 10, 0}, now, nullptr);
  CHECK(d.verdict == ReadDecision::kHold);
  CHECK(d.until_ms == p.tmpl.Due(10, 0) + 2000);
}

TEST_CASE("L-9 410 after the retry deadline and before the stream's start") {
  OriginPolicy p = Policy();
  RenditionMeta meta{5, 12, {{"eu-a", 12}}};
  int64_t due = p.tmpl.Due(10);
  // Still within the retry deadline: held; one millisecond past it: gone.
  CHECK(Decide(p, meta, {ObjectKey::kTs, 10, -1}, due + 2000, nullptr).verdict ==
        ReadDecision::kHold);
  CHECK(Decide(p, meta, {ObjectKey::kTs, 10, -1}, due + 2001, nullptr).verdict ==
        ReadDecision::kGone);
  bool looked = false;
  auto d = Decide(p, meta, {ObjectKey::kTs, 4, -1}, due, nullptr, &looked);
  CHECK(d.verdict == ReadDecision::kGone);
  CHECK_FALSE(looked);  // decided from metadata
}

TEST_CASE("L-11 the first clean candidate in pipeline order is chosen") {
  OriginPolicy p = Policy();
  auto a = Made("eu-a"), b = Made("us-b"), z = Made("zz"), y = Made("yy");
  CHECK(ChooseCandidate(p, Object({b, a}), 1)->pipeline == "eu-a");
  CHECK(ChooseCandidate(p, Object({z, b}), 1)->pipeline == "us-b");
  // Unknown pipelines sort after the configured ones, by name.
  CHECK(ChooseCandidate(p, Object({z, y}), 1)->pipeline == "yy");
  // A defective preferred candidate loses to a clean one.
  auto bad_a = Made("eu-a", kDefectMissingFrames);
  CHECK(ChooseCandidate(p, Object({bad_a, b}), 1)->pipeline == "us-b");
  // All defective: the first, with its defects.
  auto bad_b = Made("us-b", kDefectShort);
  auto chosen = ChooseCandidate(p, Object({bad_b, bad_a}), 1);
  CHECK(chosen->pipeline == "eu-a");
  CHECK(DefectsToString(chosen->defects) == "missing-frames");
  CHECK(DefectsToString(kDefectShort | kDefectTimestampGap | kDefectMissing) ==
        "short, missing, timestamp-gap");
}

TEST_CASE("L-12 a late preferred pipeline is waited for at most the grace") {
  OriginPolicy p = Policy();
  // eu-a delivered msn 9, so it is expected for 10; only us-b has delivered 10 so far.
  RenditionMeta meta{0, 10, {{"eu-a", 9}, {"us-b", 10}}};
  StoredObject only_b = Object({Made("us-b")});
  int64_t due = p.tmpl.Due(10);
  auto d = Decide(p, meta, {ObjectKey::kTs, 10, -1}, due + 50, &only_b);
  CHECK(d.verdict == ReadDecision::kHold);
  CHECK(d.until_ms == due + 200);
  d = Decide(p, meta, {ObjectKey::kTs, 10, -1}, due + 200, &only_b);
  CHECK(d.verdict == ReadDecision::kServe);
  CHECK(d.candidate->pipeline == "us-b");
  // A pipeline that stopped delivering (its newest is 8) is not waited for at all.
  RenditionMeta stopped{0, 10, {{"eu-a", 8}, {"us-b", 10}}};
  d = Decide(p, stopped, {ObjectKey::kTs, 10, -1}, due + 50, &only_b);
  CHECK(d.verdict == ReadDecision::kServe);
  // Once the preferred candidate is there it is served at once.
  StoredObject both = Object({Made("us-b"), Made("eu-a")});
  d = Decide(p, meta, {ObjectKey::kTs, 10, -1}, due + 50, &both);
  CHECK(d.verdict == ReadDecision::kServe);
  CHECK(d.candidate->pipeline == "eu-a");
}

TEST_CASE("L-13 a mask hides a range of a pipeline or region, and lifting it restores it") {
  auto json =
      nlohmann::json{{"segment_ms", 2000},
                     {"pipelines", {"eu-a", "us-b"}},
                     {"template", {{"availability_start", kStart}}},
                     {"masks",
                      {{{"id", "m1"}, {"pipeline", "eu-a"}, {"from_msn", 100}, {"to_msn", 140}},
                       {{"id", "m2"}, {"region", "us"}, {"from_msn", 500}}}}};
  OriginPolicy masked = PolicyFrom(json);
  auto a = Made("eu-a", 0, "eu"), b = Made("us-b", 0, "us");
  StoredObject both = Object({a, b});
  CHECK(ChooseCandidate(masked, both, 99)->pipeline == "eu-a");
  CHECK(ChooseCandidate(masked, both, 100)->pipeline == "us-b");
  CHECK(ChooseCandidate(masked, both, 140)->pipeline == "us-b");
  CHECK(ChooseCandidate(masked, both, 141)->pipeline == "eu-a");
  // Open-ended region mask from 500: us-b gone from there on; only-us objects vanish.
  CHECK(ChooseCandidate(masked, Object({b}), 600) == nullptr);
  json["masks"] = nlohmann::json::array();
  OriginPolicy lifted = PolicyFrom(json);
  CHECK(ChooseCandidate(lifted, both, 120)->pipeline == "eu-a");
  CHECK(ChooseCandidate(lifted, Object({b}), 600)->pipeline == "us-b");
  // A masked-only object past its deadline is gone, like one never delivered.
  RenditionMeta meta{0, 600, {{"us-b", 600}}};
  StoredObject only_b = Object({b});
  CHECK(DecideRead(masked, meta, {ObjectKey::kTs, 550, -1}, masked.tmpl.Due(550) + 5000, [&] {
          return std::make_shared<StoredObject>(only_b);
        }).verdict == ReadDecision::kGone);
}

TEST_CASE("L-14 versions: whole-stream and per-range bumps") {
  auto json =
      nlohmann::json{{"version", 3},
                     {"range_versions",
                      {{{"from_msn", 10}, {"to_msn", 20}, {"pipeline", "eu-a"}, {"version", 5}}}}};
  OriginPolicy p = PolicyFrom(json);
  auto a = Made("eu-a"), b = Made("us-b");
  CHECK(p.VersionOf(*a, 9) == 3);
  CHECK(p.VersionOf(*a, 15) == 5);
  CHECK(p.VersionOf(*b, 15) == 3);
  CHECK(PolicyFrom(nlohmann::json::object()).version == 1);
}

TEST_CASE("L-15 reads are classed live or DVR from the template alone") {
  OriginPolicy p = Policy();
  RenditionMeta meta{0, 99, {}};
  int64_t now = kStart + 200'000;                                          // msn 100 in production
  CHECK(ClassifyRead(p, meta, std::nullopt, now) == RequestClass::kLive);  // playlist
  CHECK(ClassifyRead(p, meta, ObjectKey{ObjectKey::kInit, -1, -1}, now) == RequestClass::kLive);
  CHECK(ClassifyRead(p, meta, ObjectKey{ObjectKey::kTs, 99, -1}, now) == RequestClass::kLive);
  CHECK(ClassifyRead(p, meta, ObjectKey{ObjectKey::kTs, 93, -1}, now) == RequestClass::kLive);
  CHECK(ClassifyRead(p, meta, ObjectKey{ObjectKey::kTs, 92, -1}, now) == RequestClass::kDvr);
  CHECK(ClassifyRead(p, meta, ObjectKey{ObjectKey::kTs, 3, -1}, now) == RequestClass::kDvr);
}

TEST_CASE("L-4 without a configured availability start, reads wait for the first publish") {
  auto p = PolicyFrom({{"segment_ms", 2000}});
  CHECK_FALSE(p.tmpl.known());
  RenditionMeta meta;
  auto d = DecideRead(p, meta, {ObjectKey::kTs, 7, -1}, kStart,
                      [] { return std::shared_ptr<const StoredObject>(); });
  CHECK(d.verdict == ReadDecision::kMissing);
}

}  // namespace
}  // namespace meshwork::streamer
