#include "streamer/archive/archive_index.h"

#include <algorithm>
#include <system_error>
#include <type_traits>

namespace meshwork::streamer::archive {

namespace {

using Run = std::vector<ArchivedSegment>;
using TrackView = ArchiveIndex::TrackView;

bool StartsBefore(const ArchivedSegment& s, int64_t start_ms) { return s.start_ms < start_ms; }

// The run `start_ms` belongs in: the last whose first segment starts at or before it (the
// first run when none does). `view` has at least one run.
size_t RunFor(const TrackView& view, int64_t start_ms) {
  auto after = std::upper_bound(view.runs.begin(), view.runs.end(), start_ms,
                                [](int64_t start, const std::shared_ptr<const Run>& run) {
                                  return start < run->front().start_ms;
                                });
  return after == view.runs.begin() ? 0 : static_cast<size_t>(after - view.runs.begin()) - 1;
}

const ArchivedSegment* FindIn(const TrackView& view, int64_t start_ms) {
  if (view.runs.empty()) return nullptr;
  const Run& run = *view.runs[RunFor(view, start_ms)];
  auto it = std::lower_bound(run.begin(), run.end(), start_ms, StartsBefore);
  return it != run.end() && it->start_ms == start_ms ? &*it : nullptr;
}

// Adds (or replaces, by start) `segment` in `view`: copies the one run it lands in.
void Insert(TrackView& view, const ArchivedSegment& segment) {
  if (view.runs.empty()) {
    view.runs.push_back(std::make_shared<const Run>(Run{segment}));
    view.bytes += segment.size;
    ++view.count;
    return;
  }
  size_t r = RunFor(view, segment.start_ms);
  Run run = *view.runs[r];
  auto it = std::lower_bound(run.begin(), run.end(), segment.start_ms, StartsBefore);
  if (it != run.end() && it->start_ms == segment.start_ms) {
    view.bytes -= it->size;
    *it = segment;
  } else {
    run.insert(it, segment);
    ++view.count;
  }
  view.bytes += segment.size;
  if (run.size() <= 2 * ArchiveIndex::kRun) {
    view.runs[r] = std::make_shared<const Run>(std::move(run));
    return;
  }
  auto half = run.begin() + static_cast<std::ptrdiff_t>(run.size() / 2);
  auto second = std::make_shared<const Run>(half, run.end());
  view.runs[r] = std::make_shared<const Run>(run.begin(), half);
  view.runs.insert(view.runs.begin() + static_cast<std::ptrdiff_t>(r) + 1, std::move(second));
}

// Removes and returns the oldest segment of a non-empty `view`.
ArchivedSegment PopFront(TrackView& view) {
  const Run& first = *view.runs.front();
  ArchivedSegment out = first.front();
  if (first.size() == 1) {
    view.runs.erase(view.runs.begin());
  } else {
    view.runs.front() = std::make_shared<const Run>(first.begin() + 1, first.end());
  }
  view.bytes -= out.size;
  --view.count;
  return out;
}

const ArchivedSegment& Front(const TrackView& view) { return view.runs.front()->front(); }
const ArchivedSegment& Back(const TrackView& view) { return view.runs.back()->back(); }

// The tracks of `stream` (all protocols) in `tracks`, in key order.
auto StreamTracks(const ArchiveIndex::Tracks& tracks, const std::string& stream) {
  auto first = tracks.lower_bound(TrackKey{stream, Proto::kTs, ""});
  auto last = first;
  while (last != tracks.end() && last->first.stream == stream) ++last;
  return std::make_pair(first, last);
}

}  // namespace

std::shared_ptr<const ArchiveIndex::Tracks> ArchiveIndex::Snapshot() const {
  absl::MutexLock lock(&mu_);
  return tracks_;
}

void ArchiveIndex::Publish(std::shared_ptr<const Tracks> next) {
  {
    absl::MutexLock lock(&mu_);
    tracks_.swap(next);
  }
  // `next` now holds the old snapshot: released here, outside the readers' lock.
}

template <typename Change>
auto ArchiveIndex::Update(const TrackKey& track, bool create, Change change) {
  absl::MutexLock writer(&write_mu_);
  auto current = Snapshot();
  auto it = current->find(track);
  if (it == current->end() && !create) return std::invoke_result_t<Change, TrackView&>{};
  TrackView view = it == current->end() ? TrackView{} : *it->second;
  auto result = change(view);
  auto next = std::make_shared<Tracks>(*current);
  (*next)[track] = std::make_shared<const TrackView>(std::move(view));
  Publish(std::move(next));
  return result;
}

void ArchiveIndex::Add(const TrackKey& track, const ArchivedSegment& segment) {
  Update(track, /*create=*/true, [&](TrackView& view) {
    Insert(view, segment);
    return true;
  });
}

void ArchiveIndex::AddMany(const TrackKey& track, std::vector<ArchivedSegment> segments) {
  if (segments.empty()) return;
  Update(track, /*create=*/true, [&](TrackView& view) {
    // The held segments first, then the new ones; a stable sort keeps them in that order
    // among equal starts, and the last of each start is the one kept.
    std::vector<ArchivedSegment> all;
    all.reserve(view.count + segments.size());
    for (const auto& run : view.runs) all.insert(all.end(), run->begin(), run->end());
    all.insert(all.end(), segments.begin(), segments.end());
    std::stable_sort(all.begin(), all.end(),
                     [](const auto& a, const auto& b) { return a.start_ms < b.start_ms; });
    TrackView rebuilt;
    rebuilt.inits = std::move(view.inits);
    Run run;
    for (size_t i = 0; i < all.size(); ++i) {
      if (i + 1 < all.size() && all[i + 1].start_ms == all[i].start_ms) continue;
      run.push_back(all[i]);
      rebuilt.bytes += all[i].size;
      ++rebuilt.count;
      if (run.size() == kRun) {
        rebuilt.runs.push_back(std::make_shared<const Run>(std::move(run)));
        run = Run();
      }
    }
    if (!run.empty()) rebuilt.runs.push_back(std::make_shared<const Run>(std::move(run)));
    view = std::move(rebuilt);
    return true;
  });
}

void ArchiveIndex::AddInit(const TrackKey& track, int64_t start_ms) {
  Update(track, /*create=*/true, [&](TrackView& view) {
    auto it = std::lower_bound(view.inits.begin(), view.inits.end(), start_ms);
    if (it == view.inits.end() || *it != start_ms) view.inits.insert(it, start_ms);
    return true;
  });
}

bool ArchiveIndex::Contains(const TrackKey& track, int64_t start_ms) const {
  return Find(track, start_ms).has_value();
}

std::optional<ArchivedSegment> ArchiveIndex::Find(const TrackKey& track, int64_t start_ms) const {
  auto tracks = Snapshot();
  auto t = tracks->find(track);
  if (t == tracks->end()) return std::nullopt;
  const ArchivedSegment* found = FindIn(*t->second, start_ms);
  if (!found) return std::nullopt;
  return *found;
}

std::vector<ArchivedSegment> ArchiveIndex::Range(const TrackKey& track, int64_t from_ms,
                                                 int64_t to_ms, size_t limit) const {
  std::vector<ArchivedSegment> out;
  auto tracks = Snapshot();
  auto t = tracks->find(track);
  if (t == tracks->end() || t->second->runs.empty()) return out;
  const auto& runs = t->second->runs;
  // The first segment starting at or after `from_ms`, as (run, index).
  size_t r = RunFor(*t->second, from_ms);
  size_t i = static_cast<size_t>(
      std::lower_bound(runs[r]->begin(), runs[r]->end(), from_ms, StartsBefore) - runs[r]->begin());
  // The segment that started before `from_ms` but runs into it belongs to the range too.
  if (i > 0) {
    if ((*runs[r])[i - 1].end_ms() > from_ms) --i;
  } else if (r > 0 && runs[r - 1]->back().end_ms() > from_ms) {
    --r;
    i = runs[r]->size() - 1;
  }
  for (; r < runs.size() && out.size() < limit; ++r, i = 0) {
    for (; i < runs[r]->size() && out.size() < limit; ++i) {
      const ArchivedSegment& s = (*runs[r])[i];
      if (s.start_ms >= to_ms) return out;
      out.push_back(s);
    }
  }
  return out;
}

std::optional<int64_t> ArchiveIndex::InitFor(const TrackKey& track, int64_t start_ms) const {
  auto tracks = Snapshot();
  auto t = tracks->find(track);
  if (t == tracks->end() || t->second->inits.empty()) return std::nullopt;
  const auto& inits = t->second->inits;
  auto it = std::upper_bound(inits.begin(), inits.end(), start_ms);
  if (it == inits.begin()) return *it;
  return *std::prev(it);
}

std::vector<std::string> ArchiveIndex::Renditions(const std::string& stream, Proto proto) const {
  std::vector<std::string> out;
  auto tracks = Snapshot();
  for (auto it = tracks->lower_bound(TrackKey{stream, proto, ""});
       it != tracks->end() && it->first.stream == stream && it->first.proto == proto; ++it) {
    if (it->second->count > 0) out.push_back(it->first.rendition);
  }
  return out;
}

std::optional<std::pair<int64_t, int64_t>> ArchiveIndex::Extent(const std::string& stream,
                                                                Proto proto) const {
  std::optional<std::pair<int64_t, int64_t>> out;
  auto tracks = Snapshot();
  for (auto it = tracks->lower_bound(TrackKey{stream, proto, ""});
       it != tracks->end() && it->first.stream == stream && it->first.proto == proto; ++it) {
    const TrackView& view = *it->second;
    if (view.count == 0) continue;
    int64_t from = Front(view).start_ms;
    int64_t to = Back(view).end_ms();
    if (!out) {
      out = {from, to};
    } else {
      out->first = std::min(out->first, from);
      out->second = std::max(out->second, to);
    }
  }
  return out;
}

ArchiveIndex::Trimmed ArchiveIndex::TrimToDepth(const TrackKey& track, int64_t depth_ms,
                                                std::optional<int64_t> reference_ms) {
  auto past_depth = [&](const TrackView& view) {
    return view.count > 0 &&
           reference_ms.value_or(Back(view).end_ms()) - Front(view).start_ms > depth_ms;
  };
  {
    // Most calls find nothing to trim: said from the snapshot, without copying the index.
    auto tracks = Snapshot();
    auto t = tracks->find(track);
    if (t == tracks->end() || !past_depth(*t->second)) return {};
  }
  return Update(track, /*create=*/false, [&](TrackView& view) {
    Trimmed out;
    while (past_depth(view)) out.segments.push_back(PopFront(view));
    // Inits older than the one the oldest remaining segment uses are no longer needed; all of
    // them, once the track's last segment went.
    if (view.count > 0) {
      auto keep = std::upper_bound(view.inits.begin(), view.inits.end(), Front(view).start_ms);
      if (keep != view.inits.begin()) --keep;
      out.inits.assign(view.inits.begin(), keep);
      view.inits.erase(view.inits.begin(), keep);
    } else if (!out.segments.empty()) {
      out.inits = std::move(view.inits);
      view.inits.clear();
    }
    return out;
  });
}

std::optional<std::pair<TrackKey, ArchivedSegment>> ArchiveIndex::PopOldest(
    const std::string& stream) {
  absl::MutexLock writer(&write_mu_);
  auto current = Snapshot();
  auto [first, last] = StreamTracks(*current, stream);
  auto oldest = last;
  for (auto it = first; it != last; ++it) {
    if (it->second->count == 0) continue;
    if (oldest == last || Front(*it->second).start_ms < Front(*oldest->second).start_ms) {
      oldest = it;
    }
  }
  if (oldest == last) return std::nullopt;
  TrackView view = *oldest->second;
  ArchivedSegment segment = PopFront(view);
  TrackKey key = oldest->first;
  auto next = std::make_shared<Tracks>(*current);
  (*next)[key] = std::make_shared<const TrackView>(std::move(view));
  Publish(std::move(next));
  return std::make_pair(std::move(key), segment);
}

uint64_t ArchiveIndex::StreamBytes(const std::string& stream) const {
  uint64_t total = 0;
  auto tracks = Snapshot();
  auto [first, last] = StreamTracks(*tracks, stream);
  for (auto it = first; it != last; ++it) total += it->second->bytes;
  return total;
}

size_t ArchiveIndex::SegmentCount() const {
  size_t n = 0;
  auto tracks = Snapshot();
  for (const auto& [key, view] : *tracks) n += view->count;
  return n;
}

void ArchiveIndex::Forget(const std::string& stream) {
  absl::MutexLock writer(&write_mu_);
  auto current = Snapshot();
  auto [first, last] = StreamTracks(*current, stream);
  if (first == last) return;
  auto next = std::make_shared<Tracks>(*current);
  auto [from, to] = StreamTracks(*next, stream);
  next->erase(from, to);
  Publish(std::move(next));
}

size_t Scan(const std::filesystem::path& root, const std::string& stream, ArchiveIndex& index) {
  namespace fs = std::filesystem;
  size_t found = 0;
  if (!SafeStreamName(stream)) return 0;
  std::error_code ec;
  for (Proto proto : {Proto::kTs, Proto::kFmp4}) {
    fs::path proto_dir = root / StreamDirName(stream) / std::string(ProtoName(proto));
    // Stepped with error codes: a directory that fails to read (EIO) ends the walk, never
    // throws on the recorder's thread.
    for (auto dir = fs::directory_iterator(proto_dir, ec); !ec && dir != fs::directory_iterator();
         dir.increment(ec)) {
      const auto& rendition = *dir;
      std::string name = rendition.path().filename().string();
      if (!SafeName(name) || !rendition.is_directory(ec)) continue;
      TrackKey track{stream, proto, name};
      std::vector<ArchivedSegment> segments;  // added at once (ArchiveIndex::AddMany)
      std::string_view extension = SegmentExtension(proto);
      auto options = fs::directory_options::skip_permission_denied;
      for (auto it = fs::recursive_directory_iterator(rendition.path(), options, ec);
           it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (ec) break;
        const auto& entry = *it;
        if (entry.is_symlink(ec)) {  // never followed out of the root
          if (entry.is_directory(ec)) it.disable_recursion_pending();
          continue;
        }
        if (!entry.is_regular_file(ec)) continue;
        std::string file = entry.path().filename().string();
        if (file.starts_with(".") && file.ends_with(".tmp")) {
          fs::remove(entry.path(), ec);  // a write a crash interrupted
          continue;
        }
        if (entry.path().parent_path().filename() == "init") {
          if (auto start = ParseInitName(file)) index.AddInit(track, *start);
          continue;
        }
        auto parsed = ParseSegmentName(file, extension);
        if (!parsed) continue;
        uint64_t size = entry.file_size(ec);
        if (ec) continue;
        segments.push_back(ArchivedSegment{parsed->first, parsed->second, size});
        ++found;
      }
      index.AddMany(track, std::move(segments));
    }
  }
  return found;
}

}  // namespace meshwork::streamer::archive
