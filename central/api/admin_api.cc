#include "central/api/admin_api.h"

#include "absl/strings/str_cat.h"
#include "boost/asio/post.hpp"
#include "central/model/json_fields.h"
#include "common/http/response.h"

namespace meshwork::central {

using http::Responder;
using http::RequestContext;
using http::Verb;
using nlohmann::json;

void AdminApi::OnPool(Responder responder, std::function<http::Response()> work) {
  boost::asio::post(*pool_, [responder = std::move(responder), work = std::move(work)]() mutable {
    responder.Send(work());
  });
}

json AdminApi::StreamerJson(const StreamerRecord& record) const {
  json out = record.object;
  out["status"] = registry_->StatusJson(record.object["id"].get<std::string>());
  return out;
}

void AdminApi::AddRoutes(http::Router& router) {
  const std::string api = kApiPrefix;

  router.Add({Verb::get}, api + "/config", [this](RequestContext&, Responder r) {
    r.Send(http::JsonResponse(http::Status::ok, ConfigService::ConfigJson(*config_->Current())));
  });

  router.Add({Verb::patch}, api + "/config", [this](RequestContext& ctx, Responder r) {
    auto body = ParseObjectBody(ctx.request.body());
    if (!body.ok()) return r.Send(http::ErrorResponse(body.status()));
    OnPool(std::move(r), [this, patch = std::move(*body)] {
      auto next = config_->PatchConfig(patch);
      if (!next.ok()) return http::ErrorResponse(next.status());
      return http::JsonResponse(http::Status::ok, ConfigService::ConfigJson(**next));
    });
  });

  router.Add({Verb::get}, api + "/streamers", [this](RequestContext&, Responder r) {
    json list = json::array();
    for (const auto& [id, record] : config_->Current()->streamers) {
      list.push_back(StreamerJson(record));  // std::map: sorted by id (M-1)
    }
    r.Send(http::JsonResponse(http::Status::ok, {{"streamers", list}}));
  });

  router.Add({Verb::get}, api + "/streamers/{id}", [this](RequestContext& ctx, Responder r) {
    auto config = config_->Current();
    auto it = config->streamers.find(ctx.params[0]);
    if (it == config->streamers.end()) {
      return r.Send(http::ErrorResponse(
          absl::NotFoundError(absl::StrCat("streamer \"", ctx.params[0], "\" does not exist"))));
    }
    r.Send(http::JsonResponse(http::Status::ok, StreamerJson(it->second)));
  });

  router.Add({Verb::put}, api + "/streamers/{id}", [this](RequestContext& ctx, Responder r) {
    auto body = ParseObjectBody(ctx.request.body());
    if (!body.ok()) return r.Send(http::ErrorResponse(body.status()));
    OnPool(std::move(r), [this, id = ctx.params[0], body = std::move(*body)] {
      auto result = config_->PutStreamer(id, body);
      if (!result.ok()) return http::ErrorResponse(result.status());
      json out = result->object;
      out["status"] = registry_->StatusJson(id);
      return http::JsonResponse(result->created ? http::Status::created : http::Status::ok, out);
    });
  });

  router.Add({Verb::patch}, api + "/streamers/{id}", [this](RequestContext& ctx, Responder r) {
    auto body = ParseObjectBody(ctx.request.body());
    if (!body.ok()) return r.Send(http::ErrorResponse(body.status()));
    OnPool(std::move(r), [this, id = ctx.params[0], patch = std::move(*body)] {
      auto result = config_->PatchStreamer(id, patch);
      if (!result.ok()) return http::ErrorResponse(result.status());
      json out = *result;
      out["status"] = registry_->StatusJson(id);
      return http::JsonResponse(http::Status::ok, out);
    });
  });

  router.Add({Verb::delete_}, api + "/streamers/{id}", [this](RequestContext& ctx, Responder r) {
    OnPool(std::move(r), [this, id = ctx.params[0]] {
      absl::Status status = config_->DeleteStreamer(id);
      if (!status.ok()) return http::ErrorResponse(status);
      return http::MakeResponse(http::Status::no_content, "", "application/json");
    });
  });
}

}  // namespace meshwork::central
