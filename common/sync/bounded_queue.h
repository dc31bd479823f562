// A FIFO bounded by how many items it holds and by the bytes they stand for (given with each
// item when it is pushed, so popping never recomputes them). It decides nothing on its own:
// Fits() says whether one more item is within both bounds, and the owner applies its policy
// to one that is not — refuse it (the DVR recorder), drop the oldest until it fits (the
// publish feed), or end the session that stopped reading (central's config stream).
//
// Not synchronized: the owner's lock guards it, as it guards the rest of the owner's state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <utility>

#include "common/log/check.h"

namespace meshwork {

template <typename T>
class BoundedQueue {
 public:
  BoundedQueue(size_t max_items, uint64_t max_bytes)
      : max_items_(max_items), max_bytes_(max_bytes) {}

  // Whether an item of `bytes` would be within both bounds beside what is queued.
  bool Fits(uint64_t bytes) const {
    return items_.size() < max_items_ && bytes <= max_bytes_ && bytes_ <= max_bytes_ - bytes;
  }
  // Queues an item whether or not it Fits(): the owner has decided.
  void Push(T item, uint64_t bytes) {
    bytes_ += bytes;
    items_.push_back(Entry{std::move(item), bytes});
  }
  T& front() {
    MESHWORK_CHECK(!items_.empty(), "BoundedQueue: no front item");
    return items_.front().item;
  }
  const T& front() const {
    MESHWORK_CHECK(!items_.empty(), "BoundedQueue: no front item");
    return items_.front().item;
  }
  // Removes the front item and returns it.
  T Pop() {
    MESHWORK_CHECK(!items_.empty(), "BoundedQueue: no front item");
    Entry entry = std::move(items_.front());
    items_.pop_front();
    bytes_ -= entry.bytes;
    return std::move(entry.item);
  }

  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  uint64_t bytes() const { return bytes_; }
  size_t max_items() const { return max_items_; }
  uint64_t max_bytes() const { return max_bytes_; }

 private:
  struct Entry {
    T item;
    uint64_t bytes;
  };
  const size_t max_items_;
  const uint64_t max_bytes_;
  std::deque<Entry> items_;
  uint64_t bytes_ = 0;
};

}  // namespace meshwork
