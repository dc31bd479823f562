#include "central/ott/groups.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "central/ott/viewing_keys.h"
#include "common/net/address_class.h"
#include "common/net/ip_address.h"

namespace meshwork::central::ott {
namespace {

using nlohmann::json;

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool ParseInt(std::string_view text, int64_t* out) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

std::string_view StripBrackets(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    return host.substr(1, host.size() - 2);
  }
  return host;
}

// The host as it goes into a URL: IPv6 literals in brackets.
std::string UrlHost(std::string_view host) {
  std::string_view bare = StripBrackets(host);
  auto ip = net::IpAddress::Parse(bare);
  if (ip.ok() && ip->is_v6()) return absl::StrCat("[", std::string(bare), "]");
  return std::string(bare);
}

// The hostname a node announces: the operator's setting, else the registered one.
std::string EffectiveHostname(const ClusterConfig& config, const std::string& id,
                              const NodeState* state) {
  auto it = config.streamers.find(id);
  if (it != config.streamers.end() && !it->second.settings.hostname().empty()) {
    return it->second.settings.hostname();
  }
  if (state && state->registered) return state->registration.hostname();
  return "";
}

// The viewer ports a node announces: the http port (public_port when set) and the https port.
std::pair<uint32_t, uint32_t> ViewerPorts(const v1::RegisterRequest& reg) {
  uint32_t http_port = 0, https_port = 0;
  for (const auto& l : reg.listeners()) {
    if (l.name() == "publish") continue;
    if (l.scheme() == "http" && http_port == 0) http_port = l.port();
    if (l.scheme() == "https" && https_port == 0) https_port = l.port();
  }
  if (reg.public_port() != 0 && http_port != 0) http_port = reg.public_port();
  return {http_port, https_port};
}

// "http host:port" and "https host:port" for each viewer listener (`host` lower case).
std::vector<std::string> AddressKeys(const std::string& host, const v1::RegisterRequest& reg) {
  auto [http_port, https_port] = ViewerPorts(reg);
  std::vector<std::string> keys;
  if (http_port) keys.push_back(absl::StrCat("http ", host, ":", http_port));
  if (https_port) keys.push_back(absl::StrCat("https ", host, ":", https_port));
  return keys;
}

const v1::StreamReport* FindStream(const v1::LoadReport& report, const std::string& name) {
  for (const auto& s : report.streams()) {
    if (s.name() == name) return &s;
  }
  return nullptr;
}

double Round3(double v) { return std::round(v * 1000.0) / 1000.0; }

std::string WholeSeconds(double s) { return absl::StrCat(static_cast<int64_t>(std::llround(s))); }

enum class CodecResult { kMatch, kNoRenditions, kCodecs, kBitrate };

CodecResult CompareRenditions(const v1::StreamReport& member, const v1::StreamReport& reference,
                              double max_ratio) {
  if (member.renditions_size() == 0 || reference.renditions_size() == 0) {
    return CodecResult::kNoRenditions;
  }
  if (member.renditions_size() != reference.renditions_size()) return CodecResult::kCodecs;
  auto sorted = [](const v1::StreamReport& s) {
    std::vector<const v1::RenditionReport*> out;
    for (const auto& r : s.renditions()) out.push_back(&r);
    std::sort(out.begin(), out.end(), [](const auto* a, const auto* b) {
      if (a->name() != b->name()) return a->name() < b->name();
      return a->bitrate_kbit() < b->bitrate_kbit();
    });
    return out;
  };
  auto a = sorted(member);
  auto b = sorted(reference);
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i]->codecs() != b[i]->codecs()) return CodecResult::kCodecs;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    double x = static_cast<double>(a[i]->bitrate_kbit());
    double y = static_cast<double>(b[i]->bitrate_kbit());
    if (x <= 0 || y <= 0) continue;  // not measured yet
    if (std::max(x, y) > std::min(x, y) * max_ratio + 1e-9) return CodecResult::kBitrate;
  }
  return CodecResult::kMatch;
}

// O-16: why a node counts as overloaded, empty when it does not.
std::string OverloadReason(const ClusterConfig& config, const std::string& id,
                           const NodeState* state) {
  if (!state || !state->has_report) return "";
  auto it = config.streamers.find(id);
  if (it == config.streamers.end()) return "";
  const v1::StreamerSettings& settings = it->second.settings;
  const v1::LoadReport& report = state->report;
  const auto& thresholds = settings.alert_thresholds();
  if (thresholds.has_cpu_percent_error() && report.has_cpu_percent() &&
      report.cpu_percent() > static_cast<double>(thresholds.cpu_percent_error().value())) {
    return absl::StrCat("cpu ", WholeSeconds(report.cpu_percent()), "% above ",
                        thresholds.cpu_percent_error().value(), "%");
  }
  if (thresholds.has_network_percent_error() && settings.cdn().has_network_bandwidth_kbit() &&
      report.has_out_kbit()) {
    double capacity = static_cast<double>(settings.cdn().network_bandwidth_kbit().value());
    double limit = capacity * static_cast<double>(thresholds.network_percent_error().value()) / 100;
    if (static_cast<double>(report.out_kbit()) > limit) {
      return absl::StrCat("network ", report.out_kbit(), " kbit/s above ",
                          thresholds.network_percent_error().value(), "% of ",
                          settings.cdn().network_bandwidth_kbit().value(), " kbit/s");
    }
  }
  if (settings.has_backup_session_limit() &&
      report.backup_sessions() >= settings.backup_session_limit().value()) {
    return absl::StrCat("backup sessions at the limit of ",
                        settings.backup_session_limit().value());
  }
  return "";
}

struct Work {
  MemberStatus status;
  const NodeState* state = nullptr;
  const v1::StreamReport* report = nullptr;
  std::optional<TimelineFingerprint> fingerprint;
  int64_t segment_ms = 2000;
  std::string overload_reason;
  uint32_t min_protocol_version = 1;  // the group's (O-4)
};

void AddUnique(std::vector<std::string>& list, const std::string& text) {
  if (std::find(list.begin(), list.end(), text) == list.end()) list.push_back(text);
}

GroupStatus EvaluateGroup(const std::string& name, std::vector<Work> members,
                          const std::string& key_id, const GroupOptions& options) {
  GroupStatus group;
  group.name = name;
  std::sort(members.begin(), members.end(), [](const Work& a, const Work& b) {
    return std::tie(a.status.node, a.status.stream) < std::tie(b.status.node, b.status.stream);
  });

  // O-8: the timeline classes, in node-id order; the largest one is the group's timeline.
  std::vector<std::vector<size_t>> classes;
  for (size_t i = 0; i < members.size(); ++i) {
    if (!members[i].status.online || !members[i].fingerprint) continue;
    bool placed = false;
    for (auto& c : classes) {
      const Work& first = members[c.front()];
      if (SameTimeline(*members[i].fingerprint, *first.fingerprint, first.segment_ms)) {
        c.push_back(i);
        placed = true;
        break;
      }
    }
    if (!placed) classes.push_back({i});
  }
  std::optional<size_t> reference;
  size_t best = 0;
  for (const auto& c : classes) {
    if (c.size() > best) {  // strict: a tie keeps the earlier class
      best = c.size();
      reference = c.front();
    }
  }
  // Without any timeline, codecs are compared with the first online member reporting the
  // stream.
  std::optional<size_t> codec_reference = reference;
  if (!codec_reference) {
    for (size_t i = 0; i < members.size(); ++i) {
      if (members[i].status.online && members[i].report) {
        codec_reference = i;
        break;
      }
    }
  }

  for (size_t i = 0; i < members.size(); ++i) {
    Work& w = members[i];
    MemberStatus& m = w.status;
    const std::string who = m.node + ": ";
    std::vector<std::string> reasons;

    if (reference && w.fingerprint) {
      const Work& ref = members[*reference];
      m.same_timeline = SameTimeline(*w.fingerprint, *ref.fingerprint, ref.segment_ms);
    }
    CodecResult codecs = CodecResult::kNoRenditions;
    if (codec_reference && w.report) {
      codecs = CompareRenditions(*w.report, *members[*codec_reference].report,
                                 options.max_bitrate_ratio);
    }
    m.codecs_match = codecs == CodecResult::kMatch;

    if (!m.online) {
      reasons.push_back(who + "offline");
    } else {
      if (!w.report) {
        reasons.push_back(absl::StrCat(who, "does not report stream ", m.stream));
      } else if (!w.report->working()) {
        reasons.push_back(absl::StrCat(who, "stream ", m.stream, " is not working"));
      } else if (!m.window_ok) {
        if (w.report->live_window_age_s() < 0) {
          reasons.push_back(absl::StrCat(who, "stream ", m.stream, " has no live window"));
        } else {
          reasons.push_back(absl::StrCat(who, "live window of ", m.stream, " is ",
                                         WholeSeconds(*m.live_window_age_s), " s old"));
        }
      }
      if (!m.same_timeline) {
        if (!w.fingerprint) {
          reasons.push_back(absl::StrCat(who, "reports no timeline for ", m.stream));
        } else {
          reasons.push_back(
              absl::StrCat(who, "timeline differs from ", members[*reference].status.node));
        }
      }
      if (w.report && codec_reference && *codec_reference != i) {
        const std::string& ref_node = members[*codec_reference].status.node;
        if (codecs == CodecResult::kCodecs || codecs == CodecResult::kNoRenditions) {
          reasons.push_back(absl::StrCat(who, "codecs differ from ", ref_node));
        } else if (codecs == CodecResult::kBitrate) {
          reasons.push_back(absl::StrCat(who, "bitrates differ from ", ref_node, " by more than ",
                                         options.max_bitrate_ratio, "x"));
        }
      } else if (w.report && !m.codecs_match) {
        reasons.push_back(absl::StrCat(who, "reports no renditions for ", m.stream));
      }
      if (!m.clock_ok && m.clock_skew_s) {
        reasons.push_back(
            absl::StrCat(who, "clock differs by ", WholeSeconds(*m.clock_skew_s), " s"));
      }
      if (!m.key_held) {
        reasons.push_back(key_id.empty() ? who + "no viewing key exists"
                                         : absl::StrCat(who, "does not hold viewing key ", key_id));
      }
      if (m.overloaded)
        reasons.push_back(absl::StrCat(who, "overloaded (", w.overload_reason, ")"));
      if (!m.version_ok) {
        reasons.push_back(absl::StrCat(who, "protocol version ", m.protocol_version.value_or(0),
                                       " is older than the group's minimum ",
                                       w.min_protocol_version));
      }
    }
    m.eligible = m.backup == "can_replace" && m.online && m.window_ok && m.same_timeline &&
                 m.codecs_match && m.clock_ok && m.key_held && !m.overloaded && m.version_ok;
    // Addresses matter only for a member offered as a backup (O-11, O-13, O-14).
    if (m.backup == "can_replace" && !m.http_base.empty()) {
      if (!m.address_public)
        reasons.push_back(who + "a node has only private addresses for backup");
      if (m.https_base.empty()) reasons.push_back(who + "a node has no https address for backup");
      if (m.shared_name) {
        reasons.push_back(who + "its hostname is shared with another node, not usable for backup");
      }
    }
    m.reasons = std::move(reasons);
  }

  std::set<std::string> nodes;
  for (const Work& w : members) nodes.insert(w.status.node);
  if (nodes.size() < 2) group.problems.push_back("the group has fewer than two nodes");
  bool every_member_backed = !members.empty();
  for (Work& w : members) {
    for (const Work& other : members) {
      if (other.status.node != w.status.node && other.status.eligible) {
        ++w.status.eligible_backups;
      }
    }
    if (w.status.eligible_backups == 0) every_member_backed = false;
    for (const auto& r : w.status.reasons) AddUnique(group.problems, r);
    group.members.push_back(std::move(w.status));
  }
  if (!every_member_backed) {
    group.state = "no_backup";
  } else {
    group.state = group.problems.empty() ? "with_backup" : "degraded";
  }
  return group;
}

json OptionalNumber(const std::optional<double>& v) { return v ? json(Round3(*v)) : json(nullptr); }

json OptionalText(const std::string& v) { return v.empty() ? json(nullptr) : json(v); }

bool HasOttStream(const ClusterConfig& config, const std::string& node) {
  for (const auto& [name, record] : config.streams) {
    const json& ott = record.object.contains("ott") ? record.object["ott"] : json();
    if (!ott.is_object() || ott.value("enabled", false) != true) continue;
    const json& placed = record.object["placement"]["streamers"];
    for (const auto& id : placed) {
      if (id == node) return true;
    }
  }
  return false;
}

}  // namespace

std::optional<TimelineFingerprint> ParseFingerprint(std::string_view text) {
  size_t first = text.find(':');
  if (first == std::string_view::npos) return std::nullopt;
  size_t second = text.find(':', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  TimelineFingerprint f;
  if (!ParseInt(text.substr(0, first), &f.msn) ||
      !ParseInt(text.substr(first + 1, second - first - 1), &f.start_90k) ||
      !ParseInt(text.substr(second + 1), &f.duration_90k)) {
    return std::nullopt;
  }
  // A node's report: what no timeline has (negative, or beyond any calendar) is no fingerprint.
  constexpr int64_t kMax = int64_t{1} << 56;
  if (f.msn < 0 || f.start_90k < 0 || f.duration_90k < 0 || f.msn > kMax || f.start_90k > kMax ||
      f.duration_90k > kMax) {
    return std::nullopt;
  }
  return f;
}

bool SameTimeline(const TimelineFingerprint& a, const TimelineFingerprint& b, int64_t segment_ms) {
  // Segment n of a timeline starts at n × segment_ms (S-5, S-6): two nodes on the same
  // timeline differ in start by exactly their msn difference, up to half a segment.
  __int128 expected = (static_cast<__int128>(a.msn) - b.msn) * segment_ms * 90;
  __int128 d = static_cast<__int128>(a.start_90k) - b.start_90k - expected;
  if (d < 0) d = -d;
  return d <= static_cast<__int128>(segment_ms) * 45;
}

bool CertificateCovers(const std::vector<std::string>& names, std::string_view host) {
  std::string h = Lower(StripBrackets(host));
  if (h.empty()) return false;
  bool is_ip = net::IpAddress::Parse(h).ok();
  for (const auto& raw : names) {
    std::string name = Lower(raw);
    if (name == h) return true;
    if (is_ip || name.size() < 3 || name.rfind("*.", 0) != 0) continue;
    size_t dot = h.find('.');
    if (dot == std::string::npos || dot == 0) continue;
    if (h.substr(dot + 1) == name.substr(2)) return true;
  }
  return false;
}

std::map<std::string, NodeAddresses> ViewerAddresses(const ClusterConfig& config,
                                                     const NodeStates& nodes) {
  // O-14: how many registered nodes announce each address (hostname and port). Nodes on one
  // host with ports of their own (a test bed, several nodes per machine) stay distinct; a
  // CDN name in front of several nodes (same name, same port) does not.
  std::map<std::string, int> address_users;
  for (const auto& [id, state] : nodes) {
    if (!state.registered) continue;
    std::string host = Lower(StripBrackets(EffectiveHostname(config, id, &state)));
    if (host.empty()) continue;
    for (const auto& key : AddressKeys(host, state.registration)) ++address_users[key];
  }
  std::map<std::string, NodeAddresses> out;
  for (const auto& [id, state] : nodes) {
    if (!state.registered) continue;
    const v1::RegisterRequest& reg = state.registration;
    NodeAddresses& a = out[id];
    const std::string host = EffectiveHostname(config, id, &state);
    auto [http_port, https_port] = ViewerPorts(reg);
    if (!host.empty() && http_port != 0) {
      a.http_base = absl::StrCat("http://", UrlHost(host), ":", http_port);
    }
    std::vector<std::string> cert_names(reg.certificate_names().begin(),
                                        reg.certificate_names().end());
    if (!host.empty() && https_port != 0 && CertificateCovers(cert_names, host)) {
      a.https_base = absl::StrCat("https://", UrlHost(host), ":", https_port);
    }
    auto ip = net::IpAddress::Parse(StripBrackets(host));
    a.address_public = !host.empty() && (!ip.ok() || !net::IsPrivate(ip->Unmapped()));
    if (!host.empty()) {
      for (const auto& key : AddressKeys(Lower(StripBrackets(host)), reg)) {
        if (address_users[key] > 1) a.shared_name = true;
      }
    }
  }
  return out;
}

GroupsSnapshot EvaluateGroups(const ClusterConfig& config, const NodeStates& nodes,
                              int64_t now_unix_ms, const GroupOptions& options) {
  GroupsSnapshot snapshot;
  if (const ViewingKeyRecord* key = CurrentViewingKey(config)) snapshot.key_id = key->id;

  const std::map<std::string, NodeAddresses> addresses = ViewerAddresses(config, nodes);

  // O-4: a group's minimum protocol version is the highest its streams ask for
  // (ott.min_protocol_version), central's --ott-min-protocol-version where none does.
  std::map<std::string, uint32_t> group_minimum;
  for (const auto& [stream_name, record] : config.streams) {
    auto ott = record.object.find("ott");
    if (ott == record.object.end() || !ott->is_object()) continue;
    auto group_name = ott->find("group");
    if (group_name == ott->end() || !group_name->is_string()) continue;
    uint32_t& minimum =
        group_minimum.try_emplace(group_name->get<std::string>(), options.min_protocol_version)
            .first->second;
    if (auto v = ott->find("min_protocol_version"); v != ott->end() && v->is_number_unsigned()) {
      minimum = std::max(minimum, v->get<uint32_t>());
    }
  }

  std::map<std::string, std::vector<Work>> by_group;
  for (const auto& [stream_name, record] : config.streams) {
    const json& object = record.object;
    auto ott = object.find("ott");
    if (ott == object.end() || !ott->is_object() || ott->value("enabled", false) != true) continue;
    auto group_name = ott->find("group");
    if (group_name == ott->end() || !group_name->is_string()) continue;
    auto& list = by_group[group_name->get<std::string>()];
    const int64_t segment_ms = object.value("segment_ms", int64_t{2000});
    for (const auto& placed : object["placement"]["streamers"]) {
      if (!placed.is_string()) continue;
      const std::string node_id = placed.get<std::string>();
      Work w;
      w.segment_ms = segment_ms;
      w.min_protocol_version = group_minimum[group_name->get<std::string>()];
      MemberStatus& m = w.status;
      m.stream = stream_name;
      m.node = node_id;
      m.backup = ott->value("backup", std::string("can_replace"));
      auto st = nodes.find(node_id);
      w.state = st == nodes.end() ? nullptr : &st->second;
      m.online = w.state && w.state->online;

      if (w.state && w.state->has_report) {
        const v1::LoadReport& report = w.state->report;
        m.load = report.has_play_sessions() ? report.play_sessions() : 0;
        m.refusals = report.refusals();
        w.report = FindStream(report, stream_name);
        if (w.report) {
          double staleness =
              std::max<int64_t>(0, now_unix_ms - w.state->report_received_unix_ms) / 1000.0;
          double age = w.report->live_window_age_s();
          m.live_window_age_s = age < 0 ? age : age + staleness;
          m.window_ok = w.report->working() && age >= 0 &&
                        *m.live_window_age_s <= options.max_live_window_age_s;
          w.fingerprint = ParseFingerprint(w.report->timeline_fingerprint());
          for (const auto& range : w.report->archive()) {
            constexpr int64_t kStep = 10'000;
            // A node's report: a range outside (0, 2^50 ms) is no archive anyone has.
            constexpr int64_t kMaxMs = int64_t{1} << 50;
            if (range.from_ms() < 0 || range.to_ms() < 0 || range.from_ms() > kMaxMs ||
                range.to_ms() > kMaxMs) {
              continue;
            }
            int64_t from = (range.from_ms() + kStep - 1) / kStep * kStep;
            int64_t to = range.to_ms() / kStep * kStep;
            if (to > from) m.archive[range.protocol()] = {from, to};
          }
        }
        m.clock_skew_s = (static_cast<double>(report.node_clock_unix_ms()) -
                          static_cast<double>(w.state->report_received_unix_ms)) /
                         1000.0;
        m.clock_ok = std::abs(*m.clock_skew_s) <= options.max_clock_skew_s;
        m.key_held = !snapshot.key_id.empty() &&
                     std::find(report.viewing_key_ids().begin(), report.viewing_key_ids().end(),
                               snapshot.key_id) != report.viewing_key_ids().end();
        w.overload_reason = OverloadReason(config, node_id, w.state);
        m.overloaded = !w.overload_reason.empty();
      }
      if (w.state && w.state->registered) {
        const v1::RegisterRequest& reg = w.state->registration;
        m.protocol_version = reg.protocol_version();
        m.version_ok = reg.protocol_version() >= w.min_protocol_version;
        if (auto a = addresses.find(node_id); a != addresses.end()) {
          m.http_base = a->second.http_base;
          m.https_base = a->second.https_base;
          m.address_public = a->second.address_public;
          m.shared_name = a->second.shared_name;
        }
      }
      list.push_back(std::move(w));
    }
  }
  for (auto& [name, list] : by_group) {
    snapshot.groups.emplace(name, EvaluateGroup(name, std::move(list), snapshot.key_id, options));
  }
  return snapshot;
}

// D-6: {"ts": [from_ms, to_ms], "fmp4": […]} of what a member has recorded.
static json ArchiveJson(const MemberStatus& m) {
  json archive = json::object();
  for (const auto& [proto, range] : m.archive) archive[proto] = {range.first, range.second};
  return archive;
}

json GroupJson(const GroupStatus& group) {
  json members = json::array();
  for (const auto& m : group.members) {
    members.push_back(
        {{"stream", m.stream},
         {"node", m.node},
         {"backup", m.backup},
         {"online", m.online},
         {"live_window_age_s", OptionalNumber(m.live_window_age_s)},
         {"same_timeline", m.same_timeline},
         {"codecs_match", m.codecs_match},
         {"clock_skew_s", OptionalNumber(m.clock_skew_s)},
         {"key_held", m.key_held},
         {"overloaded", m.overloaded},
         {"version", m.version_ok},
         {"protocol_version", m.protocol_version ? json(*m.protocol_version) : json(nullptr)},
         {"eligible", m.eligible},
         {"eligible_backups", m.eligible_backups},
         {"http_base", OptionalText(m.http_base)},
         {"https_base", OptionalText(m.https_base)},
         {"address_public", m.address_public},
         {"shared_name", m.shared_name},
         {"load", m.load},
         {"archive", ArchiveJson(m)},
         {"reasons", m.reasons}});
  }
  return {{"name", group.name},
          {"state", group.state},
          {"members", members},
          {"problems", group.problems}};
}

json GroupsJson(const GroupsSnapshot& snapshot) {
  json groups = json::array();
  for (const auto& [name, group] : snapshot.groups) groups.push_back(GroupJson(group));
  return {{"groups", groups}};
}

// Loads in views change most seconds; rounded to two significant digits above 10 they still
// order members for the least-loaded choice (O-3) without pushing a new view every second.
static uint64_t RoundedLoad(uint64_t load) {
  uint64_t unit = 1;
  while (load / unit >= 100) unit *= 10;
  return load < 10 ? load : load / unit * unit;
}

json NodeViewJson(const GroupStatus& group) {
  json members = json::array();
  for (const auto& m : group.members) {
    members.push_back({{"node", m.node},
                       {"stream", m.stream},
                       {"eligible", m.eligible},
                       {"http_base", OptionalText(m.http_base)},
                       {"https_base", OptionalText(m.https_base)},
                       {"address_public", m.address_public},
                       {"shared_name", m.shared_name},
                       {"load", RoundedLoad(m.load)}});
    if (!m.archive.empty()) members.back()["archive"] = ArchiveJson(m);
  }
  return {{"group", group.name}, {"members", members}};
}

std::map<std::string, v1::OttGroupViews> NodeViews(const GroupsSnapshot& snapshot) {
  std::map<std::string, v1::OttGroupViews> out;
  for (const auto& [name, group] : snapshot.groups) {
    const std::string view = NodeViewJson(group).dump();
    std::set<std::string> nodes;
    for (const auto& m : group.members) nodes.insert(m.node);
    for (const auto& node : nodes) {
      auto* g = out[node].add_groups();
      g->set_group(name);
      g->set_view_json(view);
    }
  }
  return out;
}

KeyHolding CountKeyHolders(const ClusterConfig& config, const NodeStates& nodes,
                           const std::string& key_id) {
  KeyHolding holding;
  for (const auto& [id, state] : nodes) {
    if (!state.online || !HasOttStream(config, id)) continue;
    ++holding.total;
    const auto& ids = state.report.viewing_key_ids();
    if (!key_id.empty() && std::find(ids.begin(), ids.end(), key_id) != ids.end()) {
      ++holding.holding;
    }
  }
  return holding;
}

}  // namespace meshwork::central::ott
