// M-4: a real Prometheus server scrapes central's and a streamer's /metrics.
#include <sys/socket.h>

#include <catch2/catch.hpp>

#include "tests/integration/media_harness.h"

namespace meshwork::testing {
namespace {

TEST_CASE("M-4 a real Prometheus server scrapes central and a streamer") {
  auto dir = MakeTempDir("prometheus");
  auto central = StartCentral(dir);
  auto node = StartStreamer(central.grpc, "edge-1");
  // Prometheus cannot report a port-0 listener: hand it a free port.
  std::string web = "127.0.0.1:" + std::to_string(FreePort(SOCK_STREAM));
  WriteFile(dir + "/prometheus.yml",
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
            "scrape_configs:\n"
            "  - job_name: central\n    static_configs:\n      - targets: ['" +
                central.http +
                "']\n"
                "  - job_name: streamer\n    static_configs:\n      - targets: ['" +
                node.http + "', '" + node.publish + "']\n");
  auto prometheus =
      Process::Start({"/usr/bin/prometheus", "--config.file=" + dir + "/prometheus.yml",
                      "--storage.tsdb.path=" + dir + "/tsdb", "--web.listen-address=" + web},
                     dir + "/prometheus.log");
  // Every target up, and a Meshwork series queryable.
  auto all_up = [&] {
    auto r = Http("GET", web, "/api/v1/targets?state=active");
    if (r.status != 200) return false;
    auto targets = r.Json()["data"]["activeTargets"];
    if (targets.size() != 3) return false;
    for (const auto& t : targets) {
      if (t["health"] != "up") return false;
    }
    return true;
  };
  REQUIRE(Eventually(all_up, 30s));
  CHECK(Eventually(
      [&] {
        auto r = Http("GET", web, "/api/v1/query?query=meshwork_nodes%7Bstate%3D%22online%22%7D");
        if (r.status != 200) return false;
        auto result = r.Json()["data"]["result"];
        return result.size() == 1 && result[0]["value"][1] == "1";
      },
      15s));
}

}  // namespace
}  // namespace meshwork::testing
