#include "central/model/access_config.h"

#include <set>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "central/model/json_fields.h"
#include "common/net/cidr.h"
#include "common/status/absl_view.h"
#include "common/status/status_macros.h"
#include "common/status/status_map.h"

namespace meshwork::central {

namespace {

constexpr std::string_view kAccessMembers[] = {"mode", "allow_cidrs", "deny_cidrs",
                                               "max_sessions_per_login", "backend"};

// A list of CIDRs in canonical form, duplicates dropped, order kept.
absl::StatusOr<nlohmann::json> CidrList(const nlohmann::json& access, std::string_view key) {
  const std::string field = absl::StrCat("access.", AbslView(key));
  nlohmann::json out = nlohmann::json::array();
  auto it = access.find(key);
  if (it == access.end() || it->is_null()) return out;
  if (!it->is_array() || it->size() > kMaxAccessCidrs) {
    return InvalidField(field,
                        absl::StrCat("must be an array of at most ", kMaxAccessCidrs, " CIDRs"));
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < it->size(); ++i) {
    const std::string element = absl::StrCat(field, "[", i, "]");
    const nlohmann::json& v = (*it)[i];
    if (!v.is_string()) return InvalidField(element, "must be a CIDR string");
    auto cidr = net::Cidr::Parse(v.get<std::string>());
    if (!cidr.ok()) return InvalidField(element, std::string(cidr.status().message()));
    std::string canonical = cidr->ToString();
    if (seen.insert(canonical).second) out.push_back(std::move(canonical));
  }
  return out;
}

}  // namespace

absl::Status ResolveAccess(const nlohmann::json& body, nlohmann::json& out) {
  auto it = body.find("access");
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_object()) {
    return InvalidField("access", "must be an object {mode, allow_cidrs, deny_cidrs}");
  }
  RETURN_IF_ERROR(RejectUnknownMembers(*it, kAccessMembers, "access"));
  nlohmann::json access;
  access["mode"] = "open";
  if (auto m = it->find("mode"); m != it->end() && !m->is_null()) {
    if (*m == "backend") {
      return InvalidField("access.mode",
                          "\"backend\" (an auth backend, A-6) is not supported by this version");
    }
    if (*m != "open" && *m != "token") {
      return InvalidField("access.mode", "must be \"open\" or \"token\"");
    }
    access["mode"] = *m;
  }
  if (auto b = it->find("backend"); b != it->end() && !b->is_null()) {
    return InvalidField("access.backend", "an auth backend (A-6) is not supported by this version");
  }
  access["max_sessions_per_login"] = nullptr;
  if (auto s = it->find("max_sessions_per_login"); s != it->end() && !s->is_null()) {
    if (!s->is_number_integer() || s->get<int64_t>() < 1 ||
        s->get<int64_t>() > kMaxSessionsPerLogin) {
      return InvalidField(
          "access.max_sessions_per_login",
          absl::StrCat("must be null or an integer in [1, ", kMaxSessionsPerLogin, "]"));
    }
    access["max_sessions_per_login"] = *s;
  }
  ASSIGN_OR_RETURN(access["allow_cidrs"], CidrList(*it, "allow_cidrs"));
  ASSIGN_OR_RETURN(access["deny_cidrs"], CidrList(*it, "deny_cidrs"));
  out["access"] = std::move(access);
  return absl::OkStatus();
}

}  // namespace meshwork::central
