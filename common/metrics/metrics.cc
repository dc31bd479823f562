#include "common/metrics/metrics.h"

#include "absl/synchronization/mutex.h"
#include "prometheus/text_serializer.h"

namespace meshwork::metrics {

namespace {

struct Hooks {
  absl::Mutex mu;
  std::vector<std::pair<const prometheus::Registry*, std::weak_ptr<CollectHook>>> list
      ABSL_GUARDED_BY(mu);
};

Hooks& AllHooks() {
  static Hooks* const hooks = new Hooks();
  return *hooks;
}

}  // namespace

void AddCollectHook(prometheus::Registry& registry, std::weak_ptr<CollectHook> hook) {
  Hooks& hooks = AllHooks();
  absl::MutexLock lock(&hooks.mu);
  // Drop hooks whose owners are gone, so the list does not grow with listeners restarted.
  std::erase_if(hooks.list, [](const auto& entry) { return entry.second.expired(); });
  hooks.list.emplace_back(&registry, std::move(hook));
}

std::string RenderText(prometheus::Registry& registry) {
  std::vector<std::shared_ptr<CollectHook>> run;
  {
    Hooks& hooks = AllHooks();
    absl::MutexLock lock(&hooks.mu);
    for (const auto& [owner, hook] : hooks.list) {
      if (owner != &registry) continue;
      if (auto live = hook.lock()) run.push_back(std::move(live));
    }
  }
  for (const auto& hook : run) hook->BeforeCollect();  // outside the list's lock
  return prometheus::TextSerializer().Serialize(registry.Collect());
}

const prometheus::Histogram::BucketBoundaries& LatencyBuckets() {
  static const prometheus::Histogram::BucketBoundaries buckets = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
      0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};
  return buckets;
}

LabeledCounters::LabeledCounters(prometheus::Family<prometheus::Counter>& family, std::string label,
                                 std::initializer_list<std::string_view> values)
    : family_(&family), label_(std::move(label)) {
  for (std::string_view v : values) {
    counters_.emplace_back(std::string(v), &family.Add({{label_, std::string(v)}}));
  }
}

void LabeledCounters::Increment(std::string_view value) {
  if (!family_) return;
  for (auto& [known, counter] : counters_) {
    if (known == value) return counter->Increment();
  }
  family_->Add({{label_, std::string(value)}}).Increment();
}

}  // namespace meshwork::metrics
