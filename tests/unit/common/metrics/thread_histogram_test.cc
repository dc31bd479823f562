#include "common/metrics/thread_histogram.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "prometheus/registry.h"

namespace meshwork::metrics {
namespace thread_histogram_test {

// The value thread `t` observes nine times in ten.
double BoundsValue(int t) { return t < 2 ? 0.0005 : t == 2 ? 0.005 : 0.05; }

// The value of one exposition line ("name{labels} value"), or -1 when it is missing.
double Sample(const std::string& text, const std::string& series) {
  size_t at = text.find(series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 1));
}

TEST_CASE("M-4 a histogram counted per thread shows every observation once at each scrape") {
  auto registry = std::make_shared<prometheus::Registry>();
  prometheus::Histogram::BucketBoundaries bounds = {0.001, 0.01, 0.1};
  auto& family =
      prometheus::BuildHistogram().Name("meshwork_test_seconds").Help("test").Register(*registry);
  auto histogram = std::make_shared<ThreadHistogram>(family, bounds);
  AddCollectHook(*registry, histogram);

  constexpr int kThreads = 4, kEach = 20000;
  std::atomic<bool> done{false};
  // Scrapes while the threads observe: a fold concurrent with counting loses nothing.
  std::thread scraper([&] {
    while (!done.load()) RenderText(*registry);
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&histogram, t] {
      for (int i = 0; i < kEach; ++i) {
        // Each thread: one bucket of its own, then the +Inf bucket every tenth time.
        histogram->Observe(i % 10 == 0 ? 5.0 : BoundsValue(t));
      }
    });
  }
  for (auto& th : threads) th.join();
  done = true;
  scraper.join();

  std::string text = RenderText(*registry);
  CHECK(Sample(text, "meshwork_test_seconds_count") == kThreads * kEach);
  // Threads 0 and 1 observe 0.0005 (le 0.001), 2 → 0.005 (le 0.01), 3 → 0.05 (le 0.1).
  const double tenth = kEach / 10, rest = kEach - tenth;
  CHECK(Sample(text, "meshwork_test_seconds_bucket{le=\"0.001\"}") == 2 * rest);
  CHECK(Sample(text, "meshwork_test_seconds_bucket{le=\"0.01\"}") == 3 * rest);
  CHECK(Sample(text, "meshwork_test_seconds_bucket{le=\"0.1\"}") == 4 * rest);
  CHECK(Sample(text, "meshwork_test_seconds_bucket{le=\"+Inf\"}") == kThreads * kEach);
  const double sum = kThreads * tenth * 5.0 + rest * (0.0005 * 2 + 0.005 + 0.05);
  CHECK(Sample(text, "meshwork_test_seconds_sum") == Approx(sum).epsilon(1e-6));
  // A scrape with nothing new adds nothing.
  CHECK(Sample(RenderText(*registry), "meshwork_test_seconds_count") == kThreads * kEach);
}

}  // namespace thread_histogram_test
}  // namespace meshwork::metrics
