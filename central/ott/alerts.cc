#include "central/ott/alerts.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/time/rfc3339.h"

namespace meshwork::central::ott {

const char* AlertName(int code) {
  switch (code) {
    case kAlertNoBackup:
      return "reserve-ott-no-backup";
    case kAlertMemberProblem:
      return "reserve-ott-member-problem";
    case kAlertOverload:
      return "reserve-ott-overload";
  }
  return "unknown";
}

std::string Alert::Subject() const { return absl::StrCat(group, "/", stream, "@", node); }

AlertTracker::AlertTracker(const Clock& clock, AlertOptions options)
    : clock_(clock), options_(options) {}

void AlertTracker::TrackRefusals(const NodeStates& nodes,
                                 std::chrono::steady_clock::time_point now) {
  for (const auto& [id, state] : nodes) {
    if (!state.has_report) continue;
    Refusals& r = refusals_[id];
    uint64_t count = state.report.refusals();
    bool increased = r.seen && count > r.last;
    r.seen = true;
    r.last = count;  // a lower count is a restarted node: the new baseline
    if (!increased) continue;
    if (!r.last_increase || now - *r.last_increase > options_.refusal_gap) {
      if (!r.raised) r.run_start = now;  // a new run (a raised alert keeps its run)
    }
    r.last_increase = now;
  }
  for (auto& [id, r] : refusals_) {
    if (!r.last_increase) continue;
    auto quiet = now - *r.last_increase;
    if (r.raised) {
      if (quiet >= options_.overload_clear) {
        r.raised = false;
        r.run_start.reset();
      }
    } else if (quiet > options_.refusal_gap) {
      r.run_start.reset();
    } else if (r.run_start && now - *r.run_start >= options_.overload_after) {
      r.raised = true;
      r.reason =
          absl::StrCat("refusing viewers from other nodes for ",
                       std::chrono::duration_cast<std::chrono::seconds>(now - *r.run_start).count(),
                       " s (", r.last, " refusals so far)");
    }
  }
}

std::vector<Alert> AlertTracker::Update(const GroupsSnapshot& groups, const NodeStates& nodes) {
  const auto now = clock_.Monotonic();
  const auto wall = clock_.Now();
  TrackRefusals(nodes, now);

  std::vector<Alert> alerts;
  auto add = [&](int code, const std::string& group, const MemberStatus& m, std::string reason) {
    Alert a;
    a.code = code;
    a.name = AlertName(code);
    a.group = group;
    a.stream = m.stream;
    a.node = m.node;
    a.reason = std::move(reason);
    alerts.push_back(std::move(a));
  };
  for (const auto& [name, group] : groups.groups) {
    size_t others = 0;
    for (const auto& m : group.members) {
      others = 0;
      for (const auto& o : group.members) others += o.node != m.node ? 1 : 0;
      if (m.eligible_backups == 0) {
        add(kAlertNoBackup, name, m,
            others == 0 ? "no other node in the group"
                        : absl::StrCat("none of ", others, " other members is eligible"));
      }
      if (!m.reasons.empty()) add(kAlertMemberProblem, name, m, absl::StrJoin(m.reasons, "; "));
      auto r = refusals_.find(m.node);
      if (r != refusals_.end() && r->second.raised) add(kAlertOverload, name, m, r->second.reason);
    }
  }
  std::sort(alerts.begin(), alerts.end(), [](const Alert& a, const Alert& b) {
    return std::tie(a.code, a.group, a.stream, a.node) <
           std::tie(b.code, b.group, b.stream, b.node);
  });
  std::map<Key, Clock::TimePoint> since;
  for (auto& a : alerts) {
    Key key{a.code, a.group, a.stream, a.node};
    auto it = since_.find(key);
    a.since = it == since_.end() ? wall : it->second;
    since.emplace(key, a.since);
  }
  since_ = std::move(since);
  active_ = alerts;
  return alerts;
}

nlohmann::json AlertsJson(const std::vector<Alert>& alerts) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& a : alerts) {
    list.push_back({{"code", a.code},
                    {"name", a.name},
                    {"group", a.group},
                    {"stream", a.stream},
                    {"node", a.node},
                    {"reason", a.reason},
                    {"message", a.reason},
                    {"subject", a.Subject()},
                    {"since", Rfc3339Millis(UnixMillis(a.since))}});
  }
  return {{"alerts", list}};
}

}  // namespace meshwork::central::ott
