// CS-1, CS-3: a stream's content steering, as the REST API accepts it:
//
//   "steering": {"enabled": true, "ttl_s": 10, "rebalance_percent": 25}
//
// `enabled` turns pathways on in the stream's master playlists and MPDs (every node that can
// serve it is one pathway) and central's steering answers for it; `ttl_s` is the TTL of each
// answer, 1…3600 s (default 10); `rebalance_percent`, 0…1000 (default 25), is how much more
// loaded than the best node a viewer's current pathway must be before an answer moves it
// (CS-3). Kept in canonical form only when present, every member then written. The same
// member in /config is the default of every stream without one.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace meshwork::central {

struct SteeringSettings {
  bool enabled = false;
  int64_t ttl_s = 10;
  int64_t rebalance_percent = 25;
};

// Validates `body`'s "steering" member and writes its canonical form into `out`.
absl::Status ResolveSteering(const nlohmann::json& body, nlohmann::json& out);

// The settings of a canonical stream object: its own "steering" member, else
// `cluster_default` (the /config "steering" member, CS-1), else the defaults, disabled.
SteeringSettings SteeringOf(const nlohmann::json& stream_object,
                            const nlohmann::json& cluster_default = nullptr);

}  // namespace meshwork::central
