#include "central/api/admin_api.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "boost/asio/post.hpp"
#include "central/model/access_keys.h"
#include "central/model/json_fields.h"
#include "central/model/object_codecs.h"
#include "common/http/response.h"
#include "common/net/ip_address.h"
#include "common/status/status_map.h"

namespace meshwork::central {

using http::RequestContext;
using http::Responder;
using http::Verb;
using nlohmann::json;

namespace {

// A change asked by a page of another site (CSRF), or nothing. Browsers send Origin with
// every cross-origin POST/PUT/PATCH/DELETE and Sec-Fetch-Site with every request; tools
// (meshctl, curl) send neither.
std::optional<http::Response> CrossSiteRefusal(const http::Request& request) {
  const auto method = request.method();
  if (method == Verb::get || method == Verb::head || method == Verb::options) return std::nullopt;
  auto refuse = [](std::string message) {
    http::Response res = http::ErrorResponse(absl::PermissionDeniedError(std::move(message)));
    res.set(http::beast_http::field::cache_control, "no-store");
    return res;
  };
  if (auto site = request.find("Sec-Fetch-Site"); site != request.end()) {
    if (site->value() == "cross-site" || site->value() == "same-site") {
      return refuse("a change from another site's page is refused (Sec-Fetch-Site)");
    }
  }
  auto origin = request.find(http::beast_http::field::origin);
  if (origin == request.end()) return std::nullopt;
  std::string_view from = origin->value();
  for (std::string_view scheme : {"http://", "https://"}) {
    if (from.starts_with(scheme)) from.remove_prefix(scheme.size());
  }
  // This central's own name: its Host, or the one a front proxy says the browser used.
  for (auto field : {"Host", "X-Forwarded-Host"}) {
    auto host = request.find(field);
    if (host != request.end() &&
        absl::EqualsIgnoreCase(absl::string_view(from.data(), from.size()),
                               absl::string_view(host->value().data(), host->value().size()))) {
      return std::nullopt;
    }
  }
  return refuse("a change from another site's page is refused (Origin is not this central)");
}

}  // namespace

std::optional<http::Response> AdminApi::Refusal(const http::Request& request) const {
  if (auto cross_site = CrossSiteRefusal(request)) return cross_site;
  if (api_tokens_ == nullptr) return std::nullopt;
  auto header = request.find(http::beast_http::field::authorization);
  const bool presented = header != request.end();
  if (presented && api_tokens_->Accepts(crypto::BearerToken(header->value()))) {
    return std::nullopt;
  }
  // RFC 6750 §3: the challenge, with `invalid_token` when one was presented.
  http::Response res = http::ErrorResponse(absl::UnauthenticatedError(
      presented ? "the token in Authorization was not accepted (unknown, revoked or malformed)"
                : "this API needs a token: Authorization: Bearer <token>"));
  res.set(http::beast_http::field::www_authenticate,
          presented ? R"(Bearer realm="meshwork", error="invalid_token")"
                    : R"(Bearer realm="meshwork")");
  res.set(http::beast_http::field::cache_control, "no-store");
  return res;
}

void AdminApi::Add(http::Router& router, std::vector<Verb> methods, std::string_view pattern,
                   http::Handler handler) {
  // Checked twice over: before a body is read (the gate: a refused client holds none of the
  // listener's body budget) and before the handler runs.
  router.Add(
      std::move(methods), pattern,
      [this, handler = std::move(handler)](RequestContext& ctx, Responder r) {
        if (auto refusal = Refusal(ctx.request)) return r.Send(std::move(*refusal));
        handler(ctx, std::move(r));
      },
      [this](const http::Request& head) { return Refusal(head); });
}

void AdminApi::OnPool(Responder responder, std::function<http::Response()> work) {
  boost::asio::post(*pool_, [responder = std::move(responder), work = std::move(work)]() mutable {
    responder.Send(work());
  });
}

namespace {

http::Response MethodNotAllowed(std::string_view method, std::string_view allow) {
  http::Response res = http::ErrorResponse(
      http::Status::method_not_allowed, "method_not_allowed",
      absl::StrCat(std::string(method), " is not allowed here; allowed: ", std::string(allow)));
  res.set(http::beast_http::field::allow, allow);
  return res;
}

struct StreamSubpath {
  enum Kind { kMasks, kMask, kInvalidate } kind;
  std::string stream;
  std::string mask_id;
};

// "{stream}/masks", "{stream}/masks/{id}" or "{stream}/invalidate" (the stream having at
// least one segment).
std::optional<StreamSubpath> ParseStreamSubpath(std::string_view path) {
  size_t last = path.rfind('/');
  if (last == std::string_view::npos || last == 0) return std::nullopt;
  std::string_view tail = path.substr(last + 1);
  std::string_view head = path.substr(0, last);
  if (tail == "masks") return StreamSubpath{StreamSubpath::kMasks, std::string(head), ""};
  if (tail == "invalidate") {
    return StreamSubpath{StreamSubpath::kInvalidate, std::string(head), ""};
  }
  size_t before = head.rfind('/');
  if (before == std::string_view::npos || before == 0 || head.substr(before + 1) != "masks") {
    return std::nullopt;
  }
  return StreamSubpath{StreamSubpath::kMask, std::string(head.substr(0, before)),
                       std::string(tail)};
}

absl::Status NoSuchStream(const std::string& name) {
  return absl::NotFoundError(absl::StrCat("stream \"", name, "\" does not exist"));
}

bool IsBlank(std::string_view body) {
  return body.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

// What the API shows of a stored object: an access key's secret never leaves central (A-4).
json Shown(ObjectKind kind, const json& object) {
  return kind == ObjectKind::kAccessKey ? AccessKeyPublicJson(object) : object;
}

}  // namespace

json AdminApi::StreamerJson(const StreamerRecord& record) const {
  json out = record.object;
  out["status"] = registry_->StatusJson(record.object["id"].get<std::string>());
  return out;
}

void AdminApi::AddObjectRoutes(http::Router& router, const std::string& collection,
                               ObjectKind kind) {
  const std::string path = std::string(kApiPrefix) + "/" + collection;
  Add(router, {Verb::get}, path, [this, kind, collection](RequestContext&, Responder r) {
    json list = json::array();
    // Held for the loop: a range-for does not keep a temporary snapshot alive, and another
    // central's change can replace the current one at any moment (C-10).
    const auto config = config_->Current();
    for (const auto& [name, record] : config->Objects(kind)) {
      list.push_back(Shown(kind, record.object));  // std::map: sorted by name (M-1)
    }
    r.Send(http::JsonResponse(http::Status::ok, {{collection, list}}));
  });
  const std::string item = path + "/{name...}";
  Add(router, {Verb::get}, item, [this, kind](RequestContext& ctx, Responder r) {
    if (kind == ObjectKind::kStream && ServeStreamSubresource(ctx, r, ctx.params[0])) return;
    auto config = config_->Current();
    auto it = config->Objects(kind).find(ctx.params[0]);
    if (it == config->Objects(kind).end()) {
      return r.Send(http::ErrorResponse(
          absl::NotFoundError(absl::StrCat("\"", ctx.params[0], "\" does not exist"))));
    }
    r.Send(http::JsonResponse(http::Status::ok, Shown(kind, it->second.object)));
  });
  Add(router, {Verb::put}, item, [this, kind](RequestContext& ctx, Responder r) {
    auto body = ParseObjectBody(ctx.request.body());
    if (!body.ok()) return r.Send(http::ErrorResponse(body.status()));
    OnPool(std::move(r), [this, kind, name = ctx.params[0], body = std::move(*body)] {
      auto result = config_->PutObject(kind, name, body);
      if (!result.ok()) return http::ErrorResponse(result.status());
      return http::JsonResponse(result->created ? http::Status::created : http::Status::ok,
                                Shown(kind, result->object));
    });
  });
  Add(router, {Verb::patch}, item, [this, kind](RequestContext& ctx, Responder r) {
    auto body = ParseObjectBody(ctx.request.body());
    if (!body.ok()) return r.Send(http::ErrorResponse(body.status()));
    OnPool(std::move(r), [this, kind, name = ctx.params[0], patch = std::move(*body)] {
      auto result = config_->PatchObject(kind, name, patch);
      if (!result.ok()) return http::ErrorResponse(result.status());
      return http::JsonResponse(http::Status::ok, Shown(kind, *result));
    });
  });
  Add(router, {Verb::delete_}, item, [this, kind](RequestContext& ctx, Responder r) {
    if (kind == ObjectKind::kStream && ServeStreamSubresource(ctx, r, ctx.params[0])) return;
    OnPool(std::move(r), [this, kind, name = ctx.params[0]] {
      absl::Status status = config_->DeleteObject(kind, name);
      if (!status.ok()) return http::ErrorResponse(status);
      return http::MakeResponse(http::Status::no_content, "", "application/json");
    });
  });
  if (kind == ObjectKind::kStream) {
    // POST exists only on the sub-resources (masks, invalidate).
    Add(router, {Verb::post}, item, [this](RequestContext& ctx, Responder r) {
      if (ServeStreamSubresource(ctx, r, ctx.params[0])) return;
      r.Send(MethodNotAllowed("POST", "GET, PUT, PATCH, DELETE"));
    });
  }
}

bool AdminApi::ServeStreamSubresource(RequestContext& ctx, Responder& r, const std::string& path) {
  auto config = config_->Current();
  if (config->streams.contains(path)) return false;  // a stream by that very name
  auto sub = ParseStreamSubpath(path);
  if (!sub) return false;
  const Verb verb = ctx.request.method();
  const bool read = verb == Verb::get || verb == Verb::head;
  const std::string& stream = sub->stream;

  if (sub->kind == StreamSubpath::kInvalidate) {
    if (verb != Verb::post) {
      r.Send(MethodNotAllowed(std::string(ctx.request.method_string()), "POST"));
      return true;
    }
    // L-14: an empty body is a whole-stream bump, like {}.
    json body = json::object();
    if (!IsBlank(ctx.request.body())) {
      auto parsed = ParseObjectBody(ctx.request.body());
      if (!parsed.ok()) {
        r.Send(http::ErrorResponse(parsed.status()));
        return true;
      }
      body = std::move(*parsed);
    }
    OnPool(std::move(r), [this, stream, body = std::move(body)] {
      auto stored = config_->MutateObject(ObjectKind::kStream, stream, [&](json& object) {
        return InvalidateStream(object, body).status();
      });
      if (!stored.ok()) return http::ErrorResponse(stored.status());
      return http::JsonResponse(
          http::Status::ok,
          {{"version", (*stored)["version"]}, {"range_versions", (*stored)["range_versions"]}});
    });
    return true;
  }

  if (read) {
    auto it = config->streams.find(stream);
    if (it == config->streams.end()) {
      r.Send(http::ErrorResponse(NoSuchStream(stream)));
      return true;
    }
    const json& masks = it->second.object["masks"];
    if (sub->kind == StreamSubpath::kMasks) {
      r.Send(http::JsonResponse(http::Status::ok, {{"masks", masks}}));
      return true;
    }
    for (const json& m : masks) {
      if (m["id"] == sub->mask_id) {
        r.Send(http::JsonResponse(http::Status::ok, m));
        return true;
      }
    }
    r.Send(http::ErrorResponse(absl::NotFoundError(
        absl::StrCat("mask \"", sub->mask_id, "\" does not exist on stream \"", stream, "\""))));
    return true;
  }

  if (sub->kind == StreamSubpath::kMask) {
    if (verb != Verb::delete_) {
      r.Send(MethodNotAllowed(std::string(ctx.request.method_string()), "GET, DELETE"));
      return true;
    }
    OnPool(std::move(r), [this, stream, id = sub->mask_id] {
      auto stored = config_->MutateObject(
          ObjectKind::kStream, stream, [&](json& object) { return RemoveStreamMask(object, id); });
      if (!stored.ok()) return http::ErrorResponse(stored.status());
      return http::MakeResponse(http::Status::no_content, "", "application/json");
    });
    return true;
  }

  // …/masks: POST adds one, DELETE with a body removes every equal one.
  if (verb != Verb::post && verb != Verb::delete_) {
    r.Send(MethodNotAllowed(std::string(ctx.request.method_string()), "GET, POST, DELETE"));
    return true;
  }
  auto body = ParseObjectBody(ctx.request.body());
  if (!body.ok()) {
    r.Send(http::ErrorResponse(body.status()));
    return true;
  }
  if (verb == Verb::post) {
    OnPool(std::move(r), [this, stream, body = std::move(*body)] {
      json mask;
      auto stored = config_->MutateObject(ObjectKind::kStream, stream, [&](json& object) {
        auto added = AddStreamMask(object, body);
        if (!added.ok()) return added.status();
        mask = std::move(*added);
        return absl::OkStatus();
      });
      if (!stored.ok()) return http::ErrorResponse(stored.status());
      return http::JsonResponse(http::Status::created, mask);
    });
  } else {
    OnPool(std::move(r), [this, stream, body = std::move(*body)] {
      auto stored = config_->MutateObject(ObjectKind::kStream, stream, [&](json& object) {
        return RemoveStreamMasksLike(object, body);
      });
      if (!stored.ok()) return http::ErrorResponse(stored.status());
      return http::MakeResponse(http::Status::no_content, "", "application/json");
    });
  }
  return true;
}

namespace {

// The client a route query is for: `?client=IP` (an operator testing a route) or the
// request's own client address (T-2).
absl::StatusOr<std::optional<net::IpAddress>> QueryClient(const RequestContext& ctx) {
  auto param = ctx.QueryParam("client");
  if (!param) return std::optional<net::IpAddress>(ctx.client);
  auto ip = net::IpAddress::Parse(*param);
  if (!ip.ok()) return InvalidField("client", std::string(ip.status().message()));
  return std::optional<net::IpAddress>(ip->Unmapped());
}

// A token that may be copied into a URL as it is: a compact JWT's characters, bounded.
bool IsUrlSafeToken(std::string_view token) {
  if (token.empty() || token.size() > 8192) return false;
  return std::all_of(token.begin(), token.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

}  // namespace

void AdminApi::AddRouteQueries(http::Router& router) {
  const std::string api = kApiPrefix;
  // Z-21: candidate zones in chain order with their eligible nodes by load.
  Add(router, {Verb::get}, api + "/routes/{stream...}", [this](RequestContext& ctx, Responder r) {
    auto client = QueryClient(ctx);
    if (!client.ok()) return r.Send(http::ErrorResponse(client.status()));
    std::string scheme = ctx.QueryParam("scheme").value_or(ctx.scheme);
    if (scheme != "http" && scheme != "https") {
      return r.Send(http::ErrorResponse(InvalidField("scheme", "must be http or https")));
    }
    auto snapshot = routing_->snapshot();
    auto decision = routing_->Route(*snapshot, ctx.params[0], *client, RouteMode::kListAll);
    if (!decision.ok()) {
      auto res = http::ErrorResponse(decision.status());
      if (decision.status().code() == absl::StatusCode::kUnavailable) {
        res.set(http::beast_http::field::retry_after, "2");
      }
      return r.Send(std::move(res));
    }
    json body = routing_->DecisionJson(*snapshot, *decision, scheme);
    // A-2: `?token=` (a viewer's token) gives every node a `play_url` carrying it.
    if (auto token = ctx.QueryParam("token")) {
      if (!IsUrlSafeToken(*token)) {
        return r.Send(http::ErrorResponse(
            InvalidField("token", "must be a compact JWT (letters, digits, '-', '_', '.')")));
      }
      const std::string tail = absl::StrCat("/", ctx.params[0], "/index.m3u8?token=", *token);
      for (auto& zone : body["zones"]) {
        for (auto& node : zone["nodes"]) node["play_url"] = node["url"].get<std::string>() + tail;
      }
      if (body.contains("selected")) {
        body["selected"]["play_url"] = body["selected"]["url"].get<std::string>() + tail;
      }
    }
    body["stream"] = ctx.params[0];
    body["client"] = *client ? json((*client)->ToString()) : json();
    r.Send(http::JsonResponse(http::Status::ok, body));
  });
  // Z-24: which replica of a VOD asset a client gets.
  Add(router, {Verb::get}, api + "/vod-routes/{name...}", [this](RequestContext& ctx, Responder r) {
    auto client = QueryClient(ctx);
    if (!client.ok()) return r.Send(http::ErrorResponse(client.status()));
    auto config = config_->Current();
    auto it = config->vod.find(ctx.params[0]);
    if (it == config->vod.end()) {
      return r.Send(http::ErrorResponse(
          absl::NotFoundError(absl::StrCat("VOD asset \"", ctx.params[0], "\" does not exist"))));
    }
    auto snapshot = routing_->snapshot();
    auto node = routing_->selector().ChooseVod(*snapshot, it->second.object, *client);
    if (!node.ok()) return r.Send(http::ErrorResponse(node.status()));
    const RouteNode& chosen = snapshot->nodes()[*node];
    r.Send(http::JsonResponse(
        http::Status::ok,
        {{"name", ctx.params[0]},
         {"selected", {{"id", chosen.id}, {"url", RoutingService::NodeUrl(chosen, ctx.scheme)}}}}));
  });
}

void AdminApi::AddOttRoutes(http::Router& router) {
  const std::string api = kApiPrefix;
  Add(router, {Verb::get}, api + "/ott-groups", [this](RequestContext&, Responder r) {
    r.Send(http::JsonResponse(http::Status::ok, ott::GroupsJson(ott_->Evaluate())));
  });
  Add(router, {Verb::get}, api + "/ott-groups/{name}", [this](RequestContext& ctx, Responder r) {
    auto snapshot = ott_->Evaluate();
    auto it = snapshot.groups.find(ctx.params[0]);
    if (it == snapshot.groups.end()) {
      return r.Send(http::ErrorResponse(
          absl::NotFoundError(absl::StrCat("OTT group \"", ctx.params[0], "\" does not exist"))));
    }
    r.Send(http::JsonResponse(http::Status::ok, ott::GroupJson(it->second)));
  });
  Add(router, {Verb::get}, api + "/ott-key", [this](RequestContext&, Responder r) {
    r.Send(http::JsonResponse(http::Status::ok, ott_->KeyBlock()));
  });
  Add(router, {Verb::post}, api + "/ott-key/rotate", [this](RequestContext&, Responder r) {
    OnPool(std::move(r), [this] {
      auto block = ott_->RotateKey();
      if (!block.ok()) return http::ErrorResponse(block.status());
      return http::JsonResponse(http::Status::ok, *block);
    });
  });
  Add(router, {Verb::get}, api + "/alerts", [this](RequestContext&, Responder r) {
    r.Send(http::JsonResponse(http::Status::ok, ott_->AlertsJson()));
  });
}

void AdminApi::AddRoutes(http::Router& router) {
  const std::string api = kApiPrefix;
  if (ott_) AddOttRoutes(router);
  AddObjectRoutes(router, "zones", ObjectKind::kZone);
  AddObjectRoutes(router, "streams", ObjectKind::kStream);
  AddObjectRoutes(router, "vod", ObjectKind::kVod);
  AddObjectRoutes(router, "access-keys", ObjectKind::kAccessKey);  // A-4
  AddSessionRoutes(router);                                        // A-9
  AddRouteQueries(router);

  Add(router, {Verb::get}, api + "/config", [this](RequestContext&, Responder r) {
    r.Send(http::JsonResponse(http::Status::ok, ConfigService::ConfigJson(*config_->Current())));
  });

  Add(router, {Verb::patch}, api + "/config", [this](RequestContext& ctx, Responder r) {
    auto body = ParseObjectBody(ctx.request.body());
    if (!body.ok()) return r.Send(http::ErrorResponse(body.status()));
    OnPool(std::move(r), [this, patch = std::move(*body)] {
      auto next = config_->PatchConfig(patch);
      if (!next.ok()) return http::ErrorResponse(next.status());
      return http::JsonResponse(http::Status::ok, ConfigService::ConfigJson(**next));
    });
  });

  Add(router, {Verb::get}, api + "/streamers", [this](RequestContext&, Responder r) {
    json list = json::array();
    const auto config = config_->Current();  // held for the loop (see above)
    for (const auto& [id, record] : config->streamers) {
      list.push_back(StreamerJson(record));  // std::map: sorted by id (M-1)
    }
    r.Send(http::JsonResponse(http::Status::ok, {{"streamers", list}}));
  });

  Add(router, {Verb::get}, api + "/streamers/{id}", [this](RequestContext& ctx, Responder r) {
    auto config = config_->Current();
    auto it = config->streamers.find(ctx.params[0]);
    if (it == config->streamers.end()) {
      return r.Send(http::ErrorResponse(
          absl::NotFoundError(absl::StrCat("streamer \"", ctx.params[0], "\" does not exist"))));
    }
    r.Send(http::JsonResponse(http::Status::ok, StreamerJson(it->second)));
  });

  Add(router, {Verb::put}, api + "/streamers/{id}", [this](RequestContext& ctx, Responder r) {
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

  Add(router, {Verb::patch}, api + "/streamers/{id}", [this](RequestContext& ctx, Responder r) {
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

  Add(router, {Verb::delete_}, api + "/streamers/{id}", [this](RequestContext& ctx, Responder r) {
    OnPool(std::move(r), [this, id = ctx.params[0]] {
      absl::Status status = config_->DeleteStreamer(id);
      if (!status.ok()) return http::ErrorResponse(status);
      return http::MakeResponse(http::Status::no_content, "", "application/json");
    });
  });
}

}  // namespace meshwork::central
