// The load report the agent sends central every second (C-4), assembled from the node's
// parts: host load (which also feeds the shedder, L-16, and the OTT gate's overload rule,
// O-16), listener bytes, OTT backup sessions, refusals and held keys (O-15), the streams'
// states and play sessions (S-18) and their archive ranges (D-6). Runs on the agent's
// report thread; every part it reads is thread-safe.
#pragma once

#include <memory>
#include <vector>

#include "common/http/server.h"
#include "meshwork/v1/types.pb.h"
#include "streamer/agent/host_sampler.h"
#include "streamer/archive/archive_index.h"
#include "streamer/archive/recorder.h"
#include "streamer/delivery/node_alerts.h"
#include "streamer/delivery/node_metrics.h"
#include "streamer/delivery/play_sessions.h"
#include "streamer/delivery/shedder.h"
#include "streamer/ott/ott_gate.h"
#include "streamer/packager/stream_manager.h"
#include "streamer/store/origin_store.h"

namespace meshwork::streamer {

// What a report is made from; every pointer must outlive the reports (none may be null).
struct LoadReportSources {
  std::vector<const http::Server*> servers;  // every listener whose bytes count
  std::shared_ptr<HostSampler> sampler;      // sampled once per report
  Shedder* shedder;
  OttGate* ott;
  StreamManager* streams;
  PlaySessions* sessions;
  NodeMetrics* node_metrics;  // refreshed with each report
  const OriginStore* origin;
  const archive::ArchiveIndex* archive_index;
  NodeAlerts* alerts;                 // M-2: the node's own, re-evaluated with each report
  const archive::Recorder* recorder;  // for the archive disk alert
};

// Samples the host, hands the load to the shedder and the OTT gate, and fills `report`.
void FillLoadReport(const LoadReportSources& sources, meshwork::v1::LoadReport& report);

}  // namespace meshwork::streamer
