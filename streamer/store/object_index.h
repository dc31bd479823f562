// The objects of one rendition by key (init, N.ts, N.m4s, N.P.m4s), in key order.
//
// A sorted vector rather than a tree: a publish copies the rendition it changes (copy-on-write,
// see OriginStore), and a rendition holds its whole retained window — 18 segments and their
// parts, ~100 objects — so copying a tree cost one allocation per object on every publish
// (the tree copy was 8 % of a 100-stream ingest's CPU, bench/packaging_scale). Copying this is
// one allocation, with room for the key the publish then adds. The order is the tree's (kind,
// then msn, then part), so a new N.ts moves the CMAF entries behind it and a new N.m4s the
// parts: a memmove of ~100 small entries, no allocation.
// Not thread-safe: owned by an immutable OriginRendition once shared.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "streamer/store/origin_rules.h"

namespace meshwork::streamer {

class ObjectIndex {
 public:
  using Entry = std::pair<ObjectKey, std::shared_ptr<const StoredObject>>;

  ObjectIndex() = default;
  // A copy is made to add to (a publish): room for one more entry from the start.
  ObjectIndex(const ObjectIndex& other) {
    entries_.reserve(other.entries_.size() + 1);
    entries_.assign(other.entries_.begin(), other.entries_.end());
  }
  ObjectIndex& operator=(const ObjectIndex& other) {
    if (this != &other) *this = ObjectIndex(other);
    return *this;
  }
  ObjectIndex(ObjectIndex&&) noexcept = default;
  ObjectIndex& operator=(ObjectIndex&&) noexcept = default;

  // The object under `key`, or null.
  const std::shared_ptr<const StoredObject>* Find(ObjectKey key) const {
    auto it = LowerBound(key);
    return it != entries_.end() && it->first == key ? &it->second : nullptr;
  }
  // The slot of `key`, added empty (null) when absent. Invalidated by the next Slot or EraseIf.
  std::shared_ptr<const StoredObject>& Slot(ObjectKey key) {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                               [](const Entry& e, const ObjectKey& k) { return e.first < k; });
    if (it == entries_.end() || it->first != key) it = entries_.insert(it, Entry{key, nullptr});
    return it->second;
  }
  // Removes every entry for which `drop(entry)` is true, keeping the others' order.
  template <typename Pred>
  void EraseIf(Pred drop) {
    entries_.erase(std::remove_if(entries_.begin(), entries_.end(), drop), entries_.end());
  }

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  std::vector<Entry>::const_iterator begin() const { return entries_.begin(); }
  std::vector<Entry>::const_iterator end() const { return entries_.end(); }

 private:
  std::vector<Entry>::const_iterator LowerBound(ObjectKey key) const {
    return std::lower_bound(entries_.begin(), entries_.end(), key,
                            [](const Entry& e, const ObjectKey& k) { return e.first < k; });
  }

  std::vector<Entry> entries_;
};

}  // namespace meshwork::streamer
