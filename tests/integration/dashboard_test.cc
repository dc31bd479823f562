// M-8: the Grafana dashboard and the Prometheus example are checked against a real cluster:
// every metric a dashboard query names is in the /metrics output of a real central or
// streamer (with a stream playing), and promtool accepts both outputs and the scrape file.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "nlohmann/json.hpp"
#include "tests/integration/harness.h"
#include "tests/integration/media_harness.h"
#include "tests/test_paths.h"

namespace meshwork::testing {
namespace {

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Metric names with samples in a text exposition.
std::set<std::string> SampleNames(const std::string& exposition) {
  std::set<std::string> names;
  std::istringstream lines(exposition);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    names.insert(line.substr(0, line.find_first_of("{ ")));
  }
  return names;
}

TEST_CASE("M-8 every Grafana query names a metric a real central or streamer exports") {
  const std::string dir = MakeTempDir("dashboard");
  Central central = StartCentral(dir + "/db");
  Streamer ingest = StartIngestWithStream(central, "ingest-1", "demo");
  auto push = PushFile(SourceTs(40), ingest.publish, "demo");
  // A viewer, so that meshwork_viewers has a series.
  REQUIRE(Eventually(
      [&] {
        Http("GET", ingest.http, "/demo/index.m3u8");
        return MetricAt(ingest.http, "meshwork_viewers") >= 1;
      },
      20s));
  std::set<std::string> exported;
  for (const auto& [name, address] :
       {std::pair{"central", central.http}, std::pair{"streamer", ingest.http}}) {
    auto metrics = Http("GET", address, "/metrics");
    REQUIRE(metrics.status == 200);
    auto names = SampleNames(metrics.body);
    exported.insert(names.begin(), names.end());
    const std::string file = dir + "/" + name + ".metrics";
    WriteFile(file, metrics.body);
    auto [rc, out] = RunCommand("promtool check metrics < " + file + " 2>&1");
    INFO(name << ": " << out);
    // promtool lints too (e.g. counters without _total); only a parse failure says "error".
    CHECK(out.find("error while linting") == std::string::npos);
  }

  auto dashboard =
      nlohmann::json::parse(ReadText(SourcePath("deploy/grafana/meshwork.json")), nullptr, false);
  REQUIRE(dashboard.is_object());
  REQUIRE(dashboard["panels"].size() >= 8);
  static const std::regex kMetric("meshwork_[a-z0-9_]+");
  int queries = 0;
  for (const auto& panel : dashboard["panels"]) {
    for (const auto& target : panel["targets"]) {
      std::string expr = target["expr"];
      ++queries;
      for (auto it = std::sregex_iterator(expr.begin(), expr.end(), kMetric);
           it != std::sregex_iterator(); ++it) {
        std::string name = it->str();
        INFO(panel["title"].get<std::string>() << ": " << expr);
        CHECK(exported.contains(name));
      }
    }
  }
  CHECK(queries >= 10);
  auto [rc, out] = RunCommand("promtool check config --syntax-only " + SourceDir() +
                              "/deploy/prometheus/prometheus.yml 2>&1");
  INFO(out);
  CHECK(WIFEXITED(rc));
  CHECK(WEXITSTATUS(rc) == 0);
}

}  // namespace
}  // namespace meshwork::testing
