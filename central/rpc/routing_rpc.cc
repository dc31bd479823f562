#include "central/rpc/routing_rpc.h"

#include "absl/strings/str_cat.h"
#include "central/rpc/control_service.h"
#include "common/status/grpc_status.h"
#include "common/status/status_map.h"
#include "meshwork/v1/role_names.h"

namespace meshwork::central {

grpc::ServerUnaryReactor* RoutingRpc::Route(grpc::CallbackServerContext* context,
                                            const v1::RouteRequest* request,
                                            v1::RouteResponse* response) {
  auto* reactor = context->DefaultReactor();
  if (cluster_tokens_ && on_authenticated_ && CarriesClusterToken(*context, cluster_tokens_)) {
    on_authenticated_(context->peer());
  }
  std::optional<net::IpAddress> client;
  if (!request->client_address().empty()) {
    auto ip = net::IpAddress::Parse(request->client_address());
    if (!ip.ok()) {
      reactor->Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                   "client_address: " + std::string(ip.status().message())));
      return reactor;
    }
    client = ip->Unmapped();
  }
  std::string scheme = request->scheme().empty() ? "http" : request->scheme();
  if (scheme != "http" && scheme != "https") {
    reactor->Finish(
        grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "scheme: must be http or https"));
    return reactor;
  }
  auto snapshot = routing_->snapshot();
  auto decision = routing_->Route(*snapshot, request->stream(), client, RouteMode::kDecide);
  if (!decision.ok()) {
    reactor->Finish(ToGrpcStatus(decision.status()));
    return reactor;
  }
  response->set_restricted(decision->restricted);
  if (decision->client_zone >= 0) {
    response->set_client_zone(snapshot->zones()[decision->client_zone].name);
  }
  auto fill = [&](const RouteNode& node, std::optional<uint64_t> sessions, v1::RoutedNode* out) {
    out->set_id(node.id);
    out->set_url(RoutingService::NodeUrl(node, scheme));
    out->set_role(std::string(v1::RoleName(node.role)));
    if (sessions) out->set_play_sessions(*sessions);
  };
  for (const auto& zc : decision->zones) {
    auto* zone = response->add_zones();
    if (zc.zone >= 0) zone->set_name(snapshot->zones()[zc.zone].name);
    for (const auto& c : zc.nodes)
      fill(snapshot->nodes()[c.node], c.play_sessions, zone->add_nodes());
  }
  const RouteNode& selected = snapshot->nodes()[decision->selected];
  fill(selected, selected.live ? selected.live->play_sessions() : std::nullopt,
       response->mutable_selected());
  if (!request->path().empty()) {
    response->set_url(
        absl::StrCat(response->selected().url(), "/", request->stream(), "/", request->path()));
  }
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

}  // namespace meshwork::central
