#include "streamer/store/waiters.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "boost/asio/post.hpp"
#include "boost/asio/steady_timer.hpp"

namespace meshwork::streamer {

namespace {

struct Node;

// An intrusive doubly linked list of nodes through one of their Link members.
struct Link {
  Node* prev = nullptr;
  Node* next = nullptr;
};
struct List {
  Node* head = nullptr;
  Node* tail = nullptr;
  bool empty() const { return head == nullptr; }
};

// Positions ordered so that `published` reaches exactly the positions ≤ it (Position::
// ReachedBy): by msn, then part, a whole segment (part −1) after all of its parts.
using Order = std::pair<int64_t, int64_t>;
Order OrderOf(Position p) {
  return {p.msn, p.part < 0 ? std::numeric_limits<int64_t>::max() : int64_t{p.part}};
}

using BucketMap = std::map<Order, List>;                       // position → its waiters
using KeyMap = std::map<std::string, BucketMap, std::less<>>;  // key → positions

struct Node {
  Link in_bucket;  // the waiters of one (key, position)
  Link in_slot;    // the waiters of one wheel slot
  KeyMap::iterator key;
  BucketMap::iterator bucket;
  size_t slot = 0;
  Waiters::TimePoint deadline;
  boost::asio::any_io_executor executor;
  Waiters::Callback callback;
};

template <Link Node::*L>
void PushBack(List& list, Node* n) {
  (n->*L).prev = list.tail;
  (n->*L).next = nullptr;
  if (list.tail) {
    (list.tail->*L).next = n;
  } else {
    list.head = n;
  }
  list.tail = n;
}

template <Link Node::*L>
void Unlink(List& list, Node* n) {
  Link& link = n->*L;
  if (link.prev) {
    (link.prev->*L).next = link.next;
  } else {
    list.head = link.next;
  }
  if (link.next) {
    (link.next->*L).prev = link.prev;
  } else {
    list.tail = link.prev;
  }
  link = Link{};
}

// A completion to post: the callback moved out of its (deleted) node.
struct Release {
  boost::asio::any_io_executor executor;
  Waiters::Callback callback;
  Waiters::Outcome outcome;
};

// At most this many completions run per handler: one release runs in slices, each handler
// posting the rest, so that between two slices the executor's reactor gets its turn. A thousand
// held reloads released at once would otherwise all be answered before the worker reads anything
// else — the part each released viewer asks for next included (P-13).
constexpr size_t kReleaseSlice = 16;

// The completions of one release on one executor, run in order.
struct Batch {
  boost::asio::any_io_executor executor;
  std::vector<std::pair<Waiters::Callback, Waiters::Outcome>> calls;
  size_t next = 0;  // the first call not yet run
};

void RunSlice(std::unique_ptr<Batch> batch) {
  const size_t end = std::min(batch->calls.size(), batch->next + kReleaseSlice);
  for (; batch->next < end; ++batch->next) {
    auto& [callback, outcome] = batch->calls[batch->next];
    auto run = std::move(callback);
    run(outcome);
  }
  if (batch->next == batch->calls.size()) return;
  auto executor = batch->executor;
  boost::asio::post(executor, [batch = std::move(batch)]() mutable { RunSlice(std::move(batch)); });
}

// Posts the completions, one handler chain per distinct executor (in order within each).
// Called with no lock held.
void Dispatch(std::vector<Release> releases) {
  if (releases.size() == 1) {
    auto& r = releases.front();
    boost::asio::post(
        r.executor, [callback = std::move(r.callback), outcome = r.outcome] { callback(outcome); });
    return;
  }
  std::vector<std::unique_ptr<Batch>> batches;  // few: one per connection worker
  for (auto& r : releases) {
    auto b = std::find_if(batches.begin(), batches.end(),
                          [&](const auto& x) { return x->executor == r.executor; });
    if (b == batches.end()) {
      batches.push_back(std::make_unique<Batch>());
      batches.back()->executor = r.executor;
      batches.back()->calls.reserve(releases.size());
      b = batches.end() - 1;
    }
    (*b)->calls.emplace_back(std::move(r.callback), r.outcome);
  }
  for (auto& b : batches) {
    auto executor = b->executor;
    boost::asio::post(executor, [batch = std::move(b)]() mutable { RunSlice(std::move(batch)); });
  }
}

constexpr size_t kSlots = 1024;

}  // namespace

// Everything behind the public methods; the sweeper holds it weakly.
struct Waiters::State {
  explicit State(Options o)
      : options(o),
        epoch(o.clock->Monotonic()),
        tick(std::max<Clock::Duration>(o.tick, std::chrono::milliseconds(1))) {}
  // Ticks are counted from `epoch`: tick k ends at epoch + k × tick.
  int64_t CeilTick(TimePoint t) const {
    auto d = t - epoch;
    if (d <= Clock::Duration::zero()) return 0;
    return (d + tick - Clock::Duration(1)) / tick;
  }
  int64_t FloorTick(TimePoint t) const {
    auto d = t - epoch;
    return d < Clock::Duration::zero() ? -1 : d / tick;
  }

  // Unlinks `n` from its wheel slot and moves its completion into `out`; the bucket lists are
  // the caller's business.
  void TakeLocked(Node* n, Outcome outcome, std::vector<Release>& out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    Unlink<&Node::in_slot>(slots[n->slot], n);
    out.push_back(Release{std::move(n->executor), std::move(n->callback), outcome});
    delete n;
    count.fetch_sub(1, std::memory_order_relaxed);
  }

  // Releases every waiter of the key with `outcome`; the key's entry is erased.
  void TakeKeyLocked(KeyMap::iterator key, Outcome outcome, std::vector<Release>& out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    for (auto& [order, list] : key->second) {
      while (Node* n = list.head) {
        Unlink<&Node::in_bucket>(list, n);
        TakeLocked(n, outcome, out);
      }
    }
    by_key.erase(key);
  }

  // Releases one waiter wherever it is (deadline).
  void TakeOneLocked(Node* n, Outcome outcome, std::vector<Release>& out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    auto key = n->key;
    auto bucket = n->bucket;
    Unlink<&Node::in_bucket>(bucket->second, n);
    TakeLocked(n, outcome, out);
    if (bucket->second.empty()) key->second.erase(bucket);
    if (key->second.empty()) by_key.erase(key);
  }

  std::vector<Release> ExpireLocked(TimePoint now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::vector<Release> out;
    int64_t last = FloorTick(now);
    if (last < next_tick) return out;
    // A whole lap visits every slot; more would only visit them again.
    int64_t first = std::max(next_tick, last - static_cast<int64_t>(kSlots) + 1);
    for (int64_t k = first; k <= last; ++k) {
      List& slot = slots[static_cast<size_t>(k) % kSlots];
      for (Node* n = slot.head; n != nullptr;) {
        Node* next = n->in_slot.next;
        checks.fetch_add(1, std::memory_order_relaxed);
        if (n->deadline <= now) TakeOneLocked(n, Outcome::kDeadline, out);
        n = next;
      }
    }
    next_tick = last + 1;
    return out;
  }

  // Every waiter, with kRemoved (destruction).
  void Clear() {
    std::vector<Release> out;
    {
      absl::MutexLock lock(&mu);
      stopped = true;
      while (!by_key.empty()) TakeKeyLocked(by_key.begin(), Outcome::kRemoved, out);
    }
    Dispatch(std::move(out));
  }

  const Options options;
  const TimePoint epoch;
  const Clock::Duration tick;
  std::atomic<size_t> count{0};
  std::atomic<uint64_t> checks{0};

  absl::Mutex mu;
  KeyMap by_key ABSL_GUARDED_BY(mu);
  std::vector<List> slots ABSL_GUARDED_BY(mu) = std::vector<List>(kSlots);
  int64_t next_tick ABSL_GUARDED_BY(mu) = 0;  // the first tick not yet swept
  bool stopped ABSL_GUARDED_BY(mu) = false;
  // The sweeper: whether one is running, and which (a stale one must not clear the flag).
  bool sweeping ABSL_GUARDED_BY(mu) = false;
  uint64_t sweep_generation ABSL_GUARDED_BY(mu) = 0;
};

// One sweeper run: a timer on one executor, re-armed every tick while waiters are held. It
// holds the state weakly; when it ends (nothing left to sweep, the Waiters gone, or its
// handlers destroyed with a stopped io_context) the next Wait may start another.
class Waiters::Sweeper : public std::enable_shared_from_this<Sweeper> {
 public:
  Sweeper(std::weak_ptr<Waiters::State> state, uint64_t generation,
          boost::asio::any_io_executor executor, Clock::Duration tick)
      : state_(std::move(state)), generation_(generation), timer_(executor), tick_(tick) {}
  ~Sweeper();

  void Arm() {
    timer_.expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(tick_));
    timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (!ec) self->Tick();
    });
  }

 private:
  void Tick();

  std::weak_ptr<Waiters::State> state_;
  const uint64_t generation_;
  boost::asio::steady_timer timer_;  // touched only by this run's handlers, on its executor
  const Clock::Duration tick_;
};

void Waiters::Sweeper::Tick() {
  auto state = state_.lock();
  if (!state) return;
  std::vector<Release> out;
  bool again;
  {
    absl::MutexLock lock(&state->mu);
    if (state->stopped || state->sweep_generation != generation_) return;
    out = state->ExpireLocked(state->options.clock->Monotonic());
    again = state->count.load(std::memory_order_relaxed) > 0;
    if (!again) state->sweeping = false;
  }
  Dispatch(std::move(out));
  if (again) Arm();
}

Waiters::Sweeper::~Sweeper() {
  // Ended without clearing the flag (its handlers were destroyed unrun): let the next Wait
  // start a new sweeper.
  if (auto state = state_.lock()) {
    absl::MutexLock lock(&state->mu);
    if (state->sweep_generation == generation_) state->sweeping = false;
  }
}

Waiters::Waiters(size_t max_waiters) : Waiters(Options{.max_waiters = max_waiters}) {}

Waiters::Waiters(Options options) : state_(std::make_shared<State>(options)) {}

Waiters::~Waiters() { state_->Clear(); }

absl::Status Waiters::Wait(const std::string& key, Position position,
                           boost::asio::any_io_executor executor, TimePoint deadline,
                           Callback callback) {
  State& s = *state_;
  std::shared_ptr<Sweeper> sweeper;
  {
    absl::MutexLock lock(&s.mu);
    if (s.count.load(std::memory_order_relaxed) >= s.options.max_waiters) {
      return absl::ResourceExhaustedError(
          absl::StrCat("this node already holds ", s.options.max_waiters, " waiting requests"));
    }
    auto* n = new Node;
    n->deadline = deadline;
    n->executor = executor;
    n->callback = std::move(callback);
    n->key = s.by_key.try_emplace(key).first;
    n->bucket = n->key->second.try_emplace(OrderOf(position)).first;
    PushBack<&Node::in_bucket>(n->bucket->second, n);
    // Past deadlines go to the next tick to sweep.
    n->slot = static_cast<size_t>(std::max(s.CeilTick(deadline), s.next_tick)) % kSlots;
    PushBack<&Node::in_slot>(s.slots[n->slot], n);
    s.count.fetch_add(1, std::memory_order_relaxed);
    if (s.options.sweep && !s.sweeping && !s.stopped) {
      s.sweeping = true;
      sweeper = std::make_shared<Sweeper>(state_, ++s.sweep_generation, executor, s.tick);
    }
  }
  if (sweeper) {
    // The timer is armed on its own executor; until then only this function holds it.
    boost::asio::post(executor, [sweeper = std::move(sweeper)] { sweeper->Arm(); });
  }
  return absl::OkStatus();
}

void Waiters::Publish(const std::string& key, Position published) {
  State& s = *state_;
  std::vector<Release> out;
  {
    absl::MutexLock lock(&s.mu);
    auto k = s.by_key.find(key);
    if (k == s.by_key.end()) return;
    auto& buckets = k->second;
    Order reached = OrderOf(published);
    auto b = buckets.begin();
    for (; b != buckets.end() && b->first <= reached; ++b) {
      while (Node* n = b->second.head) {
        Unlink<&Node::in_bucket>(b->second, n);
        s.TakeLocked(n, Outcome::kPublished, out);
      }
    }
    buckets.erase(buckets.begin(), b);
    if (buckets.empty()) s.by_key.erase(k);
  }
  Dispatch(std::move(out));
}

void Waiters::Remove(const std::string& key) {
  State& s = *state_;
  std::vector<Release> out;
  {
    absl::MutexLock lock(&s.mu);
    auto k = s.by_key.find(key);
    if (k == s.by_key.end()) return;
    s.TakeKeyLocked(k, Outcome::kRemoved, out);
  }
  Dispatch(std::move(out));
}

void Waiters::RemovePrefix(const std::string& prefix) {
  State& s = *state_;
  std::vector<Release> out;
  {
    absl::MutexLock lock(&s.mu);
    auto k = s.by_key.lower_bound(prefix);
    while (k != s.by_key.end() && k->first.compare(0, prefix.size(), prefix) == 0) {
      auto next = std::next(k);
      s.TakeKeyLocked(k, Outcome::kRemoved, out);
      k = next;
    }
  }
  Dispatch(std::move(out));
}

size_t Waiters::Expire() {
  State& s = *state_;
  std::vector<Release> out;
  {
    absl::MutexLock lock(&s.mu);
    out = s.ExpireLocked(s.options.clock->Monotonic());
  }
  size_t n = out.size();
  Dispatch(std::move(out));
  return n;
}

size_t Waiters::size() const { return state_->count.load(std::memory_order_relaxed); }

uint64_t Waiters::expiry_checks() const { return state_->checks.load(std::memory_order_relaxed); }

}  // namespace meshwork::streamer
