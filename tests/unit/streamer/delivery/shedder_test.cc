// Priority and shedding (L-15, L-16): DVR reads go first, then live reads, never publishes.
#include <catch2/catch.hpp>

#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"
#include "streamer/delivery/shedder.h"

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
  shedder.SetCpuPercent(85);
  CHECK(shedder.Shed(RequestClass::kDvr));
  CHECK_FALSE(shedder.Shed(RequestClass::kLive));
  CHECK_FALSE(shedder.Shed(RequestClass::kPublish));
  // Above both: live too; publishes still never.
  shedder.SetCpuPercent(99);
  CHECK(shedder.Shed(RequestClass::kLive));
  CHECK_FALSE(shedder.Shed(RequestClass::kPublish));
  shedder.SetCpuPercent(10);
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

TEST_CASE("L-16 a threshold of 0 is off") {
  Shedder shedder(ShedThresholds{0, 0, 0, 0});
  shedder.SetCpuPercent(100);
  Shedder::Token token(&shedder);
  CHECK_FALSE(shedder.Shed(RequestClass::kDvr));
  CHECK_FALSE(shedder.Shed(RequestClass::kLive));
}

}  // namespace
}  // namespace meshwork::streamer
