#include "streamer/store/waiters.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "boost/asio/post.hpp"
#include "boost/asio/steady_timer.hpp"

namespace meshwork::streamer {

struct Waiters::Waiter {
  std::string key;
  Position position;
  boost::asio::any_io_executor executor;
  Callback callback;
  std::unique_ptr<boost::asio::steady_timer> timer;
  std::atomic<bool> done{false};
};

Waiters::~Waiters() {
  std::map<std::string, std::vector<std::shared_ptr<Waiter>>> all;
  {
    absl::MutexLock lock(&mu_);
    all.swap(by_key_);
  }
  for (auto& [key, list] : all) {
    for (auto& w : list) Complete(w, Outcome::kRemoved);
  }
}

absl::Status Waiters::Wait(const std::string& key, Position position,
                           boost::asio::any_io_executor executor,
                           std::chrono::steady_clock::time_point deadline, Callback callback) {
  if (count_.fetch_add(1) >= max_waiters_) {
    count_.fetch_sub(1);
    return absl::ResourceExhaustedError(
        absl::StrCat("this node already holds ", max_waiters_, " waiting requests"));
  }
  auto waiter = std::make_shared<Waiter>();
  waiter->key = key;
  waiter->position = position;
  waiter->executor = executor;
  waiter->callback = std::move(callback);
  waiter->timer = std::make_unique<boost::asio::steady_timer>(executor, deadline);
  {
    absl::MutexLock lock(&mu_);
    by_key_[key].push_back(waiter);
  }
  std::weak_ptr<Waiter> weak = waiter;
  waiter->timer->async_wait([this, weak](const boost::system::error_code& ec) {
    auto w = weak.lock();
    if (!w || ec) return;  // cancelled: completed by a publish
    {
      absl::MutexLock lock(&mu_);
      auto it = by_key_.find(w->key);
      if (it != by_key_.end()) {
        auto& list = it->second;
        list.erase(std::remove(list.begin(), list.end(), w), list.end());
        if (list.empty()) by_key_.erase(it);
      }
    }
    Complete(w, Outcome::kDeadline);
  });
  return absl::OkStatus();
}

void Waiters::Complete(const std::shared_ptr<Waiter>& waiter, Outcome outcome) {
  if (waiter->done.exchange(true)) return;
  count_.fetch_sub(1);
  // Runs on the waiter's own executor, where its timer also lives.
  boost::asio::post(waiter->executor, [waiter, outcome] {
    waiter->timer->cancel();
    auto callback = std::move(waiter->callback);
    callback(outcome);
  });
}

void Waiters::Publish(const std::string& key, Position published) {
  std::vector<std::shared_ptr<Waiter>> ready;
  {
    absl::MutexLock lock(&mu_);
    auto it = by_key_.find(key);
    if (it == by_key_.end()) return;
    auto& list = it->second;
    auto split = std::stable_partition(
        list.begin(), list.end(), [&](const auto& w) { return !w->position.ReachedBy(published); });
    ready.assign(split, list.end());
    list.erase(split, list.end());
    if (list.empty()) by_key_.erase(it);
  }
  for (auto& w : ready) Complete(w, Outcome::kPublished);
}

void Waiters::Remove(const std::string& key) {
  std::vector<std::shared_ptr<Waiter>> gone;
  {
    absl::MutexLock lock(&mu_);
    auto it = by_key_.find(key);
    if (it == by_key_.end()) return;
    gone.swap(it->second);
    by_key_.erase(it);
  }
  for (auto& w : gone) Complete(w, Outcome::kRemoved);
}

void Waiters::RemovePrefix(const std::string& prefix) {
  std::vector<std::shared_ptr<Waiter>> gone;
  {
    absl::MutexLock lock(&mu_);
    auto it = by_key_.lower_bound(prefix);
    while (it != by_key_.end() && it->first.compare(0, prefix.size(), prefix) == 0) {
      gone.insert(gone.end(), it->second.begin(), it->second.end());
      it = by_key_.erase(it);
    }
  }
  for (auto& w : gone) Complete(w, Outcome::kRemoved);
}

}  // namespace meshwork::streamer
