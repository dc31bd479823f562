// The per-node state routing decisions read: written by the NodeRegistry as reports and
// sessions come and go, read lock-free by the Selector (C-7). One LiveNode per node id, for
// the life of the process, so a RoutingSnapshot can hold it across rebuilds.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace meshwork::central {

// Where a node's viewer listeners are (from its registration, C-1).
struct NodeEndpoints {
  uint32_t http_port = 0;
  uint32_t https_port = 0;    // 0: no https listener
  uint32_t public_port = 0;   // --public-port override, 0: none
  uint32_t publish_port = 0;  // the publish listener (S-23), 0: none
  // The host internode URLs use (--internal_address), empty: the node's hostname.
  std::string internal_host;
};

class LiveNode {
 public:
  static constexpr int64_t kAbsent = -1;

  // Online per C-4: a session attached and a report younger than `offline_after`.
  bool Online(std::chrono::steady_clock::time_point now,
              std::chrono::nanoseconds offline_after) const {
    if (sessions_.load(std::memory_order_acquire) <= 0) return false;
    int64_t at = report_at_ns_.load(std::memory_order_acquire);
    if (at == 0) return false;
    return now.time_since_epoch().count() - at < offline_after.count();
  }
  // Reported metrics; nullopt when the last report did not carry them (Z-17).
  std::optional<uint64_t> play_sessions() const { return Get(play_sessions_); }
  std::optional<uint64_t> out_kbit() const { return Get(out_kbit_); }
  // True when the last report says the node serves `stream` (working).
  bool Serves(std::string_view stream) const {
    auto list = working_.load(std::memory_order_acquire);
    return list && std::binary_search(list->begin(), list->end(), stream);
  }
  std::shared_ptr<const std::vector<std::string>> working_streams() const {
    return working_.load(std::memory_order_acquire);
  }
  std::shared_ptr<const NodeEndpoints> endpoints() const {
    return endpoints_.load(std::memory_order_acquire);
  }

  // Writers (NodeRegistry).
  void SetReport(std::chrono::steady_clock::time_point at, std::optional<uint64_t> play_sessions,
                 std::optional<uint64_t> out_kbit, std::vector<std::string> working_sorted) {
    play_sessions_.store(play_sessions ? static_cast<int64_t>(*play_sessions) : kAbsent);
    out_kbit_.store(out_kbit ? static_cast<int64_t>(*out_kbit) : kAbsent);
    working_.store(std::make_shared<const std::vector<std::string>>(std::move(working_sorted)));
    report_at_ns_.store(at.time_since_epoch().count(), std::memory_order_release);
  }
  void AddSession() { sessions_.fetch_add(1); }
  void RemoveSession() { sessions_.fetch_sub(1); }
  void SetEndpoints(NodeEndpoints e) {
    endpoints_.store(std::make_shared<const NodeEndpoints>(e), std::memory_order_release);
  }

 private:
  static std::optional<uint64_t> Get(const std::atomic<int64_t>& v) {
    int64_t x = v.load(std::memory_order_acquire);
    if (x < 0) return std::nullopt;
    return static_cast<uint64_t>(x);
  }
  std::atomic<int> sessions_{0};
  std::atomic<int64_t> report_at_ns_{0};
  std::atomic<int64_t> play_sessions_{kAbsent};
  std::atomic<int64_t> out_kbit_{kAbsent};
  std::atomic<std::shared_ptr<const std::vector<std::string>>> working_;
  std::atomic<std::shared_ptr<const NodeEndpoints>> endpoints_{
      std::make_shared<const NodeEndpoints>()};
};

}  // namespace meshwork::central
