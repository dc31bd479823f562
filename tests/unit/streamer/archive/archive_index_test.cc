// L-19: the archive's memory index is read from immutable snapshots: a reader holds the lock
// for a pointer copy, never while it searches, and sees one whole state.
#include "streamer/archive/archive_index.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <thread>

namespace meshwork::streamer::archive {
namespace archive_index_test {
namespace {

const TrackKey kV1{"news", Proto::kTs, "v1"};
const TrackKey kA1{"news", Proto::kFmp4, "a1"};

ArchivedSegment Seg(int64_t start, int64_t duration = 2000, uint64_t size = 100) {
  return ArchivedSegment{start, duration, size};
}

// The same questions asked of the index and of a plain sorted map.
void CheckAgainst(const ArchiveIndex& index, const std::map<int64_t, ArchivedSegment>& model,
                  int64_t from, int64_t to) {
  std::vector<int64_t> expected;
  auto it = model.lower_bound(from);
  if (it != model.begin() && std::prev(it)->second.end_ms() > from) --it;
  for (; it != model.end() && it->first < to && expected.size() < 50; ++it) {
    expected.push_back(it->first);
  }
  std::vector<int64_t> got;
  for (const auto& s : index.Range(kV1, from, to, 50)) got.push_back(s.start_ms);
  CHECK(got == expected);
}

TEST_CASE(
    "L-19 D-4 the snapshot index answers as a sorted map through adds, replacements, trims "
    "and pops across many runs") {
  ArchiveIndex index;
  std::map<int64_t, ArchivedSegment> model;
  std::mt19937 rng(19);
  // Out of order, as a scan of the disk adds them, and over ten runs' worth of segments.
  std::vector<int64_t> starts;
  for (int64_t i = 0; i < static_cast<int64_t>(ArchiveIndex::kRun) * 10; ++i) {
    starts.push_back(i * 2000);
  }
  std::shuffle(starts.begin(), starts.end(), rng);
  uint64_t bytes = 0;
  for (int64_t start : starts) {
    auto seg = Seg(start, 2000, 100 + static_cast<uint64_t>(start % 7));
    index.Add(kV1, seg);
    model[start] = seg;
    bytes += seg.size;
  }
  // A replacement keeps the count and corrects the bytes.
  index.Add(kV1, Seg(4000, 2000, 5000));
  bytes = bytes - model[4000].size + 5000;
  model[4000] = Seg(4000, 2000, 5000);
  REQUIRE(index.SegmentCount() == model.size());
  CHECK(index.StreamBytes("news") == bytes);
  CHECK(index.Snapshot()->at(kV1)->runs.size() > 2);  // split into runs, each bounded
  for (const auto& run : index.Snapshot()->at(kV1)->runs) {
    CHECK(run->size() <= 2 * ArchiveIndex::kRun);
  }
  for (int64_t start : {0, 1, 4000, 4001, 511 * 2000 + 1, 1000 * 2000, 2559 * 2000, 2560 * 2000}) {
    INFO("start " << start);
    auto found = index.Find(kV1, start);
    auto m = model.find(start);
    CHECK(found.has_value() == (m != model.end()));
    if (found && m != model.end()) CHECK(found->size == m->second.size);
    CheckAgainst(index, model, start, start + 30'000);
  }
  CHECK(index.Extent("news", Proto::kTs) ==
        std::make_pair(int64_t{0}, model.rbegin()->second.end_ms()));

  // Trimming to a depth removes the oldest, in order, across run boundaries.
  index.AddInit(kV1, 0);
  index.AddInit(kV1, 1'000'000);
  index.AddInit(kV1, 2'000'000);
  auto trimmed = index.TrimToDepth(kV1, 3'000'000);
  REQUIRE_FALSE(trimmed.segments.empty());
  for (const auto& s : trimmed.segments) {
    CHECK(s.start_ms == model.begin()->first);
    model.erase(model.begin());
  }
  CHECK(model.rbegin()->second.end_ms() - model.begin()->first <= 3'000'000);
  // The oldest left starts past 2 000 000: the two older inits go, that one stays.
  REQUIRE(model.begin()->first > 2'000'000);
  CHECK(trimmed.inits == std::vector<int64_t>{0, 1'000'000});
  CHECK(index.InitFor(kV1, model.begin()->first) == 2'000'000);
  CHECK(index.SegmentCount() == model.size());
  CheckAgainst(index, model, model.begin()->first - 5000, model.begin()->first + 20'000);

  // The disk budget's victim is the oldest segment over the stream's tracks.
  index.Add(kA1, Seg(model.begin()->first - 1));
  auto popped = index.PopOldest("news");
  REQUIRE(popped);
  CHECK(popped->first == kA1);
  popped = index.PopOldest("news");
  REQUIRE(popped);
  CHECK(popped->first == kV1);
  CHECK(popped->second.start_ms == model.begin()->first);
  model.erase(model.begin());
  CheckAgainst(index, model, 0, model.begin()->first + 10'000);

  // Trimming a track nobody recorded makes no track.
  CHECK(index.TrimToDepth(TrackKey{"other", Proto::kTs, "v1"}, 0).segments.empty());
  CHECK(index.Renditions("other", Proto::kTs).empty());
  index.Forget("news");
  CHECK(index.SegmentCount() == 0);
  CHECK(index.Range(kV1, 0, INT64_MAX, 10).empty());
}

TEST_CASE("L-19 D-2 adding a scan's segments at once equals adding them one by one") {
  std::mt19937 rng(2);
  std::vector<ArchivedSegment> segments;
  for (int64_t i = 0; i < 1300; ++i) segments.push_back(Seg(i * 2000, 2000, 10 + i % 5));
  std::shuffle(segments.begin(), segments.end(), rng);
  ArchiveIndex one_by_one;
  ArchiveIndex at_once;
  one_by_one.Add(kV1, Seg(4000, 2000, 999));  // held before: the scan's copy replaces it
  at_once.Add(kV1, Seg(4000, 2000, 999));
  for (const auto& s : segments) one_by_one.Add(kV1, s);
  at_once.AddMany(kV1, segments);
  CHECK(at_once.SegmentCount() == 1300);
  CHECK(at_once.StreamBytes("news") == one_by_one.StreamBytes("news"));
  CHECK(at_once.Find(kV1, 4000)->size == 10 + 2 % 5);
  for (const auto& run : at_once.Snapshot()->at(kV1)->runs) {
    CHECK(run->size() <= ArchiveIndex::kRun);
  }
  auto a = at_once.Range(kV1, 0, INT64_MAX, 2000);
  auto b = one_by_one.Range(kV1, 0, INT64_MAX, 2000);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].start_ms == b[i].start_ms);
    CHECK(a[i].size == b[i].size);
  }
}

TEST_CASE("L-19 a reader's snapshot stays whole while writers add, trim and forget") {
  ArchiveIndex index;
  for (int64_t i = 0; i < 100; ++i) index.Add(kV1, Seg(i * 2000));
  // A long read holds a snapshot: writers go on (nothing waits for the reader), and the
  // reader's view does not move under it.
  auto held = index.Snapshot();
  for (int64_t i = 100; i < 1000; ++i) index.Add(kV1, Seg(i * 2000));
  index.TrimToDepth(kV1, 20'000);
  CHECK(index.SegmentCount() <= 11);
  REQUIRE(held->contains(kV1));
  CHECK(held->at(kV1)->count == 100);
  CHECK(held->at(kV1)->runs.front()->front().start_ms == 0);
  index.Forget("news");
  CHECK(held->at(kV1)->count == 100);
  CHECK(index.Snapshot()->empty());
}

TEST_CASE("L-19 R-1 readers and a writer at once: every read sees a sorted, contiguous window") {
  ArchiveIndex index;
  std::atomic<bool> done{false};
  std::atomic<int> bad{0};
  std::atomic<int> reads{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      while (!done.load()) {
        auto got = index.Range(kV1, 0, INT64_MAX, 1000);
        for (size_t i = 1; i < got.size(); ++i) {
          // The writer adds in order and trims from the front: a whole state has no hole.
          if (got[i].start_ms != got[i - 1].start_ms + 2000) bad.fetch_add(1);
        }
        if (auto e = index.Extent("news", Proto::kTs); e && e->first > e->second) bad.fetch_add(1);
        reads.fetch_add(1);
      }
    });
  }
  for (int64_t i = 0; i < 3000; ++i) {
    index.Add(kV1, Seg(i * 2000));
    if (i % 16 == 0) index.TrimToDepth(kV1, 600'000);
  }
  while (reads.load() < 30) std::this_thread::yield();
  done.store(true);
  for (auto& t : readers) t.join();
  CHECK(bad.load() == 0);
  CHECK(index.SegmentCount() <= 301 + 16);  // trimmed every 16 adds
}

}  // namespace
}  // namespace archive_index_test
}  // namespace meshwork::streamer::archive
