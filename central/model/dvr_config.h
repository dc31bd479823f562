// D-1: a stream's archive, as the REST API accepts it:
//
//   "dvr": {"root": "/var/lib/meshwork/dvr", "depth_s": 86400,
//           "protocols": ["ts", "fmp4"], "max_bytes": 107374182400, "fsync": false}
//
// `root` is an absolute directory on each node holding the stream (no "." or ".." element,
// no control characters, at most 512 bytes); `depth_s` the seconds kept (60 s … 90 days,
// default 3600); `protocols` what is recorded (default both: `ts` for HLS, `fmp4` for LL-HLS
// and DASH); `max_bytes` an optional disk budget for the stream (≥ 1 MiB) past which the
// oldest segments go; `fsync` whether each file is fsynced before it is renamed (default
// false). Kept in canonical form only when present.
#pragma once

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace meshwork::central {

inline constexpr int64_t kMinDvrDepthS = 60;
inline constexpr int64_t kMaxDvrDepthS = 90LL * 86400;

// Validates `body`'s "dvr" member and writes its canonical form into `out`.
absl::Status ResolveDvr(const nlohmann::json& body, nlohmann::json& out);

}  // namespace meshwork::central
