// O-1, O-8…O-15, O-19: OTT groups as central sees them. A pure evaluator: the configuration,
// each node's registration and latest report, and the time in, the state of every group
// out. NodeRegistry supplies the node states; the OttService runs it every second, pushes
// each member node the view of its groups and feeds the alerts.
//
// Members: every stream with ott.enabled, on every node it is placed on, grouped by
// ott.group. Columns per member (all true = eligible as a backup, O-15):
//   backup        the stream's ott.backup is "can_replace";
//   online        the node is online (C-4);
//   window        the stream report says working with a live window age in [0, 600] s;
//   same_timeline the timeline fingerprint "msn:start90k:duration90k" agrees with the
//                 group's reference (below) within ± segment_ms × 45 ticks;
//   codecs_match  the renditions' codecs equal the reference's and every bitrate is within
//                 1.25× of the reference's;
//   clock         node_clock_unix_ms of the report minus central's receive time within ±240 s;
//   key_held      the report's viewing_key_ids contains the current key id;
//   overloaded    (must be false) cpu_percent or out_kbit above the node's alert_thresholds
//                 error levels (network: cdn.network_bandwidth_kbit is 100 %; without it
//                 the network threshold is ignored), or backup_sessions ≥ backup_session_limit;
//   version       the registered protocol_version ≥ options.min_protocol_version.
//
// Timeline reference (O-8): the members that are online and report a fingerprint are
// partitioned in node-id order, each joining the first class whose first member it agrees
// with; the largest class is the group's timeline (a tie goes to the class whose first
// member comes first in node-id order), and that class's first member is the reference for
// the timeline and codec columns. So one diverging member is named as the odd one out
// whatever its node id, and with two disagreeing members the lower node id is the reference.
//
// Addresses (O-9…O-14) are not eligibility conditions (a viewer's scheme and address decide
// on the node) but produce group problems: a private-only address, no https address, an
// address shared with another node (shared_name: another registered node announces the same
// hostname on the same viewer port — a CDN name in front of several nodes; nodes sharing a
// host but each on its own port stay distinct, as on a test bed).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "central/cluster/node_state.h"
#include "central/model/config_service.h"
#include "meshwork/v1/control.pb.h"
#include "nlohmann/json.hpp"

namespace meshwork::central::ott {

// What central knows of one node (central/cluster/node_state.h).
using central::NodeState;
using central::NodeStates;

struct GroupOptions {
  uint32_t min_protocol_version = 1;
  double max_live_window_age_s = 600;
  double max_clock_skew_s = 240;
  double max_bitrate_ratio = 1.25;
};

struct MemberStatus {
  std::string stream;
  std::string node;
  std::string backup = "can_replace";  // or "not_offered"
  bool online = false;
  std::optional<double> live_window_age_s;  // nullopt: the node reports no such stream
  bool window_ok = false;
  bool same_timeline = false;
  bool codecs_match = false;
  std::optional<double> clock_skew_s;  // nullopt: no report
  bool clock_ok = false;
  bool key_held = false;
  bool overloaded = false;
  std::optional<uint32_t> protocol_version;  // nullopt: not registered
  bool version_ok = false;
  bool eligible = false;
  std::string http_base;   // "http://host:port", empty when unknown
  std::string https_base;  // "https://host:port", empty unless an https listener covers host
  bool address_public = false;
  bool shared_name = false;  // another registered node announces the same host and port
  uint64_t load = 0;         // play_sessions
  uint64_t refusals = 0;     // the node's refusal counter (O-16)
  // D-6: the member's archive per protocol ("ts", "fmp4"): [from_ms, to_ms), rounded inward
  // to 10 s so that views change every 10 s at most, not with every recorded segment.
  std::map<std::string, std::pair<int64_t, int64_t>> archive;
  size_t eligible_backups = 0;  // eligible members of the group on other nodes
  // Why the member is not eligible, and its address problems, each "<node>: <text>". A
  // member not offered as backup is not eligible but has no reason for it: it is a choice.
  std::vector<std::string> reasons;
};

struct GroupStatus {
  std::string name;
  std::string state;                  // "with_backup", "degraded" or "no_backup"
  std::vector<MemberStatus> members;  // by node id, then stream
  std::vector<std::string> problems;  // O-11, O-13, O-18 texts, without duplicates
};

struct GroupsSnapshot {
  std::map<std::string, GroupStatus> groups;  // by name
  std::string key_id;                         // the current viewing key; empty when none
};

// O-9…O-14: the viewer addresses of a registered node, as views carry them.
struct NodeAddresses {
  std::string http_base;   // "http://host:port", empty when unknown
  std::string https_base;  // "https://host:port", empty unless an https listener covers host
  bool address_public = false;
  bool shared_name = false;  // another registered node announces the same host and port
};
// Every registered node's addresses, by node id.
std::map<std::string, NodeAddresses> ViewerAddresses(const ClusterConfig& config,
                                                     const NodeStates& nodes);

GroupsSnapshot EvaluateGroups(const ClusterConfig& config, const NodeStates& nodes,
                              int64_t now_unix_ms, const GroupOptions& options = {});

// The API shapes (O-19): a group {"name", "state", "members": [...], "problems": [...]}, and
// {"groups": [group…]} sorted by name.
nlohmann::json GroupJson(const GroupStatus& group);
nlohmann::json GroupsJson(const GroupsSnapshot& snapshot);

// The view pushed to member nodes (OttGroupView.view_json): {"group", "members": [{"node",
// "stream", "eligible", "http_base", "https_base", "address_public", "shared_name", "load"}]}.
nlohmann::json NodeViewJson(const GroupStatus& group);
// Every member node → the views of all groups it is a member of (groups by name).
std::map<std::string, meshwork::v1::OttGroupViews> NodeViews(const GroupsSnapshot& snapshot);

// O-19 key block: `total` = online nodes holding a stream with ott.enabled, `holding` = those
// whose latest report lists `key_id`.
struct KeyHolding {
  size_t holding = 0;
  size_t total = 0;
};
KeyHolding CountKeyHolders(const ClusterConfig& config, const NodeStates& nodes,
                           const std::string& key_id);

// Helpers, exposed for tests.
struct TimelineFingerprint {
  int64_t msn = 0;
  int64_t start_90k = 0;
  int64_t duration_90k = 0;
};
std::optional<TimelineFingerprint> ParseFingerprint(std::string_view text);
bool SameTimeline(const TimelineFingerprint& a, const TimelineFingerprint& b, int64_t segment_ms);
// O-13: `host` is covered by a certificate name (exact, or a one-label "*." wildcard).
bool CertificateCovers(const std::vector<std::string>& names, std::string_view host);

}  // namespace meshwork::central::ott
