// gRPC meshwork.v1.Routing (Z-22): the viewer routing decision for programmatic clients,
// the same one the redirect listener makes. Answers inline (decisions never block).
#pragma once

#include <functional>
#include <string>

#include "central/routing/routing_service.h"
#include "common/crypto/token_file.h"
#include "meshwork/v1/routing.grpc.pb.h"

namespace meshwork::central {

class RoutingRpc final : public meshwork::v1::Routing::CallbackService {
 public:
  // The call needs no token (Z-22). One that carries a valid cluster token (a streamer's)
  // is reported to `on_authenticated` with the call's peer, as ControlService does; both may be
  // null.
  explicit RoutingRpc(RoutingService* routing, crypto::TokenFile* cluster_tokens = nullptr,
                      std::function<void(const std::string& peer)> on_authenticated = nullptr)
      : routing_(routing),
        cluster_tokens_(cluster_tokens),
        on_authenticated_(std::move(on_authenticated)) {}

  // meshwork::v1::Routing::CallbackService
  grpc::ServerUnaryReactor* Route(grpc::CallbackServerContext* context,
                                  const meshwork::v1::RouteRequest* request,
                                  meshwork::v1::RouteResponse* response) override;

 private:
  RoutingService* routing_;
  crypto::TokenFile* cluster_tokens_;
  std::function<void(const std::string&)> on_authenticated_;
};

}  // namespace meshwork::central
