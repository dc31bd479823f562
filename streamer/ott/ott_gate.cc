#include "streamer/ott/ott_gate.h"

#include <algorithm>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "common/crypto/pass.h"
#include "common/http/content.h"
#include "common/http/response.h"
#include "common/log/log.h"
#include "common/net/address_class.h"
#include "common/net/ip_address.h"
#include "common/status/absl_view.h"
#include "meshwork/v1/protocol.h"
#include "streamer/ott/backups.h"

namespace meshwork::streamer {

namespace {

constexpr size_t kMaxBackupSessions = 1'000'000;

std::string_view UserAgent(const http::RequestContext& ctx) {
  auto it = ctx.request.find(http::beast_http::field::user_agent);
  if (it == ctx.request.end()) return {};
  return {it->value().data(), it->value().size()};
}

// A short metric label for a pass refusal (the messages of crypto::VerifyPass).
std::string ReasonLabel(std::string_view message) {
  static constexpr std::pair<std::string_view, std::string_view> kLabels[] = {
      {"malformed", "malformed"},
      {"unknown key", "unknown_key"},
      {"bad signature", "bad_signature"},
      {"another stream", "other_stream"},
      {"expired", "expired"},
      {"not yet valid", "not_yet_valid"}};
  for (const auto& [needle, label] : kLabels) {
    if (message.find(needle) != std::string_view::npos) return std::string(label);
  }
  return "other";
}

bool ViewerPublic(const http::RequestContext& ctx) { return !net::IsPrivate(ctx.client); }

std::vector<crypto::ViewingKey> AcceptedKeys(const NodeConfig& config, int64_t now_ms) {
  std::vector<crypto::ViewingKey> keys;
  for (const auto& k : config.viewing_keys) {
    if (k.not_after_unix_ms == 0 || k.not_after_unix_ms > now_ms) keys.push_back({k.id, k.secret});
  }
  return keys;
}

}  // namespace

OttGate::OttGate(std::string node_id, const Snapshot<NodeConfig>* config, const Clock& clock,
                 prometheus::Registry* registry)
    : node_id_(std::move(node_id)), config_(config), clock_(clock) {
  if (!registry) return;
  refusals_counter_ = &prometheus::BuildCounter()
                           .Name("meshwork_ott_refusals_total")
                           .Help("Viewers from other nodes refused with 429 under overload (O-16)")
                           .Register(*registry)
                           .Add({});
  pass_failures_ =
      metrics::LabeledCounters(prometheus::BuildCounter()
                                   .Name("meshwork_ott_pass_rejections_total")
                                   .Help("Requests with a pass answered 403 (O-7), by reason")
                                   .Register(*registry),
                               "reason",
                               {"malformed", "unknown_key", "bad_signature", "other_stream",
                                "expired", "not_yet_valid", "other"});
}

void OttGate::Apply(const NodeConfig& config) {
  auto next = std::make_shared<SettingsMap>();
  for (const auto& [name, stream] : config.streams) {
    if (stream->ott.enabled) (*next)[name] = stream->ott;
  }
  settings_.Set(std::move(next));
}

OttSettings OttGate::Settings(const std::string& stream) const {
  thread_local Snapshot<SettingsMap>::ReadCache cache;  // read on every viewer request
  const SettingsMap* map = settings_.Read(cache);
  auto it = map->find(stream);
  return it == map->end() ? OttSettings{} : it->second;
}

void OttGate::SetLoad(double cpu_percent, uint64_t out_kbit) {
  cpu_.store(cpu_percent);
  out_kbit_.store(out_kbit);
}

std::vector<OttGate::Usable> OttGate::UsablePeers(const NodeConfig& config, const OttSettings& ott,
                                                  const http::RequestContext& ctx,
                                                  bool require_eligible) const {
  std::vector<Usable> out;
  auto view = config.ott_groups.find(ott.group);
  if (view == config.ott_groups.end()) return out;
  bool viewer_public = ViewerPublic(ctx);
  bool viewer_https = ctx.ViewerScheme() == "https";
  for (const auto& m : view->second.members) {  // node-id order
    if (m.node == node_id_ || (require_eligible && !m.eligible)) continue;
    BackupPeer peer{m.node, m.http_base, m.https_base, m.address_public, m.shared_name, m.load};
    std::string base = BackupBase(peer, viewer_public, viewer_https);
    if (!base.empty()) out.push_back({&m, std::move(base)});
  }
  return out;
}

std::optional<hls::Steering> OttGate::Pathways(const http::RequestContext& ctx,
                                               const std::string& stream) const {
  auto config = config_->Get();
  OttSettings view_of;
  view_of.group = absl::StrCat(v1::kSteeringGroupPrefix, stream);
  auto view = config->ott_groups.find(view_of.group);
  if (view == config->ott_groups.end() || view->second.steering_uri.empty()) return std::nullopt;
  hls::Steering steering;
  steering.server_uri = view->second.steering_uri;
  steering.pathway_id = node_id_;
  steering.pathways.push_back({node_id_, ""});
  if (std::string own = OwnBase(*config, view_of.group, ctx); !own.empty()) {
    steering.self_base = absl::StrCat(own, "/", stream, "/");
  }
  // Nodes of this node's zone first (its viewers' zone, most likely), then the others, each
  // in node-id order: with more candidates than fit, the zone's own are kept.
  auto peers = UsablePeers(*config, view_of, ctx, /*require_eligible=*/false);
  // CS-1, O-8: for an OTT stream, steering and backups never disagree: a member the group
  // does not hold eligible (another timeline, no key, overloaded) is no pathway either.
  // (Nodes outside the group — edges relaying the stream — are judged by central alone.)
  if (const OttSettings ott = Settings(stream); ott.enabled) {
    if (auto group = config->ott_groups.find(ott.group); group != config->ott_groups.end()) {
      const auto& members = group->second.members;
      std::erase_if(peers, [&](const Usable& p) {
        return std::any_of(members.begin(), members.end(), [&](const OttMember& m) {
          return m.node == p.member->node && !m.eligible;
        });
      });
    }
  }
  const std::string& own_zone = config->settings.zone();
  std::stable_partition(peers.begin(), peers.end(),
                        [&](const Usable& p) { return p.member->zone == own_zone; });
  for (const Usable& peer : peers) {
    if (steering.pathways.size() >= kMaxPathways) break;
    steering.pathways.push_back({peer.member->node, absl::StrCat(peer.base, "/", stream, "/")});
  }
  return steering;
}

uint64_t OttGate::NextRotation(const std::string& group, const std::vector<Usable>& peers) const {
  // O-6: the rotation is counted per set of usable peers, so each set stays balanced however
  // requests for other streams or viewer classes interleave.
  std::string rotation_key = group;
  for (const auto& p : peers) absl::StrAppend(&rotation_key, "\n", p.base);
  absl::MutexLock lock(&mu_);
  if (rotations_.size() > 10'000 && !rotations_.count(rotation_key)) rotations_.clear();
  return rotations_[rotation_key]++;
}

std::vector<hls::Pathway> OttGate::MpdBackups(const http::RequestContext& ctx,
                                              const std::string& stream,
                                              const OttSettings& ott) const {
  std::vector<hls::Pathway> out;
  if (!ott.enabled || ClassifyPlayer(UserAgent(ctx)) != PlayerClass::kSwitches) return out;
  auto config = config_->Get();
  auto peers = UsablePeers(*config, ott, ctx);
  const std::string own = OwnBase(*config, ott.group, ctx);
  if (peers.empty() || own.empty()) return out;
  out.push_back({node_id_, absl::StrCat(own, "/", stream, "/")});
  // O-6, S-17: the backups rotate over the usable peers as HLS masters' do, so the viewers of a
  // failed node spread over the survivors instead of all landing on the first.
  for (size_t i : ChooseBackups(peers.size(), NextRotation(ott.group, peers))) {
    const Usable& peer = peers[i];
    out.push_back({peer.member->node, absl::StrCat(peer.base, "/", peer.member->stream, "/")});
  }
  return out;
}

std::string OttGate::OwnBase(const NodeConfig& config, const std::string& group,
                             const http::RequestContext& ctx) const {
  auto view = config.ott_groups.find(group);
  if (view == config.ott_groups.end()) return "";
  for (const auto& m : view->second.members) {
    if (m.node != node_id_) continue;
    BackupPeer self{m.node, m.http_base, m.https_base, m.address_public, m.shared_name, m.load};
    return BackupBase(self, ViewerPublic(ctx), ctx.ViewerScheme() == "https");
  }
  return "";
}

std::optional<std::string> OttGate::Pass(const NodeConfig& config, const std::string& stream,
                                         const std::string& group) const {
  const HeldKey* signing = nullptr;
  for (const auto& k : config.viewing_keys) {
    if (k.not_after_unix_ms == 0 && (!signing || k.created_unix_ms > signing->created_unix_ms)) {
      signing = &k;
    }
  }
  if (!signing) return std::nullopt;
  int64_t now = UnixMillis(clock_.Now()) / 1000;
  crypto::PassClaims claims;
  claims.key_id = signing->id;
  claims.stream = stream;
  claims.group = group;
  claims.issuer = node_id_;
  claims.issued_unix_s = now;
  claims.expires_unix_s = now + kPassLifetimeS;
  return crypto::SignPass(claims, crypto::ViewingKey{signing->id, signing->secret});
}

std::optional<std::string> OttGate::MasterWithBackups(
    const http::RequestContext& ctx, const std::string& stream, const OttSettings& ott,
    const hls::Variant& variant, const std::string& rendition, std::string_view uri_query) {
  if (!ott.enabled || ClassifyPlayer(UserAgent(ctx)) != PlayerClass::kSwitches) {
    return std::nullopt;
  }
  auto config = config_->Get();
  auto peers = UsablePeers(*config, ott, ctx);
  if (peers.empty()) return std::nullopt;
  const uint64_t index = NextRotation(ott.group, peers);
  std::vector<std::string> uris;
  for (size_t i : ChooseBackups(peers.size(), index)) {
    const Usable& p = peers[i];
    auto pass = Pass(*config, p.member->stream, ott.group);
    if (!pass) return std::nullopt;  // no viewing key yet: no backups
    uris.push_back(hls::WithQuery(
        absl::StrCat(p.base, "/", p.member->stream, "/", rendition, "/index.m3u8?pass=", *pass),
        uri_query));
  }
  return streamer::MasterWithBackups(variant, hls::WithQuery(rendition + "/index.m3u8", uri_query),
                                     uris);
}

bool OttGate::Overloaded(const NodeConfig& config, bool already_counted) {
  // O-16 refuses new viewers only: one that already moved here keeps its place.
  if (already_counted) return false;
  const auto& settings = config.settings;
  if (settings.has_alert_thresholds()) {
    const auto& t = settings.alert_thresholds();
    if (t.has_cpu_percent_error() &&
        cpu_.load() > static_cast<double>(t.cpu_percent_error().value())) {
      return true;
    }
    if (t.has_network_percent_error() && settings.has_cdn() &&
        settings.cdn().has_network_bandwidth_kbit()) {
      double capacity = static_cast<double>(settings.cdn().network_bandwidth_kbit().value());
      if (capacity > 0 && static_cast<double>(out_kbit_.load()) * 100 / capacity >
                              static_cast<double>(t.network_percent_error().value())) {
        return true;
      }
    }
  }
  if (settings.has_backup_session_limit() &&
      ExpireAndCountBackupSessions() >= settings.backup_session_limit().value()) {
    return true;
  }
  return false;
}

std::optional<http::Response> OttGate::AdmitPass(const http::RequestContext& ctx,
                                                 const std::string& stream, const std::string& pass,
                                                 std::string_view cors,
                                                 std::chrono::milliseconds active_window) {
  auto config = config_->Get();
  int64_t now_ms = UnixMillis(clock_.Now());
  auto claims = crypto::VerifyPass(pass, stream, AcceptedKeys(*config, now_ms), now_ms / 1000);
  if (!claims.ok()) {
    std::string reason(claims.status().message());
    pass_failures_.Increment(ReasonLabel(reason));
    http::Response res = http::ErrorResponse(http::Status::forbidden, "permission_denied",
                                             absl::StrCat("pass refused: ", reason));
    res.set(http::beast_http::field::cache_control, "no-store");
    http::AddCors(res, cors);
    return res;
  }
  std::string client = net::IpAddress::ClientKey(ctx.client.ToString());
  std::string key = absl::StrCat(client, "\n", stream, "\n",
                                 absl::Hash<absl::string_view>{}(AbslView(UserAgent(ctx))));
  const auto now = clock_.Monotonic();
  bool known;
  {
    absl::MutexLock lock(&mu_);
    auto it = backup_.find(key);
    known = it != backup_.end() && it->second.expires > now;
  }
  // A viewer that already switched here keeps its place; new ones are refused under
  // overload (O-16). Own viewers never carry a pass, so they are never refused.
  if (Overloaded(*config, known)) {
    refusals_.fetch_add(1);
    if (refusals_counter_) refusals_counter_->Increment();
    http::Response res = http::ErrorResponse(http::Status::too_many_requests, "overloaded",
                                             "this node takes no more viewers from other nodes");
    res.set(http::beast_http::field::retry_after, "10");
    res.set(http::beast_http::field::cache_control, "no-store");
    http::AddCors(res, cors);
    return res;
  }
  absl::MutexLock lock(&mu_);
  if (auto it = backup_.find(key); it != backup_.end()) {
    it->second.expires = now + active_window;
    return std::nullopt;
  }
  // Past either cap the viewer is served, not tracked.
  if (backup_.size() >= kMaxBackupSessions) return std::nullopt;
  size_t& held = backup_clients_[client];
  if (held >= kMaxBackupSessionsPerClient) return std::nullopt;
  if (held < kCountedBackupSessionsPerClient) ++counted_backup_;
  ++held;
  backup_.emplace(std::move(key), BackupSession{now + active_window, std::move(client)});
  return std::nullopt;
}

std::string OttGate::RedirectTarget(const http::RequestContext& ctx, const std::string& stream,
                                    const OttSettings& ott, std::string_view path_in_stream) {
  if (!ott.enabled) return "";
  auto config = config_->Get();
  auto peers = UsablePeers(*config, ott, ctx);
  if (peers.empty()) return "";
  auto least = std::min_element(peers.begin(), peers.end(), [](const Usable& a, const Usable& b) {
    return a.member->load < b.member->load;
  });
  auto pass = Pass(*config, least->member->stream, ott.group);
  if (!pass) return "";
  (void)stream;
  return absl::StrCat(least->base, "/", least->member->stream, "/", AbslView(path_in_stream),
                      "?pass=", *pass);
}

std::optional<size_t> ChooseArchiveHolder(const std::vector<ArchiveCandidate>& candidates,
                                          int64_t from_ms, int64_t to_ms) {
  std::optional<size_t> best;
  int64_t best_cover = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const auto& c = candidates[i];
    if (!c.range) continue;
    int64_t cover = std::min(to_ms, c.range->second) - std::max(from_ms, c.range->first);
    if (cover <= 0) continue;
    bool better = !best || cover > best_cover;
    if (best && cover == best_cover) {
      const auto& b = candidates[*best];
      better = (c.self && !b.self) || (c.self == b.self && c.load < b.load);
    }
    if (better) {
      best = i;
      best_cover = cover;
    }
  }
  return best;
}

OttGate::ArchiveDecision OttGate::ArchiveHolder(const http::RequestContext& ctx,
                                                const std::string& stream, const std::string& proto,
                                                int64_t from_ms, int64_t to_ms,
                                                std::optional<std::pair<int64_t, int64_t>> own,
                                                std::string_view path_in_stream) {
  ArchiveDecision decision;
  if (own && own->first <= from_ms && own->second >= to_ms) return decision;  // all here
  OttSettings ott = Settings(stream);
  auto config = config_->Get();
  std::vector<Usable> peers;
  if (ott.enabled) peers = UsablePeers(*config, ott, ctx, /*require_eligible=*/false);
  std::vector<ArchiveCandidate> candidates;
  candidates.push_back({true, 0, own});
  for (const auto& p : peers) {
    ArchiveCandidate c;
    c.load = p.member->load;
    if (auto it = p.member->archive.find(proto); it != p.member->archive.end())
      c.range = it->second;
    candidates.push_back(c);
  }
  auto best = ChooseArchiveHolder(candidates, from_ms, to_ms);
  if (!best) {
    decision.kind = ArchiveDecision::kNone;
    return decision;
  }
  if (*best == 0) return decision;
  const Usable& holder = peers[*best - 1];
  auto pass = Pass(*config, holder.member->stream, ott.group);
  if (!pass) return decision;  // no key to vouch for the viewer: serve what is here
  decision.kind = ArchiveDecision::kRedirect;
  decision.location = absl::StrCat(holder.base, "/", holder.member->stream, "/",
                                   AbslView(path_in_stream), "?pass=", *pass);
  return decision;
}

uint64_t OttGate::ExpireAndCountBackupSessions() {
  const auto now = clock_.Monotonic();
  absl::MutexLock lock(&mu_);
  absl::erase_if(backup_, [this, now](const auto& entry) {
    if (entry.second.expires > now) return false;
    auto held = backup_clients_.find(entry.second.client);
    if (held != backup_clients_.end()) {
      if (held->second <= kCountedBackupSessionsPerClient) --counted_backup_;
      if (--held->second == 0) backup_clients_.erase(held);
    }
    return true;
  });
  return counted_backup_;
}

std::vector<std::string> OttGate::held_key_ids() const {
  std::vector<std::string> ids;
  const auto config = config_->Get();  // held for the loop: a range-for would drop it
  for (const auto& k : config->viewing_keys) ids.push_back(k.id);
  return ids;
}

}  // namespace meshwork::streamer
