#include "streamer/store/rendition_window.h"

#include <algorithm>

namespace meshwork::streamer {

std::shared_ptr<const RenditionWindow::Rendered> RenditionWindow::RenderCache::Find(
    const std::string& key) const {
  absl::MutexLock lock(&mu);
  auto it = entries.find(key);
  return it == entries.end() ? nullptr : it->second;
}

std::shared_ptr<const RenditionWindow::Rendered> RenditionWindow::RenderCache::Keep(
    const std::string& key, std::shared_ptr<const Rendered> rendered) const {
  absl::MutexLock lock(&mu);
  return entries.emplace(key, std::move(rendered)).first->second;
}

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
  const std::vector<std::shared_ptr<const Part>>* parts = nullptr;
  if (msn == open_msn) {
    parts = &open_parts;
  } else if (const Segment* s = Find(msn)) {
    parts = &s->parts;
  }
  if (!parts || part < 0) return nullptr;
  for (const auto& p : *parts) {
    if (p->index == part) return p.get();
  }
  return nullptr;
}

std::optional<Position> RenditionWindow::Last() const {
  if (open_msn >= 0 && !open_parts.empty()) {
    return Position{open_msn, open_parts.back()->index};
  }
  if (!segments.empty()) return Position{segments.back()->msn, -1};
  return std::nullopt;
}

}  // namespace meshwork::streamer
