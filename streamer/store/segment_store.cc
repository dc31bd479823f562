#include "streamer/store/segment_store.h"

#include <algorithm>
#include <optional>

namespace meshwork::streamer {

const Segment* RenditionWindow::Find(int64_t msn) const {
  if (segments.empty() || msn < segments.front()->msn || msn > segments.back()->msn) {
    return nullptr;
  }
  // msn increases but may skip (a GOP longer than the segment duration): binary search.
  auto it = std::lower_bound(segments.begin(), segments.end(), msn,
                             [](const auto& s, int64_t m) { return s->msn < m; });
  return it != segments.end() && (*it)->msn == msn ? it->get() : nullptr;
}

const Part* RenditionWindow::FindPart(int64_t msn, int part) const {
  if (msn == open_msn) {
    return part >= 0 && part < static_cast<int>(open_parts.size()) ? open_parts[part].get()
                                                                   : nullptr;
  }
  const Segment* s = Find(msn);
  if (!s || part < 0 || part >= static_cast<int>(s->parts.size())) return nullptr;
  return s->parts[part].get();
}

namespace {

uint64_t SegmentBytes(const Segment& s) {
  uint64_t n = (s.ts ? s.ts->size() : 0) + (s.m4s ? s.m4s->size() : 0);
  for (const auto& p : s.parts) n += p->data ? p->data->size() : 0;
  return n;
}

std::string WaiterKey(const std::string& stream, const std::string& rendition) {
  return stream + "\n" + rendition;
}

// The newest published position: the open segment's last part, else the last complete
// segment (as LastPosition in streamer/delivery/ll_hls.cc).
std::optional<Position> NewestPosition(const RenditionWindow& w) {
  if (w.open_msn >= 0 && !w.open_parts.empty()) {
    return Position{w.open_msn, static_cast<int>(w.open_parts.size()) - 1};
  }
  if (!w.segments.empty()) return Position{w.segments.back()->msn, -1};
  return std::nullopt;
}

uint64_t Bitrate(const Segment& s) {
  // The MPEG-TS form where there is one (HLS-TS variants), else the CMAF segment ("a1").
  const auto& body = s.ts ? s.ts : s.m4s;
  if (s.duration <= 0 || !body) return 0;
  return static_cast<uint64_t>(static_cast<double>(body->size()) * 8 * 90000 /
                               static_cast<double>(s.duration));
}

}  // namespace

void SegmentStore::Publish(const std::string& stream, const RenditionInfo& info,
                           std::shared_ptr<const Segment> segment, int64_t now_unix_ms) {
  absl::ReleasableMutexLock lock(&mu_);
  auto& slot = streams_[stream][info.name];
  if (!slot) slot = std::make_shared<Slot>();
  auto next = std::make_shared<RenditionWindow>(*slot->Get());
  next->info = info;
  if (!next->segments.empty() && segment->msn <= next->segments.back()->msn) {
    // A replacement of an msn already held (retry): drop the old one and what follows.
    while (!next->segments.empty() && next->segments.back()->msn >= segment->msn) {
      next->bytes -= SegmentBytes(*next->segments.back());
      bytes_ -= SegmentBytes(*next->segments.back());
      next->segments.pop_back();
    }
  }
  uint64_t size = SegmentBytes(*segment);
  if (next->open_msn == segment->msn) {
    next->open_msn = -1;
    next->open_parts.clear();
  }
  next->segments.push_back(std::move(segment));
  next->bytes += size;
  bytes_ += size;
  while (next->segments.size() > options_.retain_segments) {
    uint64_t old = SegmentBytes(*next->segments.front());
    next->bytes -= old;
    bytes_ -= old;
    if (next->segments.front()->discontinuity) ++next->dropped_discontinuities;
    next->segments.pop_front();
  }
  next->peak_bitrate_bps = 0;
  for (const auto& s : next->segments) {
    next->peak_bitrate_bps = std::max(next->peak_bitrate_bps, Bitrate(*s));
  }
  next->last_publish_unix_ms = now_unix_ms;
  Position published{next->segments.back()->msn, -1};
  slot->Set(std::move(next));
  EnforceBytesLocked();
  lock.Release();  // waiters are released outside the store's mutex
  waiters_.Publish(WaiterKey(stream, info.name), published);
}

absl::Status SegmentStore::Wait(const std::string& stream, const std::string& rendition,
                                Position position, boost::asio::any_io_executor executor,
                                Waiters::TimePoint deadline, Waiters::Callback callback) {
  std::string key = WaiterKey(stream, rendition);
  auto status = waiters_.Wait(key, position, executor, deadline, std::move(callback));
  if (!status.ok()) return status;
  // Published between the caller's look and the registration: release now. The newest
  // position counts the open segment's parts (S-13: a part published just before).
  if (auto window = Window(stream, rendition)) {
    if (auto newest = NewestPosition(*window)) waiters_.Publish(key, *newest);
  }
  return absl::OkStatus();
}

void SegmentStore::PublishPart(const std::string& stream, const RenditionInfo& info, int64_t msn,
                               int64_t segment_start, std::shared_ptr<const Part> part,
                               int64_t now_unix_ms) {
  Position published{msn, part->index};
  {
    absl::MutexLock lock(&mu_);
    auto& slot = streams_[stream][info.name];
    if (!slot) slot = std::make_shared<Slot>();
    auto next = std::make_shared<RenditionWindow>(*slot->Get());
    next->info = info;
    if (next->open_msn != msn) {
      next->open_msn = msn;
      next->open_start = segment_start;
      next->open_parts.clear();
    }
    next->open_parts.push_back(std::move(part));
    next->last_publish_unix_ms = now_unix_ms;
    slot->Set(std::move(next));
  }
  waiters_.Publish(WaiterKey(stream, info.name), published);
}

void SegmentStore::EnforceBytesLocked() {
  while (bytes_ > options_.max_bytes) {
    // Trim the oldest segment of the largest rendition, keeping at least its live edge.
    std::shared_ptr<Slot> largest;
    uint64_t most = 0;
    for (auto& [name, renditions] : streams_) {
      for (auto& [r, slot] : renditions) {
        auto w = slot->Get();
        if (w->segments.size() > 1 && w->bytes > most) {
          most = w->bytes;
          largest = slot;
        }
      }
    }
    if (!largest) return;
    auto next = std::make_shared<RenditionWindow>(*largest->Get());
    uint64_t old = SegmentBytes(*next->segments.front());
    if (next->segments.front()->discontinuity) ++next->dropped_discontinuities;
    next->segments.pop_front();
    next->bytes -= old;
    bytes_ -= old;
    largest->Set(std::move(next));
  }
}

std::shared_ptr<const RenditionWindow> SegmentStore::Window(const std::string& stream,
                                                            const std::string& rendition) const {
  std::shared_ptr<Slot> slot;
  {
    absl::ReaderMutexLock lock(&mu_);
    auto s = streams_.find(stream);
    if (s == streams_.end()) return nullptr;
    auto r = s->second.find(rendition);
    if (r == s->second.end()) return nullptr;
    slot = r->second;
  }
  return slot->Get();
}

std::vector<std::shared_ptr<const RenditionWindow>> SegmentStore::Renditions(
    const std::string& stream) const {
  std::vector<std::shared_ptr<const RenditionWindow>> out;
  absl::ReaderMutexLock lock(&mu_);
  auto s = streams_.find(stream);
  if (s == streams_.end()) return out;
  for (const auto& [name, slot] : s->second) out.push_back(slot->Get());
  return out;
}

std::vector<std::string> SegmentStore::Streams() const {
  std::vector<std::string> out;
  absl::ReaderMutexLock lock(&mu_);
  for (const auto& [name, r] : streams_) out.push_back(name);
  return out;
}

void SegmentStore::Remove(const std::string& stream) {
  std::vector<std::string> keys;
  absl::ReleasableMutexLock lock(&mu_);
  auto s = streams_.find(stream);
  if (s == streams_.end()) return;
  for (auto& [r, slot] : s->second) {
    bytes_ -= slot->Get()->bytes;
    keys.push_back(WaiterKey(stream, r));
  }
  streams_.erase(s);
  lock.Release();  // waiters are released outside the store's mutex
  for (const auto& key : keys) waiters_.Remove(key);
}

uint64_t SegmentStore::bytes() const {
  absl::ReaderMutexLock lock(&mu_);
  return bytes_;
}

}  // namespace meshwork::streamer
