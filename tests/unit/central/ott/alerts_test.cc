// OTT alerts (O-18, M-2): 70 no backup, 78 member problem, 79 overload from refusals.
#include "central/ott/alerts.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <string>

#include "common/time/clock.h"
#include "tests/unit/central/ott/ott_fixture.h"

namespace meshwork::central::ott {
namespace {

using namespace testing;
using std::chrono::seconds;

int Count(const std::vector<Alert>& alerts, int code, const std::string& node = "") {
  int n = 0;
  for (const auto& a : alerts) n += a.code == code && (node.empty() || a.node == node) ? 1 : 0;
  return n;
}

TEST_CASE("O-18 a healthy group raises no alert") {
  FakeClock clock;
  AlertTracker tracker(clock);
  auto alerts =
      tracker.Update(EvaluateGroups(HealthyConfig(), HealthyNodes(), kNow), HealthyNodes());
  CHECK(alerts.empty());
}

TEST_CASE("O-18 alert 79 is raised after 30 s of refusals and cleared after 30 s without") {
  FakeClock clock;
  AlertTracker tracker(clock);
  ClusterConfig config = HealthyConfig();
  NodeStates nodes = HealthyNodes();
  uint64_t refusals = 5;  // a counter: what was refused before does not count
  nodes["ingest-2"].report.set_refusals(refusals);
  auto round = [&] { return tracker.Update(EvaluateGroups(config, nodes, kNow), nodes); };
  CHECK(Count(round(), kAlertOverload) == 0);

  // Refusing every second: the first increase is seen at 1 s, the alert 30 s after it.
  for (int s = 1; s <= 30; ++s) {
    clock.Advance(seconds(1));
    nodes["ingest-2"].report.set_refusals(++refusals);
    INFO("second " << s);
    CHECK(Count(round(), kAlertOverload) == 0);
  }
  clock.Advance(seconds(1));
  nodes["ingest-2"].report.set_refusals(++refusals);
  auto raised = round();
  REQUIRE(Count(raised, kAlertOverload, "ingest-2") == 1);
  CHECK(Count(raised, kAlertOverload) == 1);
  const Alert* alert = nullptr;
  for (const auto& a : raised) {
    if (a.code == kAlertOverload) alert = &a;
  }
  CHECK(alert->name == "reserve-ott-overload");
  CHECK(alert->group == "ch1");
  CHECK(alert->stream == "ch1-spare");
  auto since = alert->since;

  // Still refusing for a while, then none: it stays 29 s and clears at 30 s.
  for (int s = 0; s < 10; ++s) {
    clock.Advance(seconds(1));
    nodes["ingest-2"].report.set_refusals(++refusals);
    auto alerts = round();
    REQUIRE(Count(alerts, kAlertOverload) == 1);
    for (const auto& a : alerts) {
      if (a.code == kAlertOverload) CHECK(a.since == since);
    }
  }
  for (int s = 1; s < 30; ++s) {
    clock.Advance(seconds(1));
    INFO("quiet second " << s);
    CHECK(Count(round(), kAlertOverload) == 1);
  }
  clock.Advance(seconds(1));
  CHECK(Count(round(), kAlertOverload) == 0);
}

TEST_CASE("O-18 refusals that stop before 30 s, or pause, raise no alert 79") {
  FakeClock clock;
  AlertTracker tracker(clock);
  ClusterConfig config = HealthyConfig();
  NodeStates nodes = HealthyNodes();
  uint64_t refusals = 0;
  auto round = [&] { return tracker.Update(EvaluateGroups(config, nodes, kNow), nodes); };
  round();
  // 20 s of refusals, a 10 s pause, 20 s more: never 30 s in a row.
  for (int s = 0; s < 50; ++s) {
    clock.Advance(seconds(1));
    if (s < 20 || s >= 30) nodes["ingest-1"].report.set_refusals(++refusals);
    INFO("second " << s);
    CHECK(Count(round(), kAlertOverload) == 0);
  }
  // A restarted node's counter going down is no refusal either.
  clock.Advance(seconds(1));
  nodes["ingest-1"].report.set_refusals(0);
  CHECK(Count(round(), kAlertOverload) == 0);
}

TEST_CASE("O-18 alert 70 is raised for a member without an eligible backup") {
  FakeClock clock;
  AlertTracker tracker(clock);
  ClusterConfig config = HealthyConfig();
  NodeStates nodes = HealthyNodes();
  nodes["ingest-1"].online = false;
  nodes["ingest-2"].online = false;
  auto alerts = tracker.Update(EvaluateGroups(config, nodes, kNow), nodes);
  CHECK(Count(alerts, kAlertNoBackup) == 1);
  CHECK(Count(alerts, kAlertNoBackup, "ingest-3") == 1);
  auto first_since = alerts.front().since;
  CHECK(alerts.front().code == kAlertNoBackup);
  CHECK(alerts.front().name == "reserve-ott-no-backup");
  CHECK(alerts.front().reason == "none of 2 other members is eligible");

  clock.Advance(seconds(5));
  alerts = tracker.Update(EvaluateGroups(config, nodes, kNow), nodes);
  CHECK(alerts.front().since == first_since);  // still the same alert

  nodes["ingest-1"].online = true;
  alerts = tracker.Update(EvaluateGroups(config, nodes, kNow), nodes);
  CHECK(Count(alerts, kAlertNoBackup) == 0);
}

TEST_CASE("O-18 alert 78 names the member and the reason") {
  FakeClock clock;
  AlertTracker tracker(clock);
  ClusterConfig config = HealthyConfig();
  NodeStates nodes = HealthyNodes();
  nodes["ingest-3"].report.mutable_streams(0)->set_timeline_fingerprint("7:1:180000");
  auto alerts = tracker.Update(EvaluateGroups(config, nodes, kNow), nodes);
  REQUIRE(Count(alerts, kAlertMemberProblem) == 1);
  const Alert& a = alerts.front();
  CHECK(a.code == kAlertMemberProblem);
  CHECK(a.name == "reserve-ott-member-problem");
  CHECK(a.node == "ingest-3");
  CHECK(a.stream == "ch1");
  CHECK(a.group == "ch1");
  CHECK(a.reason == "ingest-3: timeline differs from ingest-1");
  CHECK(Count(alerts, kAlertNoBackup) == 0);

  auto j = AlertsJson(alerts);
  REQUIRE(j["alerts"].size() == 1);
  CHECK(j["alerts"][0]["code"] == 78);
  CHECK(j["alerts"][0]["name"] == "reserve-ott-member-problem");
  CHECK(j["alerts"][0]["node"] == "ingest-3");
  CHECK(j["alerts"][0]["reason"] == "ingest-3: timeline differs from ingest-1");
  CHECK(j["alerts"][0]["since"] == "2023-11-14T22:13:20.000Z");
}

}  // namespace
}  // namespace meshwork::central::ott
