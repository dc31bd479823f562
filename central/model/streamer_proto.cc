#include "central/model/streamer_proto.h"

#include "meshwork/v1/role_names.h"

namespace meshwork::central {

using nlohmann::json;

v1::StreamerSettings StreamerToProto(const json& c) {
  v1::StreamerSettings s;
  s.set_id(c.value("id", ""));
  s.set_hostname(c.value("hostname", ""));
  v1::Role role = v1::ROLE_UNSPECIFIED;
  v1::ParseRole(c.value("role", ""), &role);
  s.set_role(role);
  if (c.contains("zone") && c["zone"].is_string()) s.set_zone(c["zone"].get<std::string>());
  const json& cdn = c.at("cdn");
  if (cdn["playback_session_limit"].is_number()) {
    s.mutable_cdn()->mutable_playback_session_limit()->set_value(
        cdn["playback_session_limit"].get<uint64_t>());
  }
  if (cdn["playback_bandwidth_kbit"].is_number()) {
    s.mutable_cdn()->mutable_playback_bandwidth_kbit()->set_value(
        cdn["playback_bandwidth_kbit"].get<uint64_t>());
  }
  if (cdn["network_bandwidth_kbit"].is_number()) {
    s.mutable_cdn()->mutable_network_bandwidth_kbit()->set_value(
        cdn["network_bandwidth_kbit"].get<uint64_t>());
  }
  if (c["backup_session_limit"].is_number()) {
    s.mutable_backup_session_limit()->set_value(c["backup_session_limit"].get<uint64_t>());
  }
  const json& t = c.at("alert_thresholds");
  if (t["cpu_percent_error"].is_number()) {
    s.mutable_alert_thresholds()->mutable_cpu_percent_error()->set_value(
        static_cast<uint64_t>(t["cpu_percent_error"].get<double>()));
  }
  if (t["network_percent_error"].is_number()) {
    s.mutable_alert_thresholds()->mutable_network_percent_error()->set_value(
        static_cast<uint64_t>(t["network_percent_error"].get<double>()));
  }
  return s;
}

}  // namespace meshwork::central
