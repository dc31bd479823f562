#include "streamer/store/in_flight.h"

#include <utility>

#include "boost/asio/post.hpp"
#include "streamer/store/origin_store.h"

namespace meshwork::streamer {

void GrowingObject::Append(std::string_view piece) {
  if (piece.empty()) return;
  bool over = false;
  {
    absl::MutexLock lock(&mu_);
    over = state_ == State::kArriving && bytes_ + piece.size() > max_bytes_;
  }
  if (over) return Fail();
  Change(State::kArriving, std::make_shared<const std::string>(piece));
}

void GrowingObject::Complete() { Change(State::kComplete, nullptr); }

void GrowingObject::Fail() { Change(State::kFailed, nullptr); }

void GrowingObject::Change(State state, Chunk chunk) {
  std::vector<Wake> wakes;
  {
    absl::MutexLock lock(&mu_);
    if (state_ != State::kArriving) return;  // ended already: later calls change nothing
    if (chunk) {
      bytes_ += chunk->size();
      chunks_.push_back(std::move(chunk));
    }
    state_ = state;
    wakes.swap(wakes_);
  }
  for (auto& w : wakes) boost::asio::post(w.executor, std::move(w.fn));
}

GrowingObject::Read GrowingObject::ReadFrom(size_t from,
                                            const boost::asio::any_io_executor& executor,
                                            std::function<void()> wake) {
  Read read;
  absl::MutexLock lock(&mu_);
  read.state = state_;
  if (from < chunks_.size()) {
    read.chunks.assign(chunks_.begin() + static_cast<std::ptrdiff_t>(from), chunks_.end());
    return read;
  }
  if (state_ == State::kArriving && wakes_.size() < max_readers_) {
    wakes_.push_back(Wake{executor, std::move(wake)});
    read.waiting = true;
  }
  return read;
}

void GrowingObject::SetTiming(std::string field) {
  absl::MutexLock lock(&mu_);
  timing_ = std::move(field);
}

std::string GrowingObject::timing() const {
  absl::MutexLock lock(&mu_);
  return timing_;
}

uint64_t GrowingObject::bytes() const {
  absl::MutexLock lock(&mu_);
  return bytes_;
}

GrowingObject::State GrowingObject::state() const {
  absl::MutexLock lock(&mu_);
  return state_;
}

std::shared_ptr<GrowingObject> InFlightObjects::Begin(const std::string& stream,
                                                      const std::string& rendition, ObjectKey key) {
  auto object = std::make_shared<GrowingObject>(options_.max_bytes, options_.max_readers);
  absl::MutexLock lock(&mu_);
  if (objects_.size() >= options_.max_objects) return nullptr;
  auto [it, added] = objects_.emplace(ObjectWaiterKey(stream, rendition, key), object);
  if (!added) return nullptr;
  count_.store(objects_.size(), std::memory_order_relaxed);
  return object;
}

void InFlightObjects::End(const std::string& stream, const std::string& rendition, ObjectKey key,
                          const std::shared_ptr<GrowingObject>& object) {
  std::shared_ptr<GrowingObject> removed;  // let go outside the lock
  absl::MutexLock lock(&mu_);
  auto it = objects_.find(ObjectWaiterKey(stream, rendition, key));
  if (it == objects_.end() || it->second != object) return;
  removed = std::move(it->second);
  objects_.erase(it);
  count_.store(objects_.size(), std::memory_order_relaxed);
}

std::shared_ptr<GrowingObject> InFlightObjects::Find(const std::string& stream,
                                                     const std::string& rendition,
                                                     ObjectKey key) const {
  if (count_.load(std::memory_order_relaxed) == 0) return nullptr;
  absl::MutexLock lock(&mu_);
  auto it = objects_.find(ObjectWaiterKey(stream, rendition, key));
  return it == objects_.end() ? nullptr : it->second;
}

}  // namespace meshwork::streamer
