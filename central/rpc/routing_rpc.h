// gRPC meshwork.v1.Routing (Z-22): the viewer routing decision for programmatic clients,
// the same one the redirect listener makes. Answers inline (decisions never block).
#pragma once

#include "central/routing/routing_service.h"
#include "meshwork/v1/routing.grpc.pb.h"

namespace meshwork::central {

class RoutingRpc final : public meshwork::v1::Routing::CallbackService {
 public:
  explicit RoutingRpc(RoutingService* routing) : routing_(routing) {}

  // meshwork::v1::Routing::CallbackService
  grpc::ServerUnaryReactor* Route(grpc::CallbackServerContext* context,
                                  const meshwork::v1::RouteRequest* request,
                                  meshwork::v1::RouteResponse* response) override;

 private:
  RoutingService* routing_;
};

}  // namespace meshwork::central
