// Viewer redirects on central's viewer listeners (Z-20, T-6): `GET /{stream}/{path}` → 302
// to the chosen node with the scheme of the listener the request came in on; 503 with
// Retry-After when no node is eligible (or restricted mode cannot place the client); 404
// for a stream unknown to the cluster. `GET /vod/{asset}/{path}` does the same for VOD
// replicas (Z-24). With a ViewerProxy (Z-23, viewer_proxy.h) the same decision is delivered
// by proxy instead of the 302. `GET /steering/{stream}` is the steering server (CS-2,
// central/routing/steering.h); it comes before the catch-all, so no stream can be reached
// under a name starting with "steering/" through central.
#pragma once

#include "central/api/viewer_proxy.h"
#include "central/model/config_service.h"
#include "central/routing/routing_service.h"
#include "central/routing/steering.h"
#include "common/http/router.h"

namespace meshwork::central {

// Adds the catch-all viewer routes; add them after every other route of the listener.
// `proxy` null: redirects (the default delivery); else it must outlive the router.
// `steering` null: no steering route; else it must outlive the router.
void AddViewerRoutes(http::Router& router, ConfigService* config, RoutingService* routing,
                     ViewerProxy* proxy = nullptr, SteeringService* steering = nullptr);

}  // namespace meshwork::central
