#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "common/metrics/metrics.h"
#include "prometheus/registry.h"

namespace meshwork::metrics {
namespace {

TEST_CASE("M-4 labeled counters export every known value from the start and count each") {
  auto registry = std::make_shared<prometheus::Registry>();
  auto& family = prometheus::BuildCounter()
                     .Name("meshwork_test_answers_total")
                     .Help("test")
                     .Register(*registry);
  LabeledCounters counters(family, "answer", {"served", "gone"});
  std::string text = RenderText(*registry);
  CHECK(text.find("meshwork_test_answers_total{answer=\"served\"} 0") != std::string::npos);
  CHECK(text.find("meshwork_test_answers_total{answer=\"gone\"} 0") != std::string::npos);
  counters.Increment("served");
  counters.Increment("served");
  counters.Increment("gone");
  counters.Increment("other");  // not listed: still counted
  text = RenderText(*registry);
  CHECK(text.find("meshwork_test_answers_total{answer=\"served\"} 2") != std::string::npos);
  CHECK(text.find("meshwork_test_answers_total{answer=\"gone\"} 1") != std::string::npos);
  CHECK(text.find("meshwork_test_answers_total{answer=\"other\"} 1") != std::string::npos);
}

TEST_CASE("M-4 labeled counters without a registry count nothing and do not fail") {
  LabeledCounters none;
  CHECK_NOTHROW(none.Increment("served"));
  CHECK_NOTHROW(none.Increment("never listed"));
}

}  // namespace
}  // namespace meshwork::metrics
