// D-3: archived files kept open between requests, so a segment many viewers ask for is sent
// straight from the event loop (no trip to the disk pool for open/fstat once it is open).
// Archived files never change once renamed into place. A file that retention deleted is
// found out on the next hit (fstat: no links left) and dropped; one that is not asked for
// again keeps its disk space until it leaves the cache, so the cache is small (`capacity`
// files, least recently used out first). Thread-safe: one mutex, held for map work only.
#pragma once

#include <list>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/http/types.h"

namespace meshwork::streamer {

class OpenFiles {
 public:
  explicit OpenFiles(size_t capacity = 256) : capacity_(capacity) {}

  // The open file at `path`, or null (never opened here, evicted, or deleted since).
  std::shared_ptr<const http::OpenFile> Find(const std::string& path);
  void Put(const std::string& path, std::shared_ptr<const http::OpenFile> file);
  size_t size() const;

 private:
  struct Entry {
    std::shared_ptr<const http::OpenFile> file;
    std::list<std::string>::iterator lru;
  };
  const size_t capacity_;
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> files_ ABSL_GUARDED_BY(mu_);
  std::list<std::string> lru_ ABSL_GUARDED_BY(mu_);  // most recent first
};

}  // namespace meshwork::streamer
