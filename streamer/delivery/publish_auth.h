// Publish tokens (M-3): who may write into a stream on the publish listener.
//
// A stream object may carry `publish_tokens` (any of them admits every publish to the
// stream) and `pipeline_tokens` ({pipeline: [tokens]}, admitting that pipeline's objects).
// Several tokens per list let an operator rotate one without a cut: add the new one, move the
// encoders, remove the old one. A publisher presents its token as `Authorization: Bearer …`
// or as `?token=…` (for encoders that cannot set headers). Comparisons run in constant time.
//
// With no token configured for a stream, publishing stays open (as before tokens existed),
// but a live push is still never cut by a second publisher: only a token can take over.
//
// Thread-safe: reads the node's config snapshot per request.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/http/types.h"
#include "common/sync/snapshot.h"
#include "streamer/agent/node_config.h"

namespace meshwork::streamer {

class PublishAuth {
 public:
  // `config` must outlive this object.
  explicit PublishAuth(const Snapshot<NodeConfig>* config) : config_(config) {}

  // Whether the request may publish to `stream` (as `pipeline`, empty for a push):
  // true when it presented a valid token, false when the stream has none configured (open);
  // Unauthenticated when tokens are configured and the request has none or a wrong one.
  absl::StatusOr<bool> Check(const http::RequestContext& ctx, const std::string& stream,
                             std::string_view pipeline) const;
  // The same for a token presented some other way (RTMP's stream key); empty = none.
  absl::StatusOr<bool> CheckToken(const std::string& presented, const std::string& stream,
                                  std::string_view pipeline) const;

 private:
  const Snapshot<NodeConfig>* config_;
};

// The token a request presents (Authorization: Bearer, else ?token=); empty when none.
std::string PresentedToken(const http::RequestContext& ctx);

// 401 with `WWW-Authenticate: Bearer` for a refused publish.
http::Response PublishUnauthorized(const absl::Status& status);

}  // namespace meshwork::streamer
