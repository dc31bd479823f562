#include "central/model/config_service.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "central/model/access_keys.h"
#include "central/model/json_fields.h"
#include "central/model/object_codecs.h"
#include "central/model/steering_config.h"
#include "central/model/streamer_codec.h"
#include "central/model/streamer_proto.h"
#include "common/log/log.h"
#include "common/status/status_macros.h"
#include "common/status/status_map.h"
#include "meshwork/v1/role_names.h"

namespace meshwork::central {
namespace {

constexpr char kTrustedProxiesKey[] = "trusted_proxies";
constexpr char kSteeringKey[] = "steering";  // CS-1: the cluster-wide default

std::string Envelope(uint64_t revision, const json& value) {
  return json{{"revision", revision}, {"value", value}}.dump();
}

absl::StatusOr<std::pair<uint64_t, json>> OpenEnvelope(const std::string& text,
                                                       std::string_view what) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("revision") || !j.contains("value") ||
      !j["revision"].is_number_unsigned()) {
    return absl::DataLossError(absl::StrCat("stored ", std::string(what), " is unreadable"));
  }
  return std::make_pair(j["revision"].get<uint64_t>(), j["value"]);
}

// Validates a trusted_proxies value (array of CIDR strings, or null = empty).
absl::StatusOr<std::vector<std::string>> ValidateTrustedProxies(const json& value) {
  std::vector<std::string> out;
  if (value.is_null()) return out;
  if (!value.is_array())
    return InvalidField("trusted_proxies", "must be an array of CIDRs or null");
  std::vector<std::string> texts;
  for (size_t i = 0; i < value.size(); ++i) {
    std::string field = absl::StrCat("trusted_proxies[", i, "]");
    if (!value[i].is_string()) return InvalidField(field, "must be a CIDR string");
    auto cidr = net::Cidr::Parse(value[i].get<std::string>());
    if (!cidr.ok()) return InvalidField(field, std::string(cidr.status().message()));
    out.push_back(cidr->ToString());
  }
  return out;
}

std::shared_ptr<const net::CidrSet> MakeSet(const std::vector<std::string>& cidrs) {
  std::vector<net::Cidr> parsed;
  for (const auto& c : cidrs) {
    auto p = net::Cidr::Parse(c);
    if (p.ok()) parsed.push_back(*p);
  }
  return std::make_shared<const net::CidrSet>(std::move(parsed));
}

struct KindInfo {
  Kind store_kind;
  const char* noun;
  ObjectMap ClusterConfig::*records;
};

// C-10: each change to a section that nodes are sent by revision (zones, streams, access
// keys, revocations, viewing keys) also stamps the section with its revision, in a config
// key of its own. A central reading the store afresh dates the section by the stamp, not
// by its newest surviving object alone: a deletion it never saw still moves the section past
// what a node that missed it holds.
std::string SectionStampKey(std::string_view section) {
  return absl::StrCat("section/", absl::string_view(section.data(), section.size()));
}

Mutation SectionStamp(std::string_view section, uint64_t revision) {
  return Mutation{Kind::kConfig, SectionStampKey(section),
                  Envelope(revision, json(std::string(section)))};
}

// The section of `kind` that nodes are sent by revision, or empty (VOD assets).
std::string_view SectionOf(ObjectKind kind) {
  switch (kind) {
    case ObjectKind::kZone:
      return "zones";
    case ObjectKind::kStream:
      return "streams";
    case ObjectKind::kAccessKey:
      return "access_keys";
    case ObjectKind::kRevocation:
      return "revocations";
    case ObjectKind::kVod:
      return "";
  }
  return "";
}

constexpr std::string_view kViewingKeysSection = "viewing_keys";

const KindInfo& Info(ObjectKind kind) {
  static const KindInfo kZone{Kind::kZones, "zone", &ClusterConfig::zones};
  static const KindInfo kStream{Kind::kStreams, "stream", &ClusterConfig::streams};
  static const KindInfo kVod{Kind::kVod, "VOD asset", &ClusterConfig::vod};
  static const KindInfo kAccessKey{Kind::kAccessKeys, "access key", &ClusterConfig::access_keys};
  static const KindInfo kRevocation{Kind::kRevocations, "revocation", &ClusterConfig::revocations};
  switch (kind) {
    case ObjectKind::kZone:
      return kZone;
    case ObjectKind::kStream:
      return kStream;
    case ObjectKind::kVod:
      return kVod;
    case ObjectKind::kAccessKey:
      return kAccessKey;
    case ObjectKind::kRevocation:
      return kRevocation;
  }
  return kZone;
}

std::span<const std::string_view> Members(ObjectKind kind) {
  switch (kind) {
    case ObjectKind::kZone:
      return ZoneMembers();
    case ObjectKind::kStream:
      return StreamMembers();
    case ObjectKind::kVod:
      return VodMembers();
    case ObjectKind::kAccessKey:
      return AccessKeyMembers();
    case ObjectKind::kRevocation:
      return RevocationMembers();
  }
  return {};
}

absl::Status NotFound(ObjectKind kind, const std::string& name) {
  return absl::NotFoundError(absl::StrCat(Info(kind).noun, " \"", name, "\" does not exist"));
}

// Z-3: every route of `zone` must be free or already this zone's.
absl::Status CheckRouteOwnership(const json& zone, const ClusterConfig& config) {
  const std::string name = zone["name"].get<std::string>();
  std::map<std::string, std::string> owner;
  for (const auto& [other, record] : config.zones) {
    if (other == name) continue;
    for (const auto& r : record.object["routes"]) owner.emplace(r.get<std::string>(), other);
  }
  const json& routes = zone["routes"];
  for (size_t i = 0; i < routes.size(); ++i) {
    auto it = owner.find(routes[i].get<std::string>());
    if (it != owner.end()) {
      return WithField(
          absl::AlreadyExistsError(absl::StrCat("routes[", i, "]: ", it->first,
                                                " already belongs to zone \"", it->second, "\"")),
          absl::StrCat("routes[", i, "]"));
    }
  }
  return absl::OkStatus();
}

// Key rows: {"revision", "value": {"id", "secret_hex", "created_unix_ms", "not_after_unix_ms"}}.
json ViewingKeyValue(const ViewingKeyRecord& key) {
  return {{"id", key.id},
          {"secret_hex", absl::BytesToHexString(key.secret)},
          {"created_unix_ms", key.created_unix_ms},
          {"not_after_unix_ms", key.not_after_unix_ms}};
}

absl::StatusOr<ViewingKeyRecord> ReadViewingKey(const json& value, const std::string& row) {
  ViewingKeyRecord key;
  if (!value.is_object() || !value.contains("id") || !value["id"].is_string() ||
      !value.contains("secret_hex") || !value["secret_hex"].is_string()) {
    return absl::DataLossError(absl::StrCat("stored viewing key ", row, " is unreadable"));
  }
  key.id = value["id"].get<std::string>();
  const std::string& hex = value["secret_hex"].get_ref<const std::string&>();
  bool is_hex = !hex.empty() && hex.size() % 2 == 0 &&
                std::all_of(hex.begin(), hex.end(), [](char c) { return std::isxdigit(c); });
  if (!is_hex) {
    return absl::DataLossError(absl::StrCat("stored viewing key ", row, " is unreadable"));
  }
  key.secret = absl::HexStringToBytes(hex);
  for (const char* field : {"created_unix_ms", "not_after_unix_ms"}) {
    if (value.contains(field) && !value[field].is_number_integer()) {
      return absl::DataLossError(absl::StrCat("stored viewing key ", row, " is unreadable"));
    }
  }
  key.created_unix_ms = value.value("created_unix_ms", int64_t{0});
  key.not_after_unix_ms = value.value("not_after_unix_ms", int64_t{0});
  return key;
}

void SortKeys(std::vector<ViewingKeyRecord>& keys) {
  std::sort(keys.begin(), keys.end(), [](const ViewingKeyRecord& a, const ViewingKeyRecord& b) {
    return ViewingKeyNumber(a.id) > ViewingKeyNumber(b.id);  // newest first
  });
}

}  // namespace

uint64_t ViewingKeyNumber(const std::string& id) {
  if (id.size() < 2 || id[0] != 'k') return 0;
  uint64_t n = 0;
  for (char c : id.substr(1)) {
    if (c < '0' || c > '9') return 0;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n;
}

const ObjectMap& ClusterConfig::Objects(ObjectKind kind) const { return this->*Info(kind).records; }

absl::StatusOr<json> ConfigService::ValidateObject(ObjectKind kind, const json& body,
                                                   const std::string& name,
                                                   const ClusterConfig& current) const {
  switch (kind) {
    case ObjectKind::kZone: {
      ASSIGN_OR_RETURN(json zone, ValidateZone(body, name));
      RETURN_IF_ERROR(CheckRouteOwnership(zone, current));
      return zone;
    }
    case ObjectKind::kStream: {
      ASSIGN_OR_RETURN(json stream, ValidateStream(body, name));
      const json& zone = stream["placement"].value("zone", json());
      if (zone.is_string() && !current.zones.contains(zone.get<std::string>())) {
        return InvalidField("placement.zone",
                            absl::StrCat("names no zone (\"", zone.get<std::string>(), "\")"));
      }
      if (stream_filler_) stream_filler_(current, name, stream);
      return stream;
    }
    case ObjectKind::kVod:
    case ObjectKind::kAccessKey:
    case ObjectKind::kRevocation:
      return ValidateStored(kind, body, name);  // no checks across objects
  }
  return absl::InternalError("unknown kind");
}

namespace {
const absl::Status& StatusOf(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& StatusOf(const absl::StatusOr<T>& result) {
  return result.status();
}
constexpr int kWriteAttempts = 5;
}  // namespace

template <typename Fn>
auto ConfigService::Write(Fn&& fn) -> decltype(fn()) {
  std::optional<decltype(fn())> result;
  {
    absl::MutexLock lock(&write_mu_);
    for (int attempt = 1;; ++attempt) {
      CatchUpLocked();
      result.emplace(fn());
      if (attempt == kWriteAttempts || !absl::IsAborted(StatusOf(*result))) break;
      log::Info("config_write_retried",
                {{"attempt", attempt}, {"error", std::string(StatusOf(*result).message())}});
    }
  }
  CatchUpPending();
  return std::move(*result);
}

absl::StatusOr<std::shared_ptr<const ClusterConfig>> ConfigService::CommitObject(
    ObjectKind kind, const std::string& name, std::optional<json> canonical) {
  const KindInfo& info = Info(kind);
  auto next = std::make_shared<ClusterConfig>(*snapshot_.Get());
  uint64_t revision = snapshot_.Get()->revision + 1;
  std::optional<std::string> value;
  if (canonical) value = Envelope(revision, *canonical);
  std::vector<Mutation> mutations = {{info.store_kind, name, value}};
  if (std::string_view section = SectionOf(kind); !section.empty()) {
    mutations.push_back(SectionStamp(section, revision));
  }
  ASSIGN_OR_RETURN(next->revision, CommitLocked(mutations));
  ObjectMap& records = (*next).*info.records;
  if (canonical) {
    records[name] = ObjectRecord{std::move(*canonical), revision};
  } else {
    records.erase(name);
  }
  if (kind == ObjectKind::kZone) next->zones_revision = revision;
  if (kind == ObjectKind::kStream) next->streams_revision = revision;
  if (kind == ObjectKind::kAccessKey) next->access_keys_revision = revision;
  if (kind == ObjectKind::kRevocation) next->revocations_revision = revision;
  log::Info(canonical ? "object_saved" : "object_deleted",
            {{"kind", info.noun}, {"name", name}, {"revision", next->revision}});
  Publish(next);
  return std::shared_ptr<const ClusterConfig>(next);
}

absl::StatusOr<ConfigService::PutResult> ConfigService::PutObject(ObjectKind kind,
                                                                  const std::string& name,
                                                                  const json& body) {
  return Write([&]() -> absl::StatusOr<PutResult> {
    auto current = snapshot_.Get();
    auto it = current->Objects(kind).find(name);
    const json* stored = it == current->Objects(kind).end() ? nullptr : &it->second.object;
    if (kind == ObjectKind::kStream) RETURN_IF_ERROR(CheckStreamManagedMembers(body, stored));
    ASSIGN_OR_RETURN(json canonical, ValidateObject(kind, body, name, *current));
    // A replaced stream keeps its masks and versions (L-13, L-14).
    if (kind == ObjectKind::kStream) KeepStreamManagedMembers(canonical, stored);
    RETURN_IF_ERROR(CommitObject(kind, name, canonical).status());
    return PutResult{stored == nullptr, canonical};
  });
}

absl::StatusOr<json> ConfigService::PatchObject(ObjectKind kind, const std::string& name,
                                                const json& patch) {
  if (!patch.is_object()) return InvalidField("body", "a merge patch must be a JSON object");
  RETURN_IF_ERROR(RejectUnknownMembers(patch, Members(kind), ""));
  return Write([&]() -> absl::StatusOr<json> {
    auto current = snapshot_.Get();
    auto it = current->Objects(kind).find(name);
    if (it == current->Objects(kind).end()) return NotFound(kind, name);
    const json& stored = it->second.object;
    json merged;
    if (kind == ObjectKind::kStream) {
      RETURN_IF_ERROR(CheckStreamManagedMembers(patch, &stored));
      merged = MergeStreamPatch(stored, patch);
    } else {
      merged = stored;
      merged.merge_patch(patch);
    }
    ASSIGN_OR_RETURN(json canonical, ValidateObject(kind, merged, name, *current));
    if (kind == ObjectKind::kStream) KeepStreamManagedMembers(canonical, &stored);
    if (canonical == stored) return canonical;
    RETURN_IF_ERROR(CommitObject(kind, name, canonical).status());
    return canonical;
  });
}

absl::StatusOr<json> ConfigService::MutateObject(ObjectKind kind, const std::string& name,
                                                 const std::function<absl::Status(json&)>& edit) {
  return Write([&]() -> absl::StatusOr<json> {
    auto current = snapshot_.Get();
    auto it = current->Objects(kind).find(name);
    if (it == current->Objects(kind).end()) return NotFound(kind, name);
    json edited = it->second.object;
    RETURN_IF_ERROR(edit(edited));
    ASSIGN_OR_RETURN(json canonical, ValidateObject(kind, edited, name, *current));
    if (canonical == it->second.object) return canonical;
    RETURN_IF_ERROR(CommitObject(kind, name, canonical).status());
    return canonical;
  });
}

absl::Status ConfigService::DeleteObject(ObjectKind kind, const std::string& name) {
  return Write([&]() -> absl::Status {
    auto current = snapshot_.Get();
    if (!current->Objects(kind).contains(name)) return NotFound(kind, name);
    if (kind == ObjectKind::kZone) {
      // A stream placed in the zone would fail validation at its next write (an invalidation,
      // a mask, its timeline anchor, a re-placement): the zone goes only once none names it.
      std::vector<std::string> placed;
      for (const auto& [stream, entry] : current->Objects(ObjectKind::kStream)) {
        const json& zone = entry.object.contains("placement")
                               ? entry.object["placement"].value("zone", json())
                               : json();
        if (zone.is_string() && zone.get<std::string>() == name) placed.push_back(stream);
        if (placed.size() >= 10) break;
      }
      if (!placed.empty()) {
        // 409 (AlreadyExists: Aborted is the store's "retry the write")
        return absl::AlreadyExistsError(absl::StrCat(
            "zone \"", name, "\" is the placement.zone of stream(s) ", absl::StrJoin(placed, ", "),
            placed.size() >= 10 ? ", …" : "", ": change their placement first"));
      }
    }
    return CommitObject(kind, name, std::nullopt).status();
  });
}

namespace {

// Whether a stored stream or revocation that fails validation still has the shape its
// readers rely on (an object; a stream's placement.streamers absent or strings).
bool KeepAsStored(ObjectKind kind, const json& value) {
  if (!value.is_object()) return false;
  if (kind == ObjectKind::kRevocation) return true;
  if (kind != ObjectKind::kStream) return false;
  auto placement = value.find("placement");
  if (placement == value.end()) return true;
  if (!placement->is_object()) return false;
  auto streamers = placement->find("streamers");
  if (streamers == placement->end()) return true;
  return streamers->is_array() && std::all_of(streamers->begin(), streamers->end(),
                                              [](const json& id) { return id.is_string(); });
}

}  // namespace

absl::StatusOr<json> ConfigService::ValidateStored(ObjectKind kind, const json& value,
                                                   const std::string& name) {
  switch (kind) {
    case ObjectKind::kZone:
      return ValidateZone(value, name);
    case ObjectKind::kStream:
      return ValidateStream(value, name);
    case ObjectKind::kVod:
      return ValidateVod(value, name);
    case ObjectKind::kAccessKey:
      return ValidateAccessKey(value, name);
    case ObjectKind::kRevocation:
      return ValidateRevocation(value, name);
  }
  return absl::InternalError("unknown kind");
}

absl::StatusOr<std::shared_ptr<ClusterConfig>> ConfigService::ReadAll(Store* store) {
  // Stored text is checked as it is read; a JSON type error that slipped past is a row that
  // cannot be read, never an exception on the watch thread.
  try {
    return ReadAllUnchecked(store);
  } catch (const json::exception& e) {
    return absl::DataLossError(absl::StrCat("a stored row is unreadable: ", e.what()));
  }
}

absl::StatusOr<std::shared_ptr<ClusterConfig>> ConfigService::ReadAllUnchecked(Store* store) {
  auto config = std::make_shared<ClusterConfig>();
  config->revision = store->revision();
  ASSIGN_OR_RETURN(auto tp, store->Get(Kind::kConfig, kTrustedProxiesKey));
  if (tp) {
    ASSIGN_OR_RETURN(auto env, OpenEnvelope(*tp, "trusted_proxies"));
    ASSIGN_OR_RETURN(config->trusted_proxies, ValidateTrustedProxies(env.second));
    config->trusted_proxies_revision = env.first;
    config->trusted_set = MakeSet(config->trusted_proxies);
  }
  ASSIGN_OR_RETURN(auto steering, store->Get(Kind::kConfig, kSteeringKey));
  if (steering) {
    ASSIGN_OR_RETURN(auto env, OpenEnvelope(*steering, "steering"));
    json resolved;
    RETURN_IF_ERROR(ResolveSteering(json{{"steering", env.second}}, resolved));
    config->steering = (resolved.is_object() ? resolved.value("steering", json()) : json());
  }
  ASSIGN_OR_RETURN(auto rows, store->Scan(Kind::kStreamers));
  for (auto& [id, text] : rows) {
    ASSIGN_OR_RETURN(auto env, OpenEnvelope(text, absl::StrCat("streamer ", id)));
    StreamerRecord record;
    ASSIGN_OR_RETURN(record.object, ValidateStreamer(env.second, id));
    record.settings = StreamerToProto(record.object);
    record.revision = env.first;
    config->streamers.emplace(id, std::move(record));
  }
  for (ObjectKind kind : {ObjectKind::kZone, ObjectKind::kStream, ObjectKind::kVod,
                          ObjectKind::kAccessKey, ObjectKind::kRevocation}) {
    const KindInfo& info = Info(kind);
    ASSIGN_OR_RETURN(auto objects, store->Scan(info.store_kind));
    for (auto& [name, text] : objects) {
      ASSIGN_OR_RETURN(auto env, OpenEnvelope(text, absl::StrCat(info.noun, " ", name)));
      // Stored objects were valid when written, and are read back through the same checks
      // (a stream written before its later members existed gets their defaults, L-4, L-13).
      // A row that fails them (written by hand into etcd, or by another version) is left out
      // and logged: read as it is, it would stop every central reading it (C-10), and the API
      // can still overwrite or delete it.
      auto checked = ValidateStored(kind, env.second, name);
      if (!checked.ok()) {
        // A stream or a revocation that only fails today's checks (a member a newer central
        // added, mid-upgrade) is kept as stored when it has the shape everything reading it
        // relies on: left out, a stream would stop on every node and a revoked login would
        // work again (fail open).
        if (KeepAsStored(kind, env.second)) {
          log::Warn("config_row_kept_as_stored", {{"row", absl::StrCat(info.noun, " ", name)},
                                                  {"error", checked.status().ToString()}});
          checked = std::move(env.second);
        } else {
          log::Error("config_row_unreadable", {{"row", absl::StrCat(info.noun, " ", name)},
                                               {"error", checked.status().ToString()}});
          continue;
        }
      }
      ((*config).*info.records)[name] = ObjectRecord{*std::move(checked), env.first};
      if (kind == ObjectKind::kZone) {
        config->zones_revision = std::max(config->zones_revision, env.first);
      }
      if (kind == ObjectKind::kStream) {
        config->streams_revision = std::max(config->streams_revision, env.first);
      }
      if (kind == ObjectKind::kAccessKey) {
        config->access_keys_revision = std::max(config->access_keys_revision, env.first);
      }
      if (kind == ObjectKind::kRevocation) {
        config->revocations_revision = std::max(config->revocations_revision, env.first);
      }
    }
  }
  ASSIGN_OR_RETURN(auto keys, store->Scan(Kind::kKeys));
  for (auto& [id, text] : keys) {
    ASSIGN_OR_RETURN(auto env, OpenEnvelope(text, absl::StrCat("viewing key ", id)));
    ASSIGN_OR_RETURN(auto key, ReadViewingKey(env.second, id));
    config->viewing_keys.push_back(std::move(key));
    config->viewing_keys_revision = std::max(config->viewing_keys_revision, env.first);
  }
  SortKeys(config->viewing_keys);
  // The sections' own stamps: a deletion dates its section even with nothing left in it.
  const std::pair<std::string_view, uint64_t ClusterConfig::*> stamped[] = {
      {"zones", &ClusterConfig::zones_revision},
      {"streams", &ClusterConfig::streams_revision},
      {"access_keys", &ClusterConfig::access_keys_revision},
      {"revocations", &ClusterConfig::revocations_revision},
      {kViewingKeysSection, &ClusterConfig::viewing_keys_revision}};
  for (const auto& [section, revision] : stamped) {
    ASSIGN_OR_RETURN(auto stamp, store->Get(Kind::kConfig, SectionStampKey(section)));
    if (!stamp) continue;  // a store written before stamps: its survivors date it
    ASSIGN_OR_RETURN(auto env, OpenEnvelope(*stamp, SectionStampKey(section)));
    (*config).*revision = std::max((*config).*revision, env.first);
  }
  return config;
}

absl::StatusOr<std::unique_ptr<ConfigService>> ConfigService::Load(Store* store) {
  std::unique_ptr<ConfigService> service(new ConfigService(store));
  ASSIGN_OR_RETURN(auto config, ReadAll(store));
  service->snapshot_.Set(std::move(config));
  // C-10: another central wrote to the shared store; read it again and tell everyone.
  store->SetChangeListener([s = service.get()](uint64_t) {
    s->catch_up_pending_.store(true);
    s->CatchUpPending();
  });
  return service;
}

ConfigService::~ConfigService() { store_->SetChangeListener(nullptr); }

void ConfigService::CatchUpLocked() {
  const uint64_t stored = store_->revision();
  if (stored == snapshot_.Get()->revision) return;
  auto config = ReadAll(store_);
  if (!config.ok()) {
    log::Error("config_reload_failed", {{"error", config.status().ToString()}});
    return;
  }
  config_internal::KeepSectionRevisions(*snapshot_.Get(), **config);
  log::Info("config_reloaded", {{"from", snapshot_.Get()->revision}, {"to", (*config)->revision}});
  Publish(*std::move(config));
}

namespace config_internal {
void KeepSectionRevisions(const ClusterConfig& before, ClusterConfig& after) {
  // ReadAll dates a section by its newest surviving object, so another central's deletion
  // would leave its section's revision where it was (or lower), and nodes, which are sent a
  // section only when its revision passed theirs, would never hear of it (a deleted access
  // key kept working there). A section that changed is dated by the revision read.
  auto same = [](const ObjectMap& a, const ObjectMap& b) {
    return a.size() == b.size() &&
           std::equal(a.begin(), a.end(), b.begin(), [](const auto& x, const auto& y) {
             return x.first == y.first && x.second.revision == y.second.revision;
           });
  };
  const std::pair<ObjectKind, uint64_t ClusterConfig::*> sections[] = {
      {ObjectKind::kZone, &ClusterConfig::zones_revision},
      {ObjectKind::kStream, &ClusterConfig::streams_revision},
      {ObjectKind::kAccessKey, &ClusterConfig::access_keys_revision},
      {ObjectKind::kRevocation, &ClusterConfig::revocations_revision}};
  for (const auto& [kind, revision] : sections) {
    if (same(before.Objects(kind), after.Objects(kind))) {
      after.*revision = std::max(after.*revision, before.*revision);
    } else {
      after.*revision = std::max(after.revision, before.*revision);
    }
  }
  if (before.viewing_keys != after.viewing_keys) {
    after.viewing_keys_revision = std::max(after.revision, before.viewing_keys_revision);
  } else {
    after.viewing_keys_revision =
        std::max(after.viewing_keys_revision, before.viewing_keys_revision);
  }
}
}  // namespace config_internal

absl::StatusOr<uint64_t> ConfigService::CommitLocked(const std::vector<Mutation>& mutations) {
  auto revision = store_->CommitIf(mutations, snapshot_.Get()->revision);
  // Another central got there first: this one catches up, the caller may retry (HTTP 409).
  if (absl::IsAborted(revision.status())) CatchUpLocked();
  return revision;
}

void ConfigService::Subscribe(std::function<void(std::shared_ptr<const ClusterConfig>)> listener,
                              From from) {
  {
    // Under the lock every publication takes: the snapshot given now is the one the next
    // publication follows.
    absl::MutexLock lock(&write_mu_);
    if (from == From::kNow) listener(snapshot_.Get());
    listeners_.push_back(std::move(listener));
  }
  CatchUpPending();
}

void ConfigService::CatchUpPending() {
  // Whoever sets the flag and fails to take the lock leaves it to the holder, which comes
  // here after releasing it: the flag is seen by one of them.
  while (catch_up_pending_.load()) {
    if (!write_mu_.TryLock()) return;
    struct Unlock {
      absl::Mutex& mu;
      ~Unlock() { mu.Unlock(); }
    } unlock{write_mu_};
    catch_up_pending_.store(false);
    CatchUpLocked();
  }
}

json ConfigService::ConfigJson(const ClusterConfig& config) {
  return {{"trusted_proxies", config.trusted_proxies},
          {"steering", config.steering},
          {"revision", config.revision}};
}

void ConfigService::Publish(std::shared_ptr<const ClusterConfig> next) {
  snapshot_.Set(next);
  for (auto& listener : listeners_) listener(next);
}

absl::StatusOr<std::shared_ptr<const ClusterConfig>> ConfigService::PatchConfig(const json& patch) {
  if (!patch.is_object()) return InvalidField("body", "a merge patch must be a JSON object");
  RETURN_IF_ERROR(RejectUnknownMembers(patch, {"trusted_proxies", "steering", "revision"}, ""));
  return Write([&]() -> absl::StatusOr<std::shared_ptr<const ClusterConfig>> {
    auto current = snapshot_.Get();
    auto next = std::make_shared<ClusterConfig>(*current);
    std::vector<Mutation> mutations;
    uint64_t revision = snapshot_.Get()->revision + 1;
    if (auto it = patch.find("trusted_proxies"); it != patch.end()) {
      ASSIGN_OR_RETURN(next->trusted_proxies, ValidateTrustedProxies(*it));
      next->trusted_set = MakeSet(next->trusted_proxies);
      next->trusted_proxies_revision = revision;
      mutations.push_back(
          {Kind::kConfig, kTrustedProxiesKey, Envelope(revision, next->trusted_proxies)});
    }
    if (auto it = patch.find("steering"); it != patch.end()) {  // CS-1; null clears it
      json resolved;
      RETURN_IF_ERROR(ResolveSteering(json{{"steering", *it}}, resolved));
      next->steering = (resolved.is_object() ? resolved.value("steering", json()) : json());
      mutations.push_back({Kind::kConfig, kSteeringKey, Envelope(revision, next->steering)});
    }
    if (mutations.empty()) return current;  // nothing to change: no new revision
    ASSIGN_OR_RETURN(next->revision, CommitLocked(mutations));
    log::Info("config_changed", {{"revision", next->revision},
                                 {"trusted_proxies", json(next->trusted_proxies).dump()}});
    Publish(next);
    return std::shared_ptr<const ClusterConfig>(next);
  });
}

absl::StatusOr<std::shared_ptr<const ClusterConfig>> ConfigService::CommitStreamer(
    const std::string& id, const json& canonical) {
  auto next = std::make_shared<ClusterConfig>(*snapshot_.Get());
  uint64_t revision = snapshot_.Get()->revision + 1;
  StreamerRecord record{canonical, StreamerToProto(canonical), revision};
  ASSIGN_OR_RETURN(next->revision,
                   CommitLocked({{Kind::kStreamers, id, Envelope(revision, canonical)}}));
  next->streamers[id] = std::move(record);
  Publish(next);
  return std::shared_ptr<const ClusterConfig>(next);
}

absl::StatusOr<ConfigService::PutResult> ConfigService::PutStreamer(const std::string& id,
                                                                    const json& body) {
  ASSIGN_OR_RETURN(json canonical, ValidateStreamer(body, id));
  return Write([&]() -> absl::StatusOr<PutResult> {
    bool created = !snapshot_.Get()->streamers.contains(id);
    RETURN_IF_ERROR(CommitStreamer(id, canonical).status());
    log::Info("streamer_saved", {{"id", id}, {"created", created}});
    return PutResult{created, canonical};
  });
}

absl::StatusOr<json> ConfigService::PatchStreamer(const std::string& id, const json& patch) {
  return Write([&]() -> absl::StatusOr<json> {
    auto current = snapshot_.Get();
    auto it = current->streamers.find(id);
    if (it == current->streamers.end()) {
      return absl::NotFoundError(absl::StrCat("streamer \"", id, "\" does not exist"));
    }
    ASSIGN_OR_RETURN(json canonical, central::PatchStreamer(it->second.object, patch, id));
    if (canonical == it->second.object) return canonical;
    RETURN_IF_ERROR(CommitStreamer(id, canonical).status());
    log::Info("streamer_saved", {{"id", id}, {"created", false}});
    return canonical;
  });
}

absl::Status ConfigService::DeleteStreamer(const std::string& id) {
  return Write([&]() -> absl::Status {
    auto current = snapshot_.Get();
    if (!current->streamers.contains(id)) {
      return absl::NotFoundError(absl::StrCat("streamer \"", id, "\" does not exist"));
    }
    auto next = std::make_shared<ClusterConfig>(*current);
    ASSIGN_OR_RETURN(next->revision, CommitLocked({{Kind::kStreamers, id, std::nullopt}}));
    next->streamers.erase(id);
    log::Info("streamer_deleted", {{"id", id}, {"revision", next->revision}});
    Publish(next);
    return absl::OkStatus();
  });
}

absl::StatusOr<std::shared_ptr<const ClusterConfig>> ConfigService::UpdateViewingKeys(
    const std::function<std::optional<std::vector<ViewingKeyRecord>>(const ClusterConfig&)>&
        decide) {
  return Write([&]() -> absl::StatusOr<std::shared_ptr<const ClusterConfig>> {
    auto current = snapshot_.Get();
    std::optional<std::vector<ViewingKeyRecord>> keys = decide(*current);
    if (!keys) return current;
    SortKeys(*keys);
    if (*keys == current->viewing_keys) return current;
    uint64_t revision = snapshot_.Get()->revision + 1;
    std::vector<Mutation> mutations;
    std::set<std::string> kept;
    for (const auto& key : *keys) {
      kept.insert(key.id);
      mutations.push_back({Kind::kKeys, key.id, Envelope(revision, ViewingKeyValue(key))});
    }
    for (const auto& old : current->viewing_keys) {
      if (!kept.contains(old.id)) mutations.push_back({Kind::kKeys, old.id, std::nullopt});
    }
    mutations.push_back(SectionStamp(kViewingKeysSection, revision));
    auto next = std::make_shared<ClusterConfig>(*current);
    ASSIGN_OR_RETURN(next->revision, CommitLocked(mutations));
    next->viewing_keys = std::move(*keys);
    next->viewing_keys_revision = next->revision;
    // Ids only: a secret never reaches a log line.
    std::vector<std::string> ids;
    for (const auto& key : next->viewing_keys) ids.push_back(key.id);
    log::Info("viewing_keys_changed",
              {{"keys", absl::StrJoin(ids, ",")}, {"revision", next->revision}});
    Publish(next);
    return std::shared_ptr<const ClusterConfig>(next);
  });
}

absl::StatusOr<bool> ConfigService::EnsureStreamer(const std::string& id,
                                                   const std::string& hostname, v1::Role role) {
  return Write([&]() -> absl::StatusOr<bool> {
    if (snapshot_.Get()->streamers.contains(id)) return false;
    json body = {{"hostname", hostname}, {"role", std::string(v1::RoleName(role))}};
    ASSIGN_OR_RETURN(json canonical, ValidateStreamer(body, id));
    RETURN_IF_ERROR(CommitStreamer(id, canonical).status());
    log::Info("streamer_registered_new", {{"id", id}, {"hostname", hostname}});
    return true;
  });
}

}  // namespace meshwork::central
