#include "central/cluster/config_push.h"

namespace meshwork::central {

v1::ConfigUpdate BuildConfigUpdate(const ClusterConfig& config, const std::string& node_id,
                                   uint64_t since_revision, const v1::OttGroupViews* ott_views) {
  v1::ConfigUpdate update;
  update.set_revision(config.revision);
  bool full = since_revision == 0 || since_revision > config.revision;
  update.set_full(full);
  if (full || config.trusted_proxies_revision > since_revision) {
    for (const auto& c : config.trusted_proxies) update.mutable_trusted_proxies()->add_cidrs(c);
    // An empty list must still be distinguishable from "unchanged".
    update.mutable_trusted_proxies();
  }
  auto node = config.streamers.find(node_id);
  // The node's own record changed (its role among others): the stream set depends on it.
  const bool node_changed =
      node != config.streamers.end() && node->second.revision > since_revision;
  if (full || config.streams_revision > since_revision || node_changed) {
    // Every stream placed on this node, as configured (C-2); an empty set removes them all.
    // An edge gets every other stream too, marked for relay (S-19: it serves any stream).
    bool edge =
        node != config.streamers.end() && node->second.settings.role() == meshwork::v1::ROLE_EDGE;
    auto* set = update.mutable_streams();
    for (const auto& [name, record] : config.streams) {
      bool placed = false;
      for (const auto& id : record.object["placement"]["streamers"]) placed |= id == node_id;
      bool target = false;  // S-23: an origin the stream's ingest nodes publish to
      if (auto publish = record.object.find("publish"); publish != record.object.end()) {
        for (const auto& t : *publish) target |= t.value("to", "") == node_id;
      }
      if (!placed && !target && !edge) continue;
      auto* s = set->add_streams();
      s->set_name(name);
      s->set_config_json(record.object.dump());
      s->set_publish_target(!placed && target);
      s->set_relay(!placed && !target);
    }
  }
  if (full || config.viewing_keys_revision > since_revision) {
    // O-7: every key the node must accept; an empty list removes them all.
    auto* keys = update.mutable_viewing_keys();
    for (const auto& k : config.viewing_keys) {
      auto* key = keys->add_keys();
      key->set_id(k.id);
      key->set_secret(k.secret);
      key->set_not_after_unix_ms(k.not_after_unix_ms);
      key->set_created_unix_ms(k.created_unix_ms);
    }
  }
  if (full || config.access_keys_revision > since_revision) {
    // every viewer token key; an empty list removes them all.
    auto* keys = update.mutable_access_keys();
    for (const auto& [kid, record] : config.access_keys) {
      auto* key = keys->add_keys();
      key->set_kid(kid);
      key->set_alg(record.object.value("alg", ""));
      key->set_secret(record.object.value("secret", ""));
      key->set_public_key_pem(record.object.value("public_key_pem", ""));
    }
  }
  if (full || config.revocations_revision > since_revision) {
    // every revoked login; an empty list clears them all.
    auto* revoked = update.mutable_revoked_logins();
    for (const auto& [login, record] : config.revocations) {
      auto* out = revoked->add_logins();
      out->set_login(login);
      // 0: until cleared (a null in the record).
      const nlohmann::json until = record.object.value("until_unix_s", nlohmann::json());
      out->set_until_unix_s(until.is_number_integer() ? until.get<int64_t>() : 0);
    }
  }
  if (full) {
    *update.mutable_ott_groups() = ott_views ? *ott_views : v1::OttGroupViews();
  }
  if (node != config.streamers.end() && (full || node_changed)) {
    *update.mutable_node() = node->second.settings;
  }
  return update;
}

v1::ConfigUpdate OttViewsUpdate(uint64_t revision, const v1::OttGroupViews& views) {
  v1::ConfigUpdate update;
  update.set_revision(revision);
  update.set_full(false);
  *update.mutable_ott_groups() = views;
  return update;
}

bool HasSections(const v1::ConfigUpdate& update) {
  return update.full() || update.has_trusted_proxies() || update.has_node() ||
         update.has_streams() || update.has_ott_groups() || update.has_viewing_keys() ||
         update.has_access_keys() || update.has_revoked_logins() || update.has_masks() ||
         update.has_cache_versions();
}

bool IsEmptyUpdate(const v1::ConfigUpdate& update, uint64_t since_revision) {
  return !HasSections(update) && update.revision() == since_revision;
}

}  // namespace meshwork::central
