// The REST API under /central/api-v4/ (M-1): config (T-1…T-7) and streamers. Reads answer
// from the snapshot on the HTTP worker; writes run on the blocking pool (they wait for the
// synced store) and answer from there.
#pragma once

#include "boost/asio/thread_pool.hpp"
#include "central/cluster/node_registry.h"
#include "central/model/config_service.h"
#include "common/http/router.h"

namespace meshwork::central {

inline constexpr char kApiPrefix[] = "/central/api-v4";

class AdminApi {
 public:
  // All pointers must outlive the API and the server it is routed on.
  AdminApi(ConfigService* config, NodeRegistry* registry, boost::asio::thread_pool* pool)
      : config_(config), registry_(registry), pool_(pool) {}

  void AddRoutes(http::Router& router);

 private:
  nlohmann::json StreamerJson(const StreamerRecord& record) const;
  // Runs `work` on the blocking pool and sends its response.
  void OnPool(http::Responder responder, std::function<http::Response()> work);

  ConfigService* config_;
  NodeRegistry* registry_;
  boost::asio::thread_pool* pool_;
};

}  // namespace meshwork::central
