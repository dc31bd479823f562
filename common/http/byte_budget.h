// A cap on the bytes a listener holds for request bodies that have not finished arriving
// stalled uploads must not grow memory without bound). The server reserves a buffered
// body's length before reading it; a streaming handler that keeps what it reads (an object
// upload) reserves as it goes. Beyond the cap the request is answered 503 with Retry-After
// at once: never an unbounded wait.
//
// Thread-safe: one atomic counter; the optional gauge mirrors it.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "prometheus/counter.h"
#include "prometheus/gauge.h"

namespace meshwork::http {

class ByteBudget {
 public:
  explicit ByteBudget(uint64_t limit, prometheus::Gauge* held = nullptr,
                      prometheus::Counter* refusals = nullptr)
      : limit_(limit), held_gauge_(held), refusals_(refusals) {}
  ByteBudget(const ByteBudget&) = delete;
  ByteBudget& operator=(const ByteBudget&) = delete;

  // Takes `n` bytes if they fit under the limit; false (and counted as a refusal) otherwise.
  bool TryReserve(uint64_t n) {
    uint64_t current = used_.load(std::memory_order_relaxed);
    do {
      if (n > limit_ || current > limit_ - n) {
        if (refusals_) refusals_->Increment();
        return false;
      }
    } while (!used_.compare_exchange_weak(current, current + n, std::memory_order_relaxed));
    if (held_gauge_) held_gauge_->Increment(static_cast<double>(n));
    return true;
  }
  void Release(uint64_t n) {
    used_.fetch_sub(n, std::memory_order_relaxed);
    if (held_gauge_) held_gauge_->Decrement(static_cast<double>(n));
  }

  uint64_t used() const { return used_.load(std::memory_order_relaxed); }
  uint64_t limit() const { return limit_; }

 private:
  const uint64_t limit_;
  std::atomic<uint64_t> used_{0};
  prometheus::Gauge* held_gauge_;
  prometheus::Counter* refusals_;
};

// Bytes held against a budget by one request; given back when released or destroyed.
// Not thread-safe: owned by one request at a time. Move-only.
class BudgetHold {
 public:
  BudgetHold() = default;
  explicit BudgetHold(ByteBudget* budget) : budget_(budget) {}
  BudgetHold(BudgetHold&& other) noexcept { *this = std::move(other); }
  BudgetHold& operator=(BudgetHold&& other) noexcept {
    if (this != &other) {
      Release();
      budget_ = other.budget_;
      bytes_ = other.bytes_;
      other.bytes_ = 0;
    }
    return *this;
  }
  ~BudgetHold() { Release(); }

  // Holds `n` more bytes; false when the budget refuses (nothing more is held then). A hold
  // without a budget always succeeds.
  bool Grow(uint64_t n) {
    if (!budget_) return true;
    if (!budget_->TryReserve(n)) return false;
    bytes_ += n;
    return true;
  }
  void Release() {
    if (budget_ && bytes_ > 0) budget_->Release(bytes_);
    bytes_ = 0;
  }
  // Gives back `n` of the bytes held (at most all of them).
  void Shrink(uint64_t n) {
    n = std::min(n, bytes_);
    if (budget_ && n > 0) budget_->Release(n);
    bytes_ -= n;
  }
  uint64_t bytes() const { return bytes_; }

 private:
  ByteBudget* budget_ = nullptr;
  uint64_t bytes_ = 0;
};

}  // namespace meshwork::http
