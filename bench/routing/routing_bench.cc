// P-1: one routing decision in process with 10 000 zones, 100 000 routes (IPv4 and IPv6) and
// 1 000 nodes, and the rebuild of the routing snapshot. Bar: ≤ 1 µs median per decision,
// rebuild ≤ 200 ms. Run: build/bench/routing_bench (aggregates over 5 repetitions).
#include <benchmark/benchmark.h>

#include <random>

#include "absl/strings/str_cat.h"
#include "central/model/object_codecs.h"
#include "central/model/streamer_codec.h"
#include "central/model/streamer_proto.h"
#include "central/routing/routing_snapshot.h"
#include "central/routing/selector.h"
#include "common/time/clock.h"

namespace meshwork::central {
namespace {

constexpr int kZones = 10'000;
constexpr int kRoutesPerZone = 10;  // 5 IPv4 /24 + 5 IPv6 /48 → 100 000 routes
constexpr int kNodes = 1'000;

struct Fixture {
  ClusterConfig config;
  std::vector<std::shared_ptr<LiveNode>> live;
  std::vector<net::IpAddress> clients;
  FakeClock clock;

  Fixture() {
    std::mt19937 rng(42);
    for (int z = 0; z < kZones; ++z) {
      nlohmann::json routes = nlohmann::json::array();
      for (int r = 0; r < kRoutesPerZone / 2; ++r) {
        int n = z * (kRoutesPerZone / 2) + r;  // a distinct /24 and /48 per route
        routes.push_back(absl::StrCat(10 + (n >> 16), ".", (n >> 8) & 255, ".", n & 255, ".0/24"));
        routes.push_back(
            absl::StrCat("2a02:", absl::Hex(n >> 16), ":", absl::Hex(n & 0xffff), "::/48"));
      }
      // Offices fall back to a regional zone (every 100th), regions to none.
      nlohmann::json fallback =
          z % 100 == 0 ? nlohmann::json() : nlohmann::json(Name(z / 100 * 100));
      auto zone = ValidateZone({{"routes", routes}, {"fallback_zone", fallback}}, Name(z));
      config.zones[Name(z)] = ObjectRecord{*zone, 1};
    }
    for (int i = 0; i < kNodes; ++i) {
      // One node for every 10 zones; the zones without one route through their region.
      std::string id = absl::StrCat("node-", i);
      nlohmann::json body = {{"hostname", id + ".example.net"},
                             {"role", i % 3 == 0 ? "ingest" : "edge"},
                             {"zone", Name(i * 10)},
                             {"cdn", {{"playback_session_limit", 5000}}}};
      auto canonical = ValidateStreamer(body, id);
      config.streamers[id] = StreamerRecord{*canonical, StreamerToProto(*canonical), 1};
      auto node = std::make_shared<LiveNode>();
      node->AddSession();
      node->SetReport(clock.Monotonic(), rng() % 1000, 1000, {"ch1"});
      live.push_back(node);
    }
    auto stream = ValidateStream({{"placement", {{"streamers", {"node-0"}}}}}, "ch1");
    config.streams["ch1"] = ObjectRecord{*stream, 1};
    for (int i = 0; i < 4096; ++i) {
      int n = rng() % (kZones * kRoutesPerZone / 2);
      auto text =
          i % 2 ? absl::StrCat(10 + (n >> 16), ".", (n >> 8) & 255, ".", n & 255, ".", rng() % 256)
                : absl::StrCat("2a02:", absl::Hex(n >> 16), ":", absl::Hex(n & 0xffff),
                               "::", absl::Hex(rng() % 65536));
      clients.push_back(net::IpAddress::Parse(text).value());
    }
  }
  static std::string Name(int z) { return absl::StrCat("zone-", z); }
  std::shared_ptr<const RoutingSnapshot> Build() const {
    return RoutingSnapshot::Build(config, [this](const std::string& id) {
      return std::shared_ptr<const LiveNode>(live[std::stoi(id.substr(5))]);
    });
  }
};

Fixture& Shared() {
  static Fixture* f = new Fixture();
  return *f;
}

void BM_RoutingDecision(benchmark::State& state) {
  Fixture& f = Shared();
  auto snapshot = f.Build();
  Selector selector(f.clock, std::chrono::seconds(3));
  LiveStreams live = {"ch1"};
  size_t i = 0, refused = 0;
  for (auto _ : state) {
    auto d = selector.Route(*snapshot, live, "ch1", f.clients[i++ & 4095], RouteMode::kDecide);
    if (!d.ok()) ++refused;
    benchmark::DoNotOptimize(d);
  }
  state.counters["refused"] = static_cast<double>(refused);
  state.counters["routes"] = kZones * kRoutesPerZone;
}
BENCHMARK(BM_RoutingDecision)->Repetitions(5)->ReportAggregatesOnly(true);

void BM_SnapshotRebuild(benchmark::State& state) {
  Fixture& f = Shared();
  for (auto _ : state) {
    auto s = f.Build();
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(BM_SnapshotRebuild)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(5)
    ->Repetitions(3)
    ->ReportAggregatesOnly(true);

}  // namespace
}  // namespace meshwork::central

BENCHMARK_MAIN();
