// viewer sessions as the nodes report them, and revoked logins.
//
//   GET    /central/api-v4/sessions?stream=&login=   {"sessions": [{"node", "stream", "login",
//                                                     "protocol", "client", "since"}]} from
//                                                     the online nodes' latest reports
//   POST   /central/api-v4/sessions/revoke           {"login", "until_unix_s"?} (absent or
//                                                     null: until cleared; a time: at most 30
//                                                     days ahead): every node refuses the
//                                                     login (403 `revoked`)
//   GET    /central/api-v4/sessions/revoked          {"revoked": [{"login", "until_unix_s",
//                                                     "active"}]}
//   DELETE /central/api-v4/sessions/revoke/{login}   clears a revocation
#include "absl/strings/str_cat.h"
#include "central/api/admin_api.h"
#include "central/model/access_keys.h"
#include "central/model/json_fields.h"
#include "common/http/framing.h"
#include "common/http/response.h"
#include "common/status/status_map.h"
#include "common/time/rfc3339.h"

namespace meshwork::central {

namespace {

using http::RequestContext;
using http::Responder;
using http::Verb;
using nlohmann::json;

constexpr int64_t kMaxRevocationS = 30 * 86'400;

int64_t UnixSeconds(const Clock& clock) {
  return std::chrono::duration_cast<std::chrono::seconds>(clock.Now().time_since_epoch()).count();
}

}  // namespace

void AdminApi::AddSessionRoutes(http::Router& router) {
  const std::string api = std::string(kApiPrefix) + "/sessions";
  Add(router, {Verb::get}, api, [this](RequestContext& ctx, Responder r) {
    const auto stream = ctx.QueryParam("stream");
    const auto login = ctx.QueryParam("login");
    json sessions = json::array();
    for (const auto& [id, node] : registry_->OttNodeStates()) {
      if (!node.online || !node.has_report) continue;
      for (const auto& s : node.report.login_sessions()) {
        if ((stream && s.stream() != *stream) || (login && s.login() != *login)) continue;
        sessions.push_back({{"node", id},
                            {"stream", s.stream()},
                            {"login", s.login()},
                            {"protocol", s.protocol()},
                            {"client", s.client()},
                            {"since", Rfc3339Millis(s.since_unix_ms())}});
      }
    }
    r.Send(http::JsonResponse(http::Status::ok, {{"sessions", sessions}}));
  });
  Add(router, {Verb::post}, api + "/revoke", [this](RequestContext& ctx, Responder r) {
    auto body = ParseObjectBody(ctx.request.body());
    if (!body.ok()) return r.Send(http::ErrorResponse(body.status()));
    auto login = body->find("login");
    if (login == body->end() || !login->is_string() || !IsValidLogin(login->get<std::string>())) {
      return r.Send(http::ErrorResponse(
          InvalidField("login", "must be 1…256 bytes without control characters")));
    }
    const int64_t now = UnixSeconds(registry_->clock());
    // by default a revocation holds until it is cleared (a login's tokens may outlive
    // any fixed term); a time, when given, is within the next 30 days.
    if (!body->contains("until_unix_s")) (*body)["until_unix_s"] = nullptr;
    const json& until = (*body)["until_unix_s"];
    if (!until.is_null() && (!until.is_number_integer() || until.get<int64_t>() <= now ||
                             until.get<int64_t>() > now + kMaxRevocationS)) {
      return r.Send(http::ErrorResponse(InvalidField(
          "until_unix_s", "must be null (until cleared) or a Unix time within the next 30 days")));
    }
    OnPool(std::move(r), [this, name = login->get<std::string>(), object = std::move(*body)] {
      auto result = config_->PutObject(ObjectKind::kRevocation, name, object);
      if (!result.ok()) return http::ErrorResponse(result.status());
      return http::JsonResponse(result->created ? http::Status::created : http::Status::ok,
                                result->object);
    });
  });
  Add(router, {Verb::get}, api + "/revoked", [this](RequestContext&, Responder r) {
    const int64_t now = UnixSeconds(registry_->clock());
    json list = json::array();
    const auto config = config_->Current();
    for (const auto& [login, record] : config->revocations) {
      json entry = record.object;
      const json until = record.object.value("until_unix_s", json());
      entry["active"] =
          until.is_null() || (until.is_number_integer() && now < until.get<int64_t>());
      list.push_back(std::move(entry));
    }
    r.Send(http::JsonResponse(http::Status::ok, {{"revoked", list}}));
  });
  Add(router, {Verb::delete_}, api + "/revoke/{login...}",
      [this](RequestContext& ctx, Responder r) {
        // The login as stored: meshctl escapes it (an address's '@', spaces, non-ASCII).
        std::optional<std::string> login = http::PercentDecoded(ctx.params[0]);
        if (!login || !IsValidLogin(*login)) {
          return r.Send(http::ErrorResponse(InvalidField(
              "login", "must be percent-encoded UTF-8, 1…256 bytes without control characters")));
        }
        OnPool(std::move(r), [this, login = std::move(*login)] {
          absl::Status status = config_->DeleteObject(ObjectKind::kRevocation, login);
          if (!status.ok()) return http::ErrorResponse(status);
          return http::MakeResponse(http::Status::no_content, "", "application/json");
        });
      });
}

}  // namespace meshwork::central
