// The REST API under /central/api-v4/ (M-1): config (T-1…T-7), streamers, zones, streams
// (with their masks and cache invalidation, L-13/L-14), VOD assets, the read-only route
// queries (Z-21, Z-24), OTT groups, the viewing-key block, alerts (O-19, M-2) and the viewer
// token keys (A-4: `access-keys/{kid}`, shown as kid and algorithm only), viewer sessions and
// revoked logins. Reads answer
// from the snapshot on the HTTP worker; writes run on the blocking pool (they wait for the
// synced store) and answer from there.
//
// Authentication (M-3): with a token file, every route added here answers 401 with the M-1
// error body and `WWW-Authenticate: Bearer …` unless the request carries
// `Authorization: Bearer <token>` for one of the file's tokens (compared in constant time, see
// crypto::TokenFile). Paths under the prefix that match no route still answer 404/405 from
// the router: they act on nothing. Viewer routing and /metrics are added elsewhere and never
// ask for a token.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "boost/asio/thread_pool.hpp"
#include "central/cluster/node_registry.h"
#include "central/model/config_service.h"
#include "central/ott/ott_service.h"
#include "central/routing/routing_service.h"
#include "common/crypto/token_file.h"
#include "common/http/router.h"

namespace meshwork::central {

inline constexpr char kApiPrefix[] = "/central/api-v4";

class AdminApi {
 public:
  // All pointers must outlive the API and the server it is routed on.
  // `ott` may be null: no OTT routes then. `api_tokens` may be null: no token is asked for.
  AdminApi(ConfigService* config, NodeRegistry* registry, RoutingService* routing,
           boost::asio::thread_pool* pool, ott::OttService* ott = nullptr,
           crypto::TokenFile* api_tokens = nullptr)
      : config_(config),
        registry_(registry),
        routing_(routing),
        pool_(pool),
        ott_(ott),
        api_tokens_(api_tokens) {}

  void AddRoutes(http::Router& router);

 private:
  // router.Add behind the checks below (before the body is read, and again before the
  // handler runs). Every route of the API is added through here.
  // The refusal of a request, or nothing: a change (any method but GET/HEAD/OPTIONS) sent by
  // a page of another site — an Origin that is not this central's own Host, or
  // Sec-Fetch-Site cross-site/same-site — is 403 whatever its token (CSRF: without a token
  // file a browser's cookie-less request would otherwise be enough); then, with a token file,
  // the 401 for a request without a valid bearer token (its message says whether one was
  // presented).
  std::optional<http::Response> Refusal(const http::Request& request) const;
  void Add(http::Router& router, std::vector<http::Verb> methods, std::string_view pattern,
           http::Handler handler);
  nlohmann::json StreamerJson(const StreamerRecord& record) const;
  // GET/PUT/PATCH/DELETE of zones, streams or VOD assets under `collection`.
  void AddObjectRoutes(http::Router& router, const std::string& collection, ObjectKind kind);
  void AddRouteQueries(http::Router& router);
  // O-19, M-2: ott-groups, ott-key (and its rotation), alerts.
  void AddOttRoutes(http::Router& router);
  // A-9 (session_routes.cc): `sessions` from the nodes' reports, `sessions/revoke`,
  // `sessions/revoked`, `sessions/revoke/{login}`.
  void AddSessionRoutes(http::Router& router);
  // L-13/L-14: `/streams/{stream}/masks`, `…/masks/{id}` and `…/invalidate`. The router's
  // `{name...}` capture cannot be followed by a suffix, so the stream routes hand such paths
  // here (when they do not name a stream themselves). Returns false when `path` is not one.
  bool ServeStreamSubresource(http::RequestContext& ctx, http::Responder& r,
                              const std::string& path);
  // Runs `work` on the blocking pool and sends its response.
  void OnPool(http::Responder responder, std::function<http::Response()> work);

  ConfigService* config_;
  NodeRegistry* registry_;
  RoutingService* routing_;
  boost::asio::thread_pool* pool_;
  ott::OttService* ott_;
  crypto::TokenFile* api_tokens_;
};

}  // namespace meshwork::central
