#include "streamer/delivery/node_routes.h"

#include "common/http/metrics_handler.h"
#include "common/http/response.h"

namespace meshwork::streamer {

using http::Verb;

void AddNodeRoutes(http::Router& router, const NodeIdentity& identity,
                   const Snapshot<NodeConfig>* config, prometheus::Registry* metrics,
                   std::function<bool()> connected,
                   std::function<void(nlohmann::json&)> more_status) {
  router.Add({Verb::get}, "/whoami", [](http::RequestContext& ctx, http::Responder r) {
    nlohmann::json body = {{"client", ctx.client.ToString()},
                           {"peer", ctx.peer.Unmapped().ToString()},
                           {"trusted_peer", ctx.peer_trusted},
                           {"scheme", ctx.ViewerScheme()},
                           {"listener", ctx.listener}};
    auto res = http::JsonResponse(http::Status::ok, body);
    res.set(http::beast_http::field::cache_control, "no-store");
    r.Send(std::move(res));
  });
  router.Add({Verb::get}, "/status",
             [identity, config, connected, more_status](http::RequestContext&, http::Responder r) {
               auto c = config->Get();
               nlohmann::json body = {{"node_id", identity.node_id},
                                      {"hostname", identity.hostname},
                                      {"role", identity.role},
                                      {"version", identity.version},
                                      {"central_connected", connected()},
                                      {"config_revision", c->revision},
                                      {"zone", c->settings.zone()}};
               nlohmann::json proxies = nlohmann::json::array();
               for (const auto& cidr : c->trusted_proxies->cidrs())
                 proxies.push_back(cidr.ToString());
               body["trusted_proxies"] = proxies;
               if (more_status) more_status(body);
               r.Send(http::JsonResponse(http::Status::ok, body));
             });
  router.Add({Verb::get}, "/metrics", http::MetricsHandler(metrics));
}

}  // namespace meshwork::streamer
