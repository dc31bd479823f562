#include "streamer/delivery/open_files.h"

#include <sys/stat.h>

namespace meshwork::streamer {

std::shared_ptr<const http::OpenFile> OpenFiles::Find(const std::string& path) {
  std::shared_ptr<const http::OpenFile> file;
  {
    absl::MutexLock lock(&mu_);
    auto it = files_.find(path);
    if (it == files_.end()) return nullptr;
    file = it->second.file;
    lru_.splice(lru_.begin(), lru_, it->second.lru);
  }
  // fstat on an open descriptor reads no disk: cheap enough for the event loop.
  struct stat st {};
  if (::fstat(file->fd(), &st) == 0 && st.st_nlink > 0) return file;
  absl::MutexLock lock(&mu_);
  if (auto it = files_.find(path); it != files_.end() && it->second.file == file) {
    lru_.erase(it->second.lru);
    files_.erase(it);
  }
  return nullptr;
}

void OpenFiles::Put(const std::string& path, std::shared_ptr<const http::OpenFile> file) {
  std::shared_ptr<const http::OpenFile> evicted;  // closed outside the lock
  absl::MutexLock lock(&mu_);
  if (capacity_ == 0) return;
  if (auto it = files_.find(path); it != files_.end()) {
    it->second.file = std::move(file);
    lru_.splice(lru_.begin(), lru_, it->second.lru);
    return;
  }
  if (files_.size() >= capacity_) {
    auto victim = files_.find(lru_.back());
    evicted = std::move(victim->second.file);
    files_.erase(victim);
    lru_.pop_back();
  }
  lru_.push_front(path);
  files_.emplace(path, Entry{std::move(file), lru_.begin()});
}

size_t OpenFiles::size() const {
  absl::MutexLock lock(&mu_);
  return files_.size();
}

}  // namespace meshwork::streamer
