// O-18, M-2: the OTT alerts central raises, from the group evaluation and the nodes'
// refusal counters. Pure apart from the injected clock; the OttService feeds it every second.
//
//   70 reserve-ott-no-backup       a member has no eligible backup (on another node);
//   78 reserve-ott-member-problem  a member has problems (not eligible, with the reasons:
//                                  timeline, codecs, clock, key, version, ...; or its
//                                  addresses: private only, no https, shared name);
//   79 reserve-ott-overload        the member's node has been refusing viewers from other
//                                  nodes (LoadReport.refusals, a counter, increasing) for
//                                  30 s: raised once refusals went on for 30 s with no pause
//                                  longer than 5 s, cleared after 30 s without any.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "central/ott/groups.h"
#include "common/time/clock.h"
#include "nlohmann/json.hpp"

namespace meshwork::central::ott {

inline constexpr int kAlertNoBackup = 70;
inline constexpr int kAlertMemberProblem = 78;
inline constexpr int kAlertOverload = 79;
inline constexpr int kOttAlertCodes[] = {kAlertNoBackup, kAlertMemberProblem, kAlertOverload};
const char* AlertName(int code);

struct Alert {
  int code = 0;
  std::string name;
  std::string group;
  std::string stream;
  std::string node;
  std::string reason;
  Clock::TimePoint since;  // wall clock, when it became active
  // "<group>/<stream>@<node>": what the alert is about, for metrics labels (M-2).
  std::string Subject() const;
};

struct AlertOptions {
  std::chrono::seconds overload_after{30};  // refusals this long raise 79
  std::chrono::seconds overload_clear{30};  // no refusal this long clears it
  std::chrono::seconds refusal_gap{5};      // a longer pause ends a run of refusals
};

class AlertTracker {
 public:
  explicit AlertTracker(const Clock& clock, AlertOptions options = {});

  // One round: updates the refusal history from `nodes` and returns the active alerts
  // sorted by code, group, stream, node.
  std::vector<Alert> Update(const GroupsSnapshot& groups, const NodeStates& nodes);
  const std::vector<Alert>& active() const { return active_; }

 private:
  struct Refusals {
    bool seen = false;
    uint64_t last = 0;
    std::optional<std::chrono::steady_clock::time_point> run_start;
    std::optional<std::chrono::steady_clock::time_point> last_increase;
    bool raised = false;
    std::string reason;
  };
  using Key = std::tuple<int, std::string, std::string, std::string>;  // code, group, stream, node

  void TrackRefusals(const NodeStates& nodes, std::chrono::steady_clock::time_point now);

  const Clock& clock_;
  const AlertOptions options_;
  std::map<std::string, Refusals> refusals_;  // by node
  std::map<Key, Clock::TimePoint> since_;
  std::vector<Alert> active_;
};

// GET /central/api-v4/alerts: {"alerts": [{"code", "name", "group", "stream", "node",
// "reason", "since", "subject", "message"}]}.
nlohmann::json AlertsJson(const std::vector<Alert>& alerts);

}  // namespace meshwork::central::ott
