#include "central/cluster/node_registry.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/time/clock.h"
#include "prometheus/registry.h"

namespace meshwork::central {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr milliseconds kOfflineAfter{3000};

class FakeChannel final : public NodeChannel {
 public:
  void ConfigChanged(std::shared_ptr<const ClusterConfig> config) override {
    absl::MutexLock lock(&mu_);
    received_.push_back(std::move(config));
  }
  std::vector<std::shared_ptr<const ClusterConfig>> received() const {
    absl::MutexLock lock(&mu_);
    return received_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<std::shared_ptr<const ClusterConfig>> received_;
};

v1::LoadReport MakeReport(uint64_t play_sessions) {
  v1::LoadReport report;
  report.set_node_clock_unix_ms(1'700'000'000'123);
  report.set_play_sessions(play_sessions);
  report.set_publish_sessions(2);
  report.set_out_kbit(1000);
  report.set_in_kbit(500);
  report.set_cpu_percent(12.5);
  report.set_backup_sessions(1);
  report.set_refusals(3);
  report.set_config_revision(42);
  auto* stream = report.add_streams();
  stream->set_name("news");
  stream->set_working(true);
  auto* rendition = stream->add_renditions();
  rendition->set_name("720p");
  rendition->set_codecs("avc1.64001f");
  rendition->set_bitrate_kbit(3000);
  return report;
}

// The value of gauge `name` with label state=`state`, if present.
std::optional<double> GaugeValue(prometheus::Registry& registry, const std::string& name,
                                 const std::string& state) {
  for (const auto& family : registry.Collect()) {
    if (family.name != name) continue;
    for (const auto& metric : family.metric) {
      for (const auto& label : metric.label) {
        if (label.name == "state" && label.value == state) return metric.gauge.value;
      }
    }
  }
  return std::nullopt;
}

std::optional<double> CounterValue(prometheus::Registry& registry, const std::string& name,
                                   const std::string& to) {
  for (const auto& family : registry.Collect()) {
    if (family.name != name) continue;
    for (const auto& metric : family.metric) {
      if (to.empty() && metric.label.empty()) return metric.counter.value;
      for (const auto& label : metric.label) {
        if (label.name == "to" && label.value == to) return metric.counter.value;
      }
    }
  }
  return std::nullopt;
}

TEST_CASE("O-6 views emptied before a session attaches reach it, empty") {
  class ViewsChannel final : public NodeChannel {
   public:
    void ConfigChanged(std::shared_ptr<const ClusterConfig>) override {}
    void OttViewsChanged(const v1::OttGroupViews& views) override {
      absl::MutexLock lock(&mu);
      groups.push_back(views.groups_size());
    }
    absl::Mutex mu;
    std::vector<int> groups;
  };
  FakeClock clock;
  NodeRegistry registry(clock, kOfflineAfter, nullptr, nullptr);
  v1::RegisterRequest request;
  request.set_node_id("edge-1");
  registry.Registered(request);
  v1::OttGroupViews views;
  views.add_groups();
  registry.SetOttViews({{"edge-1", views}});  // what the node's Register snapshot carried
  registry.SetOttViews({});                   // then its group went, before it attached
  auto channel = std::make_shared<ViewsChannel>();
  registry.Attach("edge-1", channel);
  absl::MutexLock lock(&channel->mu);
  CHECK(channel->groups == std::vector<int>{0});
}

TEST_CASE("C-4 C-10 a session here whose reports stopped yields to another central's view") {
  FakeClock clock;
  NodeRegistry registry(clock, kOfflineAfter, nullptr, nullptr);
  registry.Attach("edge-1", std::make_shared<FakeChannel>());
  registry.Report("edge-1", MakeReport(1));
  v1::SharedNodeState shared;
  *shared.mutable_report() = MakeReport(2);
  // Reporting here: another central's copy is not taken.
  registry.RemoteReport("edge-1", shared.SerializeAsString());
  CHECK(registry.StatusJson("edge-1")["report"]["play_sessions"] == 1);
  // The link died silently: the session stays attached, its reports stop; the node went on
  // to another central, whose shared reports keep it online here.
  clock.Advance(kOfflineAfter);
  CHECK_FALSE(registry.IsOnline("edge-1"));
  registry.RemoteReport("edge-1", shared.SerializeAsString());
  CHECK(registry.IsOnline("edge-1"));
  CHECK(registry.StatusJson("edge-1")["report"]["play_sessions"] == 2);
}

TEST_CASE("C-4 an unknown node is offline") {
  FakeClock clock;
  NodeRegistry registry(clock, kOfflineAfter, nullptr, nullptr);
  CHECK_FALSE(registry.IsOnline("edge-1"));
  auto status = registry.StatusJson("edge-1");
  CHECK(status["online"] == false);
  CHECK(status["report"].is_null());
}

TEST_CASE("C-4 a node is online only with a session attached and a fresh report") {
  FakeClock clock;
  NodeRegistry registry(clock, kOfflineAfter, nullptr, nullptr);
  auto channel = std::make_shared<FakeChannel>();

  SECTION("a report without a session is not enough") {
    registry.Report("edge-1", MakeReport(1));
    CHECK_FALSE(registry.IsOnline("edge-1"));
    registry.Attach("edge-1", channel);
    CHECK(registry.IsOnline("edge-1"));
  }
  SECTION("a session without a report is not enough") {
    registry.Attach("edge-1", channel);
    CHECK_FALSE(registry.IsOnline("edge-1"));
    registry.Report("edge-1", MakeReport(1));
    CHECK(registry.IsOnline("edge-1"));
  }
  // Other nodes are unaffected.
  CHECK_FALSE(registry.IsOnline("edge-2"));
}

TEST_CASE("C-4 a node goes offline exactly when its last report is offline_after old") {
  FakeClock clock;
  NodeRegistry registry(clock, kOfflineAfter, nullptr, nullptr);
  registry.Attach("edge-1", std::make_shared<FakeChannel>());
  registry.Report("edge-1", MakeReport(1));
  CHECK(registry.IsOnline("edge-1"));
  clock.Advance(milliseconds(2999));
  CHECK(registry.IsOnline("edge-1"));
  clock.Advance(milliseconds(1));
  CHECK_FALSE(registry.IsOnline("edge-1"));
  CHECK(registry.StatusJson("edge-1")["online"] == false);

  // A new report brings it back.
  registry.Report("edge-1", MakeReport(2));
  CHECK(registry.IsOnline("edge-1"));
  CHECK(registry.StatusJson("edge-1")["online"] == true);
  clock.Advance(seconds(2));
  registry.Report("edge-1", MakeReport(3));
  clock.Advance(seconds(2));
  CHECK(registry.IsOnline("edge-1"));  // 2 s after the latest report
}

TEST_CASE("C-4 detaching the session makes the node offline at once") {
  FakeClock clock;
  NodeRegistry registry(clock, kOfflineAfter, nullptr, nullptr);
  auto first = std::make_shared<FakeChannel>();
  auto second = std::make_shared<FakeChannel>();
  registry.Attach("edge-1", first);
  registry.Attach("edge-1", second);
  registry.Report("edge-1", MakeReport(1));
  CHECK(registry.IsOnline("edge-1"));

  // While one of two sessions remains, the node stays online.
  registry.Detach("edge-1", first.get());
  CHECK(registry.IsOnline("edge-1"));
  registry.Detach("edge-1", second.get());
  CHECK_FALSE(registry.IsOnline("edge-1"));
  // Detaching again or for an unknown node is harmless.
  registry.Detach("edge-1", second.get());
  registry.Detach("nobody", second.get());

  // A new session with a fresh report makes it online again.
  auto third = std::make_shared<FakeChannel>();
  registry.Attach("edge-1", third);
  CHECK(registry.IsOnline("edge-1"));  // its report is still fresh
  clock.Advance(kOfflineAfter);
  CHECK_FALSE(registry.IsOnline("edge-1"));
  registry.Report("edge-1", MakeReport(1));
  CHECK(registry.IsOnline("edge-1"));
}

TEST_CASE("M-1 StatusJson shows the online state, registration and last report") {
  FakeClock clock;
  NodeRegistry registry(clock, kOfflineAfter, nullptr, nullptr);
  v1::RegisterRequest reg;
  reg.set_node_id("edge-1");
  reg.set_version("1.2.3");
  reg.set_protocol_version(1);
  reg.set_role(v1::ROLE_EDGE);
  reg.set_hostname("edge1.example.net");
  reg.add_addresses("192.0.2.10");
  auto* listener = reg.add_listeners();
  listener->set_name("http");
  listener->set_scheme("http");
  listener->set_port(8080);
  registry.Registered(reg);

  auto status = registry.StatusJson("edge-1");
  CHECK(status["online"] == false);
  CHECK(status["report"].is_null());
  CHECK(status["version"] == "1.2.3");
  CHECK(status["protocol_version"] == 1);
  CHECK(status["addresses"] == nlohmann::json::array({"192.0.2.10"}));
  CHECK(status["listeners"] ==
        nlohmann::json::parse(R"([{"name": "http", "scheme": "http", "port": 8080}])"));

  registry.Attach("edge-1", std::make_shared<FakeChannel>());
  registry.Report("edge-1", MakeReport(7));
  clock.Advance(milliseconds(1500));
  status = registry.StatusJson("edge-1");
  CHECK(status["online"] == true);
  CHECK(status["revision"] == 42);
  const auto& report = status["report"];
  REQUIRE(report.is_object());
  // FakeClock's wall clock starts at 1'700'000'000 s = 2023-11-14T22:13:20Z.
  CHECK(report["at"] == "2023-11-14T22:13:20.000Z");
  CHECK(report["age_s"].get<double>() == Approx(1.5));
  CHECK(report["node_clock"] == "2023-11-14T22:13:20.123Z");
  CHECK(report["play_sessions"] == 7);
  CHECK(report["publish_sessions"] == 2);
  CHECK(report["out_kbit"] == 1000);
  CHECK(report["in_kbit"] == 500);
  CHECK(report["cpu_percent"].get<double>() == Approx(12.5));
  CHECK(report["backup_sessions"] == 1);
  CHECK(report["refusals"] == 3);
  REQUIRE(report["streams"].size() == 1);
  CHECK(report["streams"][0]["name"] == "news");
  CHECK(report["streams"][0]["working"] == true);
  CHECK(report["streams"][0]["renditions"][0]["codecs"] == "avc1.64001f");
  CHECK(report["streams"][0]["renditions"][0]["bitrate_kbit"] == 3000);

  // The last report stays visible after the node went offline, with its age.
  clock.Advance(seconds(10));
  status = registry.StatusJson("edge-1");
  CHECK(status["online"] == false);
  CHECK(status["report"]["age_s"].get<double>() == Approx(11.5));
  CHECK(status["report"]["play_sessions"] == 7);
}

TEST_CASE("C-2 a configuration change reaches every attached channel") {
  FakeClock clock;
  NodeRegistry registry(clock, kOfflineAfter, nullptr, nullptr);
  auto a1 = std::make_shared<FakeChannel>();
  auto a2 = std::make_shared<FakeChannel>();
  auto b = std::make_shared<FakeChannel>();
  auto detached = std::make_shared<FakeChannel>();
  registry.Attach("edge-a", a1);
  registry.Attach("edge-a", a2);
  registry.Attach("edge-b", b);
  registry.Attach("edge-c", detached);
  registry.Detach("edge-c", detached.get());

  auto config = std::make_shared<ClusterConfig>();
  config->revision = 9;
  registry.ConfigChanged(config);

  for (const auto& channel : {a1, a2, b}) {
    auto received = channel->received();
    REQUIRE(received.size() == 1);
    CHECK(received[0] == config);
  }
  CHECK(detached->received().empty());
}

TEST_CASE("C-4 Sweep updates the node gauges and counts transitions") {
  FakeClock clock;
  prometheus::Registry metrics;
  NodeRegistry registry(clock, kOfflineAfter, nullptr, &metrics);
  auto channel = std::make_shared<FakeChannel>();
  registry.Attach("edge-1", channel);
  registry.Attach("edge-2", std::make_shared<FakeChannel>());
  registry.Report("edge-1", MakeReport(1));
  registry.Report("edge-2", MakeReport(1));
  CHECK(CounterValue(metrics, "meshwork_heartbeats_total", "") == 2);

  registry.Sweep();
  CHECK(GaugeValue(metrics, "meshwork_nodes", "online") == 2);
  CHECK(GaugeValue(metrics, "meshwork_nodes", "offline") == 0);
  CHECK(CounterValue(metrics, "meshwork_node_transitions_total", "online") == 2);

  clock.Advance(seconds(2));
  registry.Report("edge-2", MakeReport(1));
  clock.Advance(seconds(1));  // edge-1's report is now 3 s old
  registry.Sweep();
  CHECK(GaugeValue(metrics, "meshwork_nodes", "online") == 1);
  CHECK(GaugeValue(metrics, "meshwork_nodes", "offline") == 1);
  CHECK(CounterValue(metrics, "meshwork_node_transitions_total", "offline") == 1);

  registry.Detach("edge-2", nullptr);  // not its channel: no change
  registry.Sweep();
  CHECK(GaugeValue(metrics, "meshwork_nodes", "online") == 1);

  registry.Report("edge-1", MakeReport(1));
  registry.Sweep();
  CHECK(GaugeValue(metrics, "meshwork_nodes", "online") == 2);
  CHECK(GaugeValue(metrics, "meshwork_nodes", "offline") == 0);
  CHECK(CounterValue(metrics, "meshwork_node_transitions_total", "online") == 3);

  // A sweep without change counts no transition.
  registry.Sweep();
  CHECK(CounterValue(metrics, "meshwork_node_transitions_total", "online") == 3);
  CHECK(CounterValue(metrics, "meshwork_node_transitions_total", "offline") == 1);
}

}  // namespace
}  // namespace meshwork::central
