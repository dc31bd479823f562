// Priority and shedding (L-15, L-16): DVR reads go first, then live reads, never publishes.
#include "streamer/delivery/shedder.h"

#include <catch2/catch.hpp>

#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"
#include "streamer/delivery/node_alerts.h"

namespace meshwork::streamer {
namespace {

TEST_CASE("L-16 shedding picks the lowest class first and never publishes") {
  ShedThresholds t;
  t.dvr_cpu_percent = 80;
  t.live_cpu_percent = 95;
  t.dvr_in_flight = 2;
  t.live_in_flight = 4;
  prometheus::Registry registry;
  Shedder shedder(t, &registry);
  // No pressure: nothing is shed.
  CHECK_FALSE(shedder.Shed(RequestClass::kDvr));
  CHECK_FALSE(shedder.Shed(RequestClass::kLive));
  // CPU between the thresholds: DVR only.
  shedder.SetLoad(85, 0);
  CHECK(shedder.Shed(RequestClass::kDvr));
  CHECK_FALSE(shedder.Shed(RequestClass::kLive));
  CHECK_FALSE(shedder.Shed(RequestClass::kPublish));
  // Above both: live too; publishes still never.
  shedder.SetLoad(99, 0);
  CHECK(shedder.Shed(RequestClass::kLive));
  CHECK_FALSE(shedder.Shed(RequestClass::kPublish));
  shedder.SetLoad(10, 0);
  // Reads in flight: the same order.
  {
    std::vector<std::unique_ptr<Shedder::Token>> tokens;
    for (int i = 0; i < 3; ++i) tokens.push_back(std::make_unique<Shedder::Token>(&shedder));
    CHECK(shedder.in_flight() == 3);
    CHECK(shedder.Shed(RequestClass::kDvr));
    CHECK_FALSE(shedder.Shed(RequestClass::kLive));
    for (int i = 0; i < 2; ++i) tokens.push_back(std::make_unique<Shedder::Token>(&shedder));
    CHECK(shedder.Shed(RequestClass::kLive));
  }
  CHECK(shedder.in_flight() == 0);
  CHECK(shedder.shed(RequestClass::kDvr) == 2);
  CHECK(shedder.shed(RequestClass::kLive) == 2);
  CHECK(shedder.shed(RequestClass::kPublish) == 0);
  // A metric per class.
  std::string text = prometheus::TextSerializer().Serialize(registry.Collect());
  CHECK(text.find("meshwork_shed_requests_total{class=\"dvr\"} 2") != std::string::npos);
  CHECK(text.find("meshwork_shed_requests_total{class=\"live\"} 2") != std::string::npos);
  CHECK(text.find("meshwork_shed_requests_total{class=\"publish\"} 0") != std::string::npos);
}

TEST_CASE("L-16 the node's alert thresholds from central decide, network load included") {
  ShedThresholds t;  // the flags: DVR shed above 90 % CPU
  Shedder shedder(t);
  v1::StreamerSettings settings;
  settings.mutable_alert_thresholds()->mutable_cpu_percent_error()->set_value(60);
  settings.mutable_alert_thresholds()->mutable_network_percent_error()->set_value(80);
  settings.mutable_cdn()->mutable_network_bandwidth_kbit()->set_value(100'000);
  shedder.ApplySettings(settings);
  // CPU above the node's threshold (below the flag's): DVR reads go.
  shedder.SetLoad(70, 0);
  CHECK(shedder.Shed(RequestClass::kDvr));
  CHECK_FALSE(shedder.Shed(RequestClass::kLive));
  // Network: 85 % of the link sheds DVR reads, a saturated link live reads too.
  shedder.SetLoad(10, 85'000);
  CHECK(shedder.Shed(RequestClass::kDvr));
  CHECK_FALSE(shedder.Shed(RequestClass::kLive));
  shedder.SetLoad(10, 100'000);
  CHECK(shedder.Shed(RequestClass::kLive));
  CHECK_FALSE(shedder.Shed(RequestClass::kPublish));
  shedder.SetLoad(10, 50'000);
  CHECK_FALSE(shedder.Shed(RequestClass::kDvr));
  // Central drops the thresholds: the flag's 90 % applies again, network is not judged
  // without a capacity.
  shedder.ApplySettings(v1::StreamerSettings{});
  shedder.SetLoad(70, 10'000'000);
  CHECK_FALSE(shedder.Shed(RequestClass::kDvr));
  CHECK_FALSE(shedder.Shed(RequestClass::kLive));
  shedder.SetLoad(95, 0);
  CHECK(shedder.Shed(RequestClass::kDvr));
}

TEST_CASE("M-2 a node exports its own alerts as meshwork_alert_active while they hold") {
  prometheus::Registry registry;
  NodeAlerts alerts("edge-7", &registry);
  Shedder shedder(ShedThresholds{});
  v1::StreamerSettings settings;
  settings.mutable_alert_thresholds()->mutable_cpu_percent_error()->set_value(80);
  settings.mutable_alert_thresholds()->mutable_network_percent_error()->set_value(50);
  settings.mutable_cdn()->mutable_network_bandwidth_kbit()->set_value(1000);
  shedder.ApplySettings(settings);
  auto text = [&] { return prometheus::TextSerializer().Serialize(registry.Collect()); };
  shedder.SetLoad(90, 600);
  alerts.Update({shedder.CpuAboveAlert(), shedder.NetworkAboveAlert(), false});
  CHECK(alerts.Active() ==
        std::map<int, std::string>{{80, "node-cpu-high"}, {81, "node-network-high"}});
  CHECK(
      text().find(R"(meshwork_alert_active{code="80",name="node-cpu-high",subject="edge-7"} 1)") !=
      std::string::npos);
  CHECK(text().find(
            R"(meshwork_alert_active{code="81",name="node-network-high",subject="edge-7"} 1)") !=
        std::string::npos);
  // CPU back down, the disk fills: 80 clears (its series goes), 82 is raised.
  shedder.SetLoad(20, 600);
  alerts.Update({shedder.CpuAboveAlert(), shedder.NetworkAboveAlert(), true});
  CHECK(alerts.Active() ==
        std::map<int, std::string>{{81, "node-network-high"}, {82, "archive-disk-full"}});
  CHECK(text().find(R"(code="80")") == std::string::npos);
  CHECK(text().find(
            R"(meshwork_alert_active{code="82",name="archive-disk-full",subject="edge-7"} 1)") !=
        std::string::npos);
  // Without thresholds from central there is nothing to judge CPU and network by.
  shedder.ApplySettings(v1::StreamerSettings{});
  shedder.SetLoad(100, 100'000);
  alerts.Update({shedder.CpuAboveAlert(), shedder.NetworkAboveAlert(), false});
  CHECK(alerts.Active().empty());
  CHECK(text().find("meshwork_alert_active{") == std::string::npos);
}

TEST_CASE("L-16 a threshold of 0 is off") {
  Shedder shedder(ShedThresholds{0, 0, 0, 0});
  shedder.SetLoad(100, 0);
  Shedder::Token token(&shedder);
  CHECK_FALSE(shedder.Shed(RequestClass::kDvr));
  CHECK_FALSE(shedder.Shed(RequestClass::kLive));
}

}  // namespace
}  // namespace meshwork::streamer
