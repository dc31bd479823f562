// The origin store (L-1, L-7, L-10, L-12, L-14, L-17): candidates per pipeline, holds
// released by publishes, notifications, derived templates, bounded memory.
#include "streamer/store/origin_store.h"

#include <catch2/catch.hpp>

#include "boost/asio/io_context.hpp"
#include "streamer/delivery/playlists.h"
#include "tests/unit/streamer/stream_configs.h"

namespace meshwork::streamer {
namespace {

using namespace std::chrono_literals;

constexpr int64_t kFakeNowMs = 1'700'000'000'000;  // FakeClock's epoch

nlohmann::json StreamObject(int64_t availability_start = kFakeNowMs) {
  return {{"segment_ms", 2000},
          {"live_window", 3},
          {"pipelines", {"a", "b"}},
          {"template", {{"availability_start", availability_start}, {"grace_ms", 200}}}};
}

OriginStore::PublishRequest Put(std::string pipeline, int64_t msn, std::string bytes = "xyz",
                                ObjectKey::Kind kind = ObjectKey::kTs) {
  OriginStore::PublishRequest r;
  r.stream = "live/ch1";
  r.rendition = "v1";
  r.key = {kind, kind == ObjectKey::kInit ? -1 : msn, -1};
  r.pipeline = std::move(pipeline);
  r.size = bytes.size();
  r.chunks.push_back(std::make_shared<const std::string>(std::move(bytes)));
  return r;
}

TEST_CASE("L-1 a publish is 201 when new and 204 when the same pipeline retries it") {
  FakeClock clock;
  OriginStore store({}, clock);
  store.Apply(Configs({{"live/ch1", StreamObject()}}));
  CHECK(*store.Publish(Put("a", 0, "first")) == OriginStore::PublishResult::kCreated);
  CHECK(*store.Publish(Put("b", 0, "other")) == OriginStore::PublishResult::kCreated);
  CHECK(*store.Publish(Put("a", 0, "retry")) == OriginStore::PublishResult::kReplaced);
  auto view = store.View("live/ch1");
  auto object = view->renditions.at("v1")->Find({ObjectKey::kTs, 0, -1});
  REQUIRE(object->candidates.size() == 2);
  auto chosen = ChooseCandidate(*view->policy, *object, 0);
  CHECK(chosen->pipeline == "a");
  CHECK(*chosen->chunks[0] == "retry");
  CHECK(view->bytes == 10);
  auto r = Put("a", 1);
  r.stream = "other";
  CHECK(store.Publish(std::move(r)).status().code() == absl::StatusCode::kNotFound);
}

TEST_CASE("R-3 a publisher cannot make up renditions without end") {
  FakeClock clock;
  OriginStore store({}, clock);
  store.Apply(Configs({{"live/ch1", StreamObject()}}));
  for (size_t i = 0; i < kMaxRenditionsPerStream; ++i) {
    auto r = Put("a", 0, "init", ObjectKey::kInit);
    r.rendition = "r" + std::to_string(i);
    REQUIRE(store.Publish(std::move(r)).ok());
  }
  auto one_more = Put("a", 0, "init", ObjectKey::kInit);
  one_more.rendition = "r-extra";
  CHECK(store.Publish(std::move(one_more)).status().code() ==
        absl::StatusCode::kResourceExhausted);  // 429
  // The renditions it holds still take objects.
  auto known = Put("a", 0);
  known.rendition = "r0";
  CHECK(store.Publish(std::move(known)).ok());
}

// A read of msn 1 (in production, not published) held on `io`; its outcomes go to `fired`.
struct HeldRead {
  FakeClock clock;
  OriginStore store{{}, clock};
  ObjectKey key{ObjectKey::kTs, 1, -1};
  boost::asio::io_context io;
  std::vector<Waiters::Outcome> fired;

  HeldRead() {
    store.Apply(Configs({{"live/ch1", StreamObject()}}));
    REQUIRE(store.Publish(Put("a", 0)).ok());
    clock.Advance(2100ms);  // msn 1 is in production
    auto view = store.View("live/ch1");
    auto d = store.Decide(*view, view->renditions.at("v1").get(), key);
    REQUIRE(d.verdict == ReadDecision::kHold);
    REQUIRE(store
                .Wait("live/ch1", "v1", key, d.generation, io.get_executor(),
                      clock.Monotonic() + 10s, [this](Waiters::Outcome o) { fired.push_back(o); })
                .ok());
  }
};

TEST_CASE("L-7 a held read is released the moment its object is published") {
  HeldRead h;
  auto& [clock, store, key, io, fired] = h;
  // Another object's publish does not release it.
  REQUIRE(store.Publish(Put("b", 0)).ok());
  io.poll();
  CHECK(fired.empty());
  REQUIRE(store.Publish(Put("a", 1)).ok());
  io.restart();
  io.poll();
  REQUIRE(fired.size() == 1);
  CHECK(fired[0] == Waiters::Outcome::kPublished);
  auto view = store.View("live/ch1");
  CHECK(store.Decide(*view, view->renditions.at("v1").get(), key).verdict == ReadDecision::kServe);
  CHECK(store.waiting() == 0);
}

TEST_CASE("P-13 a read held for an object is woken when a relay begins it in flight") {
  HeldRead h;
  auto& [clock, store, key, io, fired] = h;
  // Another object's wake leaves it held; its own wakes it (to look for the object in flight).
  store.WakeObjectWaiters("live/ch1", "v1", {ObjectKey::kTs, 2, -1});
  io.poll();
  CHECK(fired.empty());
  store.WakeObjectWaiters("live/ch1", "v1", key);
  io.restart();
  io.poll();
  REQUIRE(fired.size() == 1);
  CHECK(fired[0] == Waiters::Outcome::kPublished);
  CHECK(store.waiting() == 0);
}

TEST_CASE("L-7 a waiter registered after the publish it waits for is released at once") {
  FakeClock clock;
  OriginStore store({}, clock);
  store.Apply(Configs({{"live/ch1", StreamObject()}}));
  REQUIRE(store.Publish(Put("a", 0)).ok());
  boost::asio::io_context io;
  bool fired = false;
  // Decided while absent (generation 0), registered after the publish.
  REQUIRE(store
              .Wait("live/ch1", "v1", {ObjectKey::kTs, 0, -1}, 0, io.get_executor(),
                    clock.Monotonic() + 10s,
                    [&](Waiters::Outcome o) { fired = o == Waiters::Outcome::kPublished; })
              .ok());
  io.poll();
  CHECK(fired);
}

TEST_CASE("L-7 before anything is published, the template's first due object is held") {
  FakeClock clock;
  boost::asio::io_context io;  // outlives the store's waiters
  OriginStore store({}, clock);
  // A template that starts in 4 s: msn 0 is the next object, msn 1 lies beyond it.
  store.Apply(Configs({{"live/ch1", StreamObject(kFakeNowMs + 4000)}}));
  auto view = store.View("live/ch1");
  REQUIRE(view);
  auto d = store.Decide(*view, nullptr, {ObjectKey::kTs, 0, -1});
  CHECK(d.verdict == ReadDecision::kHold);
  CHECK(d.until_ms == kFakeNowMs + 4000 + 2000 + 2000);  // due, then the retry deadline
  CHECK(store.Decide(*view, nullptr, {ObjectKey::kM4s, 0, -1}).verdict == ReadDecision::kHold);
  d = store.Decide(*view, nullptr, {ObjectKey::kTs, 1, -1});
  CHECK(d.verdict == ReadDecision::kNotYet);
  CHECK(d.ttl_ms == 8000);
  // Ten seconds later, still nothing published: msn 3 is the one in production.
  clock.Advance(10s);
  view = store.View("live/ch1");
  CHECK(store.Decide(*view, nullptr, {ObjectKey::kTs, 3, -1}).verdict == ReadDecision::kHold);
  CHECK(store.Decide(*view, nullptr, {ObjectKey::kTs, 5, -1}).verdict == ReadDecision::kNotYet);
  // A waiter on the held object is released by its publish.
  ObjectKey producing{ObjectKey::kTs, 3, -1};
  d = store.Decide(*view, nullptr, producing);
  REQUIRE(d.verdict == ReadDecision::kHold);
  bool released = false;
  REQUIRE(store
              .Wait("live/ch1", "v1", producing, d.generation, io.get_executor(),
                    clock.Monotonic() + 10s,
                    [&](Waiters::Outcome o) { released = o == Waiters::Outcome::kPublished; })
              .ok());
  auto published = store.Publish(Put("a", 3));
  INFO(published.status().ToString());
  REQUIRE(published.ok());
  io.poll();
  CHECK(released);
}

TEST_CASE("L-7 before the first publish, a part is held only when it is the next one due") {
  Template t;
  t.availability_start_ms = 10'000;
  t.segment_ms = 2000;
  t.part_ms = 500;
  // Before the start: part 0 of msn 0.
  CHECK(IsFirstDue(t, {ObjectKey::kPart, 0, 0}, 5'000));
  CHECK_FALSE(IsFirstDue(t, {ObjectKey::kPart, 0, 1}, 5'000));
  CHECK_FALSE(IsFirstDue(t, {ObjectKey::kPart, 1, 0}, 5'000));
  // 0.7 s into msn 0: part 1 (due at 1.0 s) is next; part 0 is past, part 2 beyond.
  CHECK(IsFirstDue(t, {ObjectKey::kPart, 0, 1}, 10'700));
  CHECK_FALSE(IsFirstDue(t, {ObjectKey::kPart, 0, 0}, 10'700));
  CHECK_FALSE(IsFirstDue(t, {ObjectKey::kPart, 0, 2}, 10'700));
  CHECK(IsFirstDue(t, {ObjectKey::kTs, 0, -1}, 10'700));
  CHECK_FALSE(IsFirstDue(t, {ObjectKey::kInit, -1, -1}, 10'700));
  t.availability_start_ms = Template::kUnknownStart;
  CHECK_FALSE(IsFirstDue(t, {ObjectKey::kTs, 0, -1}, 10'700));
}

TEST_CASE("L-4 the availability start is derived from the first publish when not configured") {
  FakeClock clock;
  OriginStore store({}, clock);
  store.Apply(Configs({{"live/ch1", StreamObject(-1)}}));
  REQUIRE(store.Publish(Put("a", 40)).ok());
  auto policy = store.View("live/ch1")->policy;
  REQUIRE(policy->tmpl.known());
  CHECK(policy->tmpl.Due(40) == kFakeNowMs);
  // A configuration change that still leaves it open keeps the derived start.
  store.Apply(Configs({{"live/ch1", StreamObject(-1)}}));
  CHECK(store.View("live/ch1")->policy->tmpl.Due(40) == kFakeNowMs);
}

TEST_CASE("L-10 notifications accumulate with an increasing sequence and mark later segments") {
  FakeClock clock;
  OriginStore store({}, clock);
  store.Apply(Configs({{"live/ch1", StreamObject()}}));
  REQUIRE(store.Publish(Put("a", 0)).ok());
  CHECK(*store.Notify("live/ch1", {{"id", "e1"}, {"type", "ad-start"}}) == 1);
  REQUIRE(store.Publish(Put("a", 1)).ok());
  CHECK(*store.Notify("live/ch1", {{"id", "e2"}, {"type", "ad-end"}}) == 2);
  auto view = store.View("live/ch1");
  auto rendition = view->renditions.at("v1");
  CHECK(rendition->Find({ObjectKey::kTs, 0, -1})->candidates[0]->notifications == nullptr);
  auto first = rendition->Find({ObjectKey::kTs, 1, -1})->candidates[0]->notifications;
  REQUIRE(first);
  REQUIRE(view->notifications);
  CHECK(*first != *view->notifications);
  // base64url of {"events":[...],"seq":2}: decode and check both events are there.
  auto decode = [](const std::string& in) {
    std::string out;
    uint32_t acc = 0;
    int bits = 0;
    for (char c : in) {
      int v = c >= 'A' && c <= 'Z'   ? c - 'A'
              : c >= 'a' && c <= 'z' ? c - 'a' + 26
              : c >= '0' && c <= '9' ? c - '0' + 52
              : c == '-'             ? 62
                                     : 63;
      acc = (acc << 6) | v;
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out.push_back(static_cast<char>((acc >> bits) & 0xff));
      }
    }
    return nlohmann::json::parse(out);
  };
  auto latest = decode(*view->notifications);
  CHECK(latest["seq"] == 2);
  REQUIRE(latest["events"].size() == 2);
  CHECK(latest["events"][0]["id"] == "e1");
  CHECK(latest["events"][1]["type"] == "ad-end");
  CHECK(decode(*first)["seq"] == 1);
  CHECK(store.Notify("nope", {{"id", "x"}}).status().code() == absl::StatusCode::kNotFound);
}

TEST_CASE("L-14 invalidation changes object URLs in the playlist") {
  FakeClock clock;
  OriginStore store({}, clock);
  auto config = StreamObject(kFakeNowMs - 100'000);  // msn 50 in production
  store.Apply(Configs({{"live/ch1", config}}));
  for (int msn = 0; msn < 5; ++msn) REQUIRE(store.Publish(Put("a", msn)).ok());
  auto playlist = [&] {
    auto view = store.View("live/ch1");
    return MediaPlaylist(*view->renditions.at("v1")->window, ListedVersions(view, "v1", true));
  };
  std::string before = playlist();
  CHECK(before.find("#EXT-X-MEDIA-SEQUENCE:2\n") != std::string::npos);  // live_window 3
  CHECK(before.find("4.ts?v=1\n") != std::string::npos);
  config["version"] = 2;
  config["range_versions"] = {{{"from_msn", 3}, {"to_msn", 3}, {"version", 3}}};
  store.Apply(Configs({{"live/ch1", config}}));
  std::string after = playlist();
  CHECK(after.find("2.ts?v=2\n") != std::string::npos);
  CHECK(after.find("3.ts?v=3\n") != std::string::npos);
  CHECK(after.find("4.ts?v=2\n") != std::string::npos);
}

TEST_CASE("L-13 a masked newest segment leaves the playlist and a masked older one is a gap") {
  FakeClock clock;
  OriginStore store({}, clock);
  auto config = StreamObject(kFakeNowMs - 100'000);  // msn 50 in production
  store.Apply(Configs({{"live/ch1", config}}));
  for (int msn = 0; msn < 4; ++msn) REQUIRE(store.Publish(Put("a", msn)).ok());
  config["masks"] = {{{"id", "m1"}, {"pipeline", "a"}, {"from_msn", 3}}};
  store.Apply(Configs({{"live/ch1", config}}));
  auto view = store.View("live/ch1");
  std::string text =
      MediaPlaylist(*view->renditions.at("v1")->window, ListedVersions(view, "v1", true));
  CHECK(text.find("3.ts") == std::string::npos);
  CHECK(text.find("#EXT-X-MEDIA-SEQUENCE:0\n") != std::string::npos);
  CHECK(text.find("2.ts?v=1") != std::string::npos);
  config["masks"] = {{{"id", "m2"}, {"pipeline", "a"}, {"from_msn", 1}, {"to_msn", 1}}};
  store.Apply(Configs({{"live/ch1", config}}));
  view = store.View("live/ch1");
  text = MediaPlaylist(*view->renditions.at("v1")->window, ListedVersions(view, "v1", true));
  CHECK(text.find("#EXT-X-GAP\n#EXTINF:2.000,\n1.ts") != std::string::npos);
  CHECK(text.find("#EXT-X-VERSION:8\n") != std::string::npos);
  CHECK(text.find("#EXT-X-MEDIA-SEQUENCE:1\n") != std::string::npos);  // window of 3: 1…3
}

TEST_CASE("L-13 L-14 S-12 a segment in progress is listed under its first part's version") {
  // hls.js keeps a part's GAP flag for good: parts of the open segment listed as gaps (their
  // whole object not there yet) were never loaded once the segment was complete — ~1.5 s
  // holes in LL-HLS playback.
  FakeClock clock;
  OriginStore store({}, clock);
  auto config = StreamObject(kFakeNowMs - 100'000);  // msn 50 in production
  store.Apply(Configs({{"live/ch1", config}}));
  for (int msn = 0; msn < 3; ++msn)
    REQUIRE(store.Publish(Put("a", msn, "seg", ObjectKey::kM4s)).ok());
  auto part = Put("a", 3, "part", ObjectKey::kPart);
  part.key = {ObjectKey::kPart, 3, 0};
  REQUIRE(store.Publish(std::move(part)).ok());
  auto versions = ListedVersions(store.View("live/ch1"), "v1", /*ts=*/false);
  CHECK(versions(2) == 1);
  CHECK(versions(3) == 1);  // open: its part 0 speaks for it (was 0, a gap)
  CHECK(versions(4) == 0);  // nothing of it yet
  config["version"] = 2;
  store.Apply(Configs({{"live/ch1", config}}));
  CHECK(ListedVersions(store.View("live/ch1"), "v1", false)(3) == 2);
  // A masked pipeline masks the open segment as well.
  config["masks"] = {{{"id", "m1"}, {"pipeline", "a"}, {"from_msn", 3}}};
  store.Apply(Configs({{"live/ch1", config}}));
  CHECK(ListedVersions(store.View("live/ch1"), "v1", false)(3) == 0);
}

TEST_CASE(
    "S-12 a part a preload hint named past its segment's end is 404 once the segment closes") {
  FakeClock clock;
  OriginStore store({}, clock);
  store.Apply(Configs({{"live/ch1", StreamObject(kFakeNowMs - 100'000)}}));
  for (int index = 0; index < 2; ++index) {
    auto part = Put("a", 3, "part", ObjectKey::kPart);
    part.key = {ObjectKey::kPart, 3, index};
    REQUIRE(store.Publish(std::move(part)).ok());
  }
  // Part 3.2 is the next object: held, as a preload hint's request is.
  ObjectKey hinted{ObjectKey::kPart, 3, 2};
  auto view = store.View("live/ch1");
  auto d = store.Decide(*view, view->renditions.at("v1").get(), hinted);
  REQUIRE(d.verdict == ReadDecision::kHold);
  boost::asio::io_context io;
  std::vector<Waiters::Outcome> fired;
  REQUIRE(store
              .Wait("live/ch1", "v1", hinted, d.generation, io.get_executor(),
                    clock.Monotonic() + 10s, [&](Waiters::Outcome o) { fired.push_back(o); })
              .ok());
  // A keyframe closes segment 3 after two parts: the held read is released, and decided
  // again it is a 404 — not a hold until the retry deadline.
  REQUIRE(store.Publish(Put("a", 3, "partpart", ObjectKey::kM4s)).ok());
  io.poll();
  REQUIRE(fired.size() == 1);
  CHECK(fired[0] == Waiters::Outcome::kPublished);
  view = store.View("live/ch1");
  CHECK(store.Decide(*view, view->renditions.at("v1").get(), hinted).verdict ==
        ReadDecision::kMissing);
  // The segment's own parts are still served, and the next segment's first part is held.
  CHECK(store.Decide(*view, view->renditions.at("v1").get(), {ObjectKey::kPart, 3, 1}).verdict ==
        ReadDecision::kServe);
  CHECK(store.Decide(*view, view->renditions.at("v1").get(), {ObjectKey::kPart, 4, 0}).verdict ==
        ReadDecision::kHold);
}

TEST_CASE("L-17 memory per stream stays within its window and byte bound") {
  FakeClock clock;
  OriginStore::Options options;
  options.min_retain_segments = 4;
  options.max_stream_bytes = 10'000;
  OriginStore store(options, clock);
  auto config = StreamObject(kFakeNowMs - 100'000);  // msn 50 in production
  config["live_window"] = 1;
  store.Apply(Configs({{"live/ch1", config}}));
  for (int msn = 0; msn < 10; ++msn) REQUIRE(store.Publish(Put("a", msn, "0123456789")).ok());
  auto view = store.View("live/ch1");
  auto r = view->renditions.at("v1");
  CHECK(r->meta.first_msn == 6);  // 4 retained
  CHECK(r->objects.size() == 4);
  CHECK(view->bytes == 40);
  // The byte bound trims the oldest segments further.
  for (int msn = 10; msn < 13; ++msn) {
    REQUIRE(store.Publish(Put("a", msn, std::string(4000, 'x'))).ok());
  }
  view = store.View("live/ch1");
  CHECK(view->bytes <= 10'000);
  CHECK(view->renditions.at("v1")->meta.first_msn == 11);
  // Reads below the window are gone, decided from metadata.
  auto d = store.Decide(*view, view->renditions.at("v1").get(), {ObjectKey::kTs, 5, -1});
  CHECK(d.verdict == ReadDecision::kGone);
  CHECK_FALSE(d.looked_up);
}

TEST_CASE("L-17 R-3 parts published without their segments stay within the byte bound") {
  FakeClock clock;
  OriginStore::Options options;
  options.max_stream_bytes = 10'000;
  OriginStore store(options, clock);
  store.Apply(Configs({{"live/ch1", StreamObject(kFakeNowMs - 100'000)}}));  // msn 50 now
  auto part = [](int64_t msn, int index) {
    auto r = Put("a", msn, std::string(3000, 'p'), ObjectKey::kPart);
    r.key.part = index;
    return r;
  };
  // Parts of ten segments, none of the segments: the oldest parts go.
  for (int64_t msn = 40; msn < 50; ++msn) {
    for (int index = 0; index < 3; ++index) REQUIRE(store.Publish(part(msn, index)).ok());
    CHECK(store.View("live/ch1")->bytes <= 10'000);
  }
  auto view = store.View("live/ch1");
  CHECK(view->renditions.at("v1")->Find({ObjectKey::kPart, 49, 2}) != nullptr);
  CHECK(view->renditions.at("v1")->Find({ObjectKey::kPart, 40, 0}) == nullptr);
  // Parts of one segment alone past the bound: nothing can go, so nothing more is taken.
  OriginStore single(options, clock);
  single.Apply(Configs({{"live/ch1", StreamObject(kFakeNowMs - 100'000)}}));
  absl::Status refused;
  for (int index = 0; index < 10 && refused.ok(); ++index) {
    refused = single.Publish(part(49, index)).status();
  }
  CHECK(refused.code() == absl::StatusCode::kResourceExhausted);
  CHECK(single.View("live/ch1")->bytes <= 10'000 + 3000);
  // Its init is still taken, and so is the rendition's next segment (which makes what is
  // before it trimmable): the stream goes on.
  CHECK(single.Publish(Put("a", -1, "init", ObjectKey::kInit)).ok());
  CHECK(single.Publish(Put("a", 49, "segment")).ok());
}

TEST_CASE("L-1 streams no longer placed are dropped and their waiters released") {
  FakeClock clock;
  OriginStore store({}, clock);
  store.Apply(Configs({{"live/ch1", StreamObject()}}));
  REQUIRE(store.Publish(Put("a", 0)).ok());
  boost::asio::io_context io;
  Waiters::Outcome outcome = Waiters::Outcome::kPublished;
  REQUIRE(store
              .Wait("live/ch1", "v1", {ObjectKey::kTs, 1, -1}, 0, io.get_executor(),
                    clock.Monotonic() + 10s, [&](Waiters::Outcome o) { outcome = o; })
              .ok());
  store.Apply({});
  io.poll();
  CHECK(outcome == Waiters::Outcome::kRemoved);
  CHECK(store.View("live/ch1") == nullptr);
}

TEST_CASE("L-1 a segment far ahead of its due time or of the newest one is refused") {
  FakeClock clock;
  OriginStore store({}, clock);
  store.Apply(
      Configs({{"live/ch1", StreamObject()}}));  // availability start = now: msn 0 due in 2 s
  CHECK(store.Publish(Put("a", 2)).ok());        // due in 6 s: within three segments
  auto far = store.Publish(Put("a", 1'000'000));
  CHECK(far.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(store.Publish(Put("a", kMaxMsn + 1)).status().code() == absl::StatusCode::kOutOfRange);
  // Nothing of the refused publish is visible; the window still takes real segments.
  auto view = store.View("live/ch1");
  CHECK(view->renditions.at("v1")->meta.newest_msn == 2);
  clock.Advance(std::chrono::seconds(2));
  CHECK(store.Publish(Put("a", 3)).ok());
  // Without a template start, the newest segment bounds how far ahead a publish may go.
  OriginStore open({}, clock);
  open.Apply(Configs({{"live/ch1", StreamObject(-1)}}));
  REQUIRE(open.Publish(Put("a", 10)).ok());
  CHECK(open.Publish(Put("a", 10 + 1001)).status().code() == absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("L-10 the notification header stays bounded: the oldest events give way") {
  FakeClock clock;
  OriginStore::Options options;
  options.max_notification_header_bytes = 600;
  OriginStore store(options, clock);
  store.Apply(Configs({{"live/ch1", StreamObject()}}));
  for (int i = 0; i < 10; ++i) {
    REQUIRE(store
                .Notify("live/ch1", {{"id", "e" + std::to_string(i)},
                                     {"type", "ad-start"},
                                     {"payload", std::string(60, 'x')}})
                .ok());
  }
  auto view = store.View("live/ch1");
  CHECK(view->notifications->size() <= 600);
  CHECK(view->notification_seq == 10);
  CHECK(view->notification_events.back()["id"] == "e9");
  CHECK(view->notification_events.size() < 10);
  // One event that alone exceeds the bound is refused, and the state is unchanged.
  auto big =
      store.Notify("live/ch1", {{"id", "big"}, {"type", "x"}, {"payload", std::string(1000, 'y')}});
  CHECK(big.status().code() == absl::StatusCode::kOutOfRange);
  CHECK(store.View("live/ch1")->notification_seq == 10);
}

}  // namespace
}  // namespace meshwork::streamer
