#include "streamer/agent/node_config.h"

#include <algorithm>

#include "common/crypto/base64url.h"
#include "common/log/log.h"

namespace meshwork::streamer {

std::shared_ptr<const NodeConfig> ApplyUpdate(const NodeConfig& current,
                                              const v1::ConfigUpdate& update) {
  auto next = std::make_shared<NodeConfig>(update.full() ? NodeConfig() : current);
  next->revision = update.revision();
  if (update.has_trusted_proxies()) {
    std::vector<net::Cidr> cidrs;
    for (const auto& text : update.trusted_proxies().cidrs()) {
      auto c = net::Cidr::Parse(text);
      if (c.ok()) cidrs.push_back(*c);
    }
    next->trusted_proxies = std::make_shared<const net::CidrSet>(std::move(cidrs));
  }
  if (update.has_node()) next->settings = update.node();
  if (update.has_streams()) {
    next->streams.clear();
    next->relayed.clear();
    next->publish_targets.clear();
    for (const auto& s : update.streams().streams()) {
      auto parsed = nlohmann::json::parse(s.config_json(), nullptr, /*allow_exceptions=*/false);
      if (!parsed.is_object()) continue;
      next->streams[s.name()] = ParseStreamConfig(s.name(), parsed);
      if (s.relay()) next->relayed.insert(s.name());
      if (s.publish_target()) next->publish_targets.insert(s.name());
    }
  }
  if (update.has_ott_groups()) {
    next->ott_groups.clear();
    for (const auto& g : update.ott_groups().groups()) {
      auto view = nlohmann::json::parse(g.view_json(), nullptr, /*allow_exceptions=*/false);
      if (!view.is_object()) continue;
      OttView parsed;
      parsed.group = g.group();
      if (auto uri = view.find("server_uri"); uri != view.end() && uri->is_string()) {
        parsed.steering_uri = uri->get<std::string>();
      }
      auto members = view.find("members");
      if (members == view.end() || !members->is_array()) continue;
      for (const auto& m : *members) {
        if (!m.is_object()) continue;
        OttMember member;
        // Each member read by type: a wrong type is a missing value, never an exception.
        auto text = [&m](const char* key) {
          auto it = m.find(key);
          return it != m.end() && it->is_string() ? it->get<std::string>() : std::string();
        };
        auto flag = [&m](const char* key) {
          auto it = m.find(key);
          return it != m.end() && it->is_boolean() && it->get<bool>();
        };
        member.node = text("node");
        member.stream = text("stream");
        member.eligible = flag("eligible");
        member.http_base = text("http_base");
        member.https_base = text("https_base");
        member.address_public = flag("address_public");
        member.shared_name = flag("shared_name");
        member.zone = text("zone");
        auto load = m.find("load");
        member.load = load != m.end() && load->is_number_unsigned() ? load->get<uint64_t>() : 0;
        if (auto archive = m.find("archive"); archive != m.end() && archive->is_object()) {
          for (const auto& [proto, range] : archive->items()) {
            if (proto.size() > 8 || !range.is_array() || range.size() != 2 ||
                !range[0].is_number_integer() || !range[1].is_number_integer()) {
              continue;
            }
            member.archive[proto] = {range[0].get<int64_t>(), range[1].get<int64_t>()};
          }
        }
        if (!member.node.empty() && !member.stream.empty()) parsed.members.push_back(member);
      }
      std::sort(parsed.members.begin(), parsed.members.end(),
                [](const OttMember& a, const OttMember& b) { return a.node < b.node; });
      next->ott_groups[g.group()] = std::move(parsed);
    }
  }
  if (update.has_viewing_keys()) {
    next->viewing_keys.clear();
    for (const auto& k : update.viewing_keys().keys()) {
      if (k.id().empty() || k.secret().empty()) continue;
      next->viewing_keys.push_back(
          {k.id(), k.secret(), k.not_after_unix_ms(), k.created_unix_ms()});
    }
  }
  if (update.has_access_keys()) {
    auto keys = std::make_shared<crypto::JwtKeySet>();
    for (const auto& k : update.access_keys().keys()) {
      absl::Status added = absl::InvalidArgumentError("unknown alg");
      if (k.alg() == "HS256") {
        auto secret = crypto::Base64UrlDecode(k.secret());
        added = secret ? keys->AddHs256(k.kid(), std::move(*secret))
                       : absl::InvalidArgumentError("the secret is not base64url");
      } else if (k.alg() == "ES256") {
        added = keys->AddEs256(k.kid(), k.public_key_pem());
      }
      if (!added.ok()) {
        log::Warn("access_key_skipped",
                  {{"kid", k.kid()}, {"error", std::string(added.message())}});
      }
    }
    next->access_keys = std::move(keys);
  }
  if (update.has_revoked_logins()) {
    next->revoked_logins.clear();
    for (const auto& r : update.revoked_logins().logins()) {
      next->revoked_logins[r.login()] = r.until_unix_s();
    }
  }
  return next;
}

}  // namespace meshwork::streamer
