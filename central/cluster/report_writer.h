// ReportWriter: writes nodes' latest reports to the store on a thread of its own, so that the
// gRPC reactor thread that receives a report never waits for RocksDB or etcd.
//
// Put() only replaces the node's pending value under a short lock and wakes the writer: at
// most one pending value per node (the newest wins, an older one not yet written is dropped),
// so memory is bounded by the number of nodes. The writer thread takes the whole pending set
// and writes it outside the lock, in node-id order. The destructor writes what is still
// pending, then joins. Thread-safe; `store` must outlive the writer.
#pragma once

#include <map>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "central/store/store.h"

namespace meshwork::central {

class ReportWriter {
 public:
  explicit ReportWriter(Store* store);
  ReportWriter(const ReportWriter&) = delete;
  ReportWriter& operator=(const ReportWriter&) = delete;
  ~ReportWriter();

  // Queues `value` as `node_id`'s latest report; never blocks on I/O.
  void Put(const std::string& node_id, std::string value);
  // Blocks until everything queued before the call is written (tests, shutdown).
  void Flush();

 private:
  void Run();

  Store* const store_;
  absl::Mutex mu_;
  std::map<std::string, std::string> pending_ ABSL_GUARDED_BY(mu_);
  uint64_t queued_ ABSL_GUARDED_BY(mu_) = 0;   // Put() calls so far
  uint64_t written_ ABSL_GUARDED_BY(mu_) = 0;  // of those, taken and written
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: started after the members above exist
};

}  // namespace meshwork::central
