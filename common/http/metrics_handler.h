// GET /metrics (M-4): the binary's registry in Prometheus text format.
#pragma once

#include "common/http/response.h"
#include "common/metrics/metrics.h"

namespace meshwork::http {

inline Handler MetricsHandler(prometheus::Registry* registry) {
  return [registry](RequestContext&, Responder r) {
    r.Send(MakeResponse(Status::ok, metrics::RenderText(*registry), metrics::kTextContentType));
  };
}

}  // namespace meshwork::http
