// gRPC meshwork.v1.Control (C-1…C-4) on the callback API.
//
// Register runs its (synced) store write on the blocking pool and finishes from there.
// Each Session is a reactor: reads are always outstanding (hello, then reports); writes go
// through a queue so config pushes from any thread never block and never overlap.
#pragma once

#include "boost/asio/thread_pool.hpp"
#include "central/cluster/node_registry.h"
#include "central/model/config_service.h"
#include "meshwork/v1/control.grpc.pb.h"

namespace meshwork::central {

inline constexpr uint32_t kProtocolVersion = 1;
inline constexpr uint32_t kReportIntervalMs = 1000;

class ControlService final : public meshwork::v1::Control::CallbackService {
 public:
  // All pointers must outlive the service.
  ControlService(ConfigService* config, NodeRegistry* registry, boost::asio::thread_pool* pool)
      : config_(config), registry_(registry), pool_(pool) {}

  // meshwork::v1::Control::CallbackService
  grpc::ServerUnaryReactor* Register(grpc::CallbackServerContext* context,
                                     const meshwork::v1::RegisterRequest* request,
                                     meshwork::v1::RegisterResponse* response) override;
  grpc::ServerBidiReactor<meshwork::v1::SessionMessage, meshwork::v1::ConfigUpdate>* Session(
      grpc::CallbackServerContext* context) override;

 private:
  ConfigService* config_;
  NodeRegistry* registry_;
  boost::asio::thread_pool* pool_;
};

}  // namespace meshwork::central
