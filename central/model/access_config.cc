#include "central/model/access_config.h"

#include <set>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "central/model/json_fields.h"
#include "common/net/cidr.h"
#include "common/net/http_url.h"
#include "common/status/absl_view.h"
#include "common/status/status_macros.h"
#include "common/status/status_map.h"

namespace meshwork::central {

namespace {

constexpr std::string_view kAccessMembers[] = {"mode", "allow_cidrs", "deny_cidrs",
                                               "max_sessions_per_login", "backend"};
constexpr std::string_view kBackendMembers[] = {"url", "timeout_ms", "on_error", "ttl_s"};

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

// An integer member of `backend` in [lo, hi], or `fallback` when absent.
absl::StatusOr<int64_t> BackendInt(const nlohmann::json& backend, const char* key, int64_t lo,
                                   int64_t hi, int64_t fallback) {
  auto it = backend.find(key);
  if (it == backend.end() || it->is_null()) return fallback;
  if (!it->is_number_integer() || it->get<int64_t>() < lo || it->get<int64_t>() > hi) {
    return InvalidField(absl::StrCat("access.backend.", key),
                        absl::StrCat("must be an integer in [", lo, ", ", hi, "]"));
  }
  return it->get<int64_t>();
}

// the auth backend, canonical with every default written out; null when absent.
absl::StatusOr<nlohmann::json> ResolveBackend(const nlohmann::json& access) {
  auto it = access.find("backend");
  if (it == access.end() || it->is_null()) return nlohmann::json();
  if (!it->is_object()) {
    return InvalidField("access.backend", "must be an object {url, timeout_ms, on_error, ttl_s}");
  }
  RETURN_IF_ERROR(RejectUnknownMembers(*it, kBackendMembers, "access.backend"));
  auto url = it->find("url");
  if (url == it->end() || !url->is_string()) {
    return InvalidField("access.backend.url", "is required: the http:// URL to ask");
  }
  if (auto parsed = net::ParseHttpUrl(url->get<std::string>()); !parsed.ok()) {
    return InvalidField("access.backend.url", std::string(parsed.status().message()));
  }
  nlohmann::json out;
  out["url"] = *url;
  ASSIGN_OR_RETURN(out["timeout_ms"], BackendInt(*it, "timeout_ms", 1, kMaxBackendTimeoutMs,
                                                 kDefaultBackendTimeoutMs));
  ASSIGN_OR_RETURN(out["ttl_s"], BackendInt(*it, "ttl_s", 1, kMaxBackendTtlS, kDefaultBackendTtlS));
  out["on_error"] = "deny";
  if (auto e = it->find("on_error"); e != it->end() && !e->is_null()) {
    if (*e != "deny" && *e != "allow") {
      return InvalidField("access.backend.on_error", "must be \"deny\" or \"allow\"");
    }
    out["on_error"] = *e;
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
    if (*m != "open" && *m != "token" && *m != "backend") {
      return InvalidField("access.mode", "must be \"open\", \"token\" or \"backend\"");
    }
    access["mode"] = *m;
  }
  ASSIGN_OR_RETURN(nlohmann::json backend, ResolveBackend(*it));
  if (access["mode"] == "backend" && backend.is_null()) {
    return InvalidField("access.backend", "is required when access.mode is \"backend\"");
  }
  access["backend"] = std::move(backend);
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
