#include "streamer/archive/archive_index.h"

#include <algorithm>
#include <system_error>

namespace meshwork::streamer::archive {

void ArchiveIndex::Add(const TrackKey& track, const ArchivedSegment& segment) {
  absl::MutexLock lock(&mu_);
  auto& t = tracks_[track];
  auto [it, fresh] = t.segments.emplace(segment.start_ms, segment);
  if (!fresh) {
    t.bytes -= it->second.size;
    it->second = segment;
  }
  t.bytes += segment.size;
}

void ArchiveIndex::AddInit(const TrackKey& track, int64_t start_ms) {
  absl::MutexLock lock(&mu_);
  tracks_[track].inits[start_ms] = true;
}

bool ArchiveIndex::Contains(const TrackKey& track, int64_t start_ms) const {
  return Find(track, start_ms).has_value();
}

std::optional<ArchivedSegment> ArchiveIndex::Find(const TrackKey& track, int64_t start_ms) const {
  absl::MutexLock lock(&mu_);
  auto t = tracks_.find(track);
  if (t == tracks_.end()) return std::nullopt;
  auto it = t->second.segments.find(start_ms);
  if (it == t->second.segments.end()) return std::nullopt;
  return it->second;
}

std::vector<ArchivedSegment> ArchiveIndex::Range(const TrackKey& track, int64_t from_ms,
                                                 int64_t to_ms, size_t limit) const {
  std::vector<ArchivedSegment> out;
  absl::MutexLock lock(&mu_);
  auto t = tracks_.find(track);
  if (t == tracks_.end()) return out;
  const auto& segments = t->second.segments;
  auto it = segments.lower_bound(from_ms);
  // The segment that started before `from_ms` but runs into it belongs to the range too.
  if (it != segments.begin()) {
    auto before = std::prev(it);
    if (before->second.end_ms() > from_ms) it = before;
  }
  for (; it != segments.end() && it->first < to_ms && out.size() < limit; ++it) {
    out.push_back(it->second);
  }
  return out;
}

std::optional<int64_t> ArchiveIndex::InitFor(const TrackKey& track, int64_t start_ms) const {
  absl::MutexLock lock(&mu_);
  auto t = tracks_.find(track);
  if (t == tracks_.end() || t->second.inits.empty()) return std::nullopt;
  const auto& inits = t->second.inits;
  auto it = inits.upper_bound(start_ms);
  if (it == inits.begin()) return it->first;
  return std::prev(it)->first;
}

std::vector<std::string> ArchiveIndex::Renditions(const std::string& stream, Proto proto) const {
  std::vector<std::string> out;
  absl::MutexLock lock(&mu_);
  for (auto it = tracks_.lower_bound(TrackKey{stream, proto, ""});
       it != tracks_.end() && it->first.stream == stream && it->first.proto == proto; ++it) {
    if (!it->second.segments.empty()) out.push_back(it->first.rendition);
  }
  return out;
}

std::optional<std::pair<int64_t, int64_t>> ArchiveIndex::Extent(const std::string& stream,
                                                                Proto proto) const {
  std::optional<std::pair<int64_t, int64_t>> out;
  absl::MutexLock lock(&mu_);
  for (auto it = tracks_.lower_bound(TrackKey{stream, proto, ""});
       it != tracks_.end() && it->first.stream == stream && it->first.proto == proto; ++it) {
    const auto& segments = it->second.segments;
    if (segments.empty()) continue;
    int64_t from = segments.begin()->first;
    int64_t to = segments.rbegin()->second.end_ms();
    if (!out) {
      out = {from, to};
    } else {
      out->first = std::min(out->first, from);
      out->second = std::max(out->second, to);
    }
  }
  return out;
}

ArchiveIndex::Trimmed ArchiveIndex::TrimToDepth(const TrackKey& track, int64_t depth_ms) {
  Trimmed out;
  absl::MutexLock lock(&mu_);
  auto t = tracks_.find(track);
  if (t == tracks_.end()) return out;
  auto& segments = t->second.segments;
  while (!segments.empty() &&
         segments.rbegin()->second.end_ms() - segments.begin()->first > depth_ms) {
    out.segments.push_back(segments.begin()->second);
    t->second.bytes -= segments.begin()->second.size;
    segments.erase(segments.begin());
  }
  // Inits older than the one the oldest remaining segment uses are no longer needed.
  auto& inits = t->second.inits;
  if (!segments.empty()) {
    auto keep = inits.upper_bound(segments.begin()->first);
    if (keep != inits.begin()) --keep;
    for (auto it = inits.begin(); it != keep;) {
      out.inits.push_back(it->first);
      it = inits.erase(it);
    }
  }
  return out;
}

std::optional<std::pair<TrackKey, ArchivedSegment>> ArchiveIndex::PopOldest(
    const std::string& stream) {
  absl::MutexLock lock(&mu_);
  Track* oldest = nullptr;
  const TrackKey* oldest_key = nullptr;
  for (auto it = tracks_.lower_bound(TrackKey{stream, Proto::kTs, ""});
       it != tracks_.end() && it->first.stream == stream; ++it) {
    if (it->second.segments.empty()) continue;
    if (!oldest || it->second.segments.begin()->first < oldest->segments.begin()->first) {
      oldest = &it->second;
      oldest_key = &it->first;
    }
  }
  if (!oldest) return std::nullopt;
  auto segment = oldest->segments.begin()->second;
  oldest->segments.erase(oldest->segments.begin());
  oldest->bytes -= segment.size;
  return std::make_pair(*oldest_key, segment);
}

uint64_t ArchiveIndex::StreamBytes(const std::string& stream) const {
  uint64_t total = 0;
  absl::MutexLock lock(&mu_);
  for (auto it = tracks_.lower_bound(TrackKey{stream, Proto::kTs, ""});
       it != tracks_.end() && it->first.stream == stream; ++it) {
    total += it->second.bytes;
  }
  return total;
}

size_t ArchiveIndex::SegmentCount() const {
  size_t n = 0;
  absl::MutexLock lock(&mu_);
  for (const auto& [key, t] : tracks_) n += t.segments.size();
  return n;
}

void ArchiveIndex::Forget(const std::string& stream) {
  absl::MutexLock lock(&mu_);
  for (auto it = tracks_.lower_bound(TrackKey{stream, Proto::kTs, ""});
       it != tracks_.end() && it->first.stream == stream;) {
    it = tracks_.erase(it);
  }
}

size_t Scan(const std::filesystem::path& root, const std::string& stream, ArchiveIndex& index) {
  namespace fs = std::filesystem;
  size_t found = 0;
  if (!SafeName(stream)) return 0;
  std::error_code ec;
  for (Proto proto : {Proto::kTs, Proto::kFmp4}) {
    fs::path proto_dir = root / stream / std::string(ProtoName(proto));
    for (const auto& rendition : fs::directory_iterator(proto_dir, ec)) {
      std::string name = rendition.path().filename().string();
      if (!SafeName(name) || !rendition.is_directory(ec)) continue;
      TrackKey track{stream, proto, name};
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
        index.Add(track, ArchivedSegment{parsed->first, parsed->second, size});
        ++found;
      }
    }
  }
  return found;
}

}  // namespace meshwork::streamer::archive
