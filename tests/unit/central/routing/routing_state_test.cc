// RoutingService::ReadState (P-2): the redirect's per-thread reads of the routing snapshot and
// of the streams live somewhere follow every change, and two services read on one thread do
// not see each other's state.
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "central/cluster/node_registry.h"
#include "central/model/object_codecs.h"
#include "central/routing/routing_service.h"
#include "common/time/clock.h"

namespace meshwork::central {
namespace routing_state_test {

using namespace std::chrono_literals;

class NullChannel final : public NodeChannel {
 public:
  void ConfigChanged(std::shared_ptr<const ClusterConfig>) override {}
};

ClusterConfig WithStream(const std::string& name, uint64_t revision) {
  ClusterConfig config;
  config.revision = revision;
  auto stream = ValidateStream({{"placement", {{"streamers", nlohmann::json::array()}}}}, name);
  REQUIRE(stream.ok());
  config.streams[name] = ObjectRecord{*stream, revision};
  return config;
}

v1::LoadReport Working(const std::string& stream) {
  v1::LoadReport report;
  auto* s = report.add_streams();
  s->set_name(stream);
  s->set_working(true);
  return report;
}

bool Configured(const RoutingService& routing, const std::string& stream) {
  return routing.ReadState().snapshot->StreamConfigured(stream);
}

TEST_CASE("Z-13 a redirect's cached routing state follows config changes and live streams") {
  FakeClock clock;
  NodeRegistry registry(clock, 3000ms, nullptr, nullptr);
  RoutingService routing(&registry, nullptr);
  CHECK_FALSE(Configured(routing, "ch1"));
  routing.ConfigChanged(WithStream("ch1", 1));
  CHECK(Configured(routing, "ch1"));  // the next read sees the new snapshot
  routing.ConfigChanged(WithStream("ch2", 2));
  CHECK_FALSE(Configured(routing, "ch1"));
  CHECK(Configured(routing, "ch2"));

  CHECK_FALSE(routing.ReadState().live->contains("only-live"));
  registry.Attach("edge-1", std::make_shared<NullChannel>());
  registry.Report("edge-1", Working("only-live"));
  RoutingService::State state = routing.ReadState();
  CHECK(state.live->contains("only-live"));
  CHECK(RoutingService::StreamOfPath(*state.snapshot, *state.live, "/only-live/v1/1.ts") ==
        std::optional<std::string_view>("only-live"));
  clock.Advance(4s);  // the node's report is now older than offline_after
  registry.Sweep();
  CHECK_FALSE(routing.ReadState().live->contains("only-live"));
}

TEST_CASE("Z-13 two routing services read on one thread keep their own state") {
  FakeClock clock;
  NodeRegistry registry_a(clock, 3000ms, nullptr, nullptr);
  NodeRegistry registry_b(clock, 3000ms, nullptr, nullptr);
  RoutingService a(&registry_a, nullptr);
  RoutingService b(&registry_b, nullptr);
  a.ConfigChanged(WithStream("a-stream", 1));
  b.ConfigChanged(WithStream("b-stream", 1));
  for (int i = 0; i < 3; ++i) {
    CHECK(Configured(a, "a-stream"));
    CHECK_FALSE(Configured(a, "b-stream"));
    CHECK(Configured(b, "b-stream"));
    CHECK_FALSE(Configured(b, "a-stream"));
  }
}

}  // namespace routing_state_test
}  // namespace meshwork::central
