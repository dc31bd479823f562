// streamer: one node of the cluster (ingest, origin or edge). Wiring only.
#include <csignal>
#include <memory>

#include "absl/cleanup/cleanup.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "boost/asio/thread_pool.hpp"
#include "common/crypto/token_file.h"
#include "common/http/client.h"
#include "common/http/server.h"
#include "common/http/server_flags.h"
#include "common/http/tls.h"
#include "common/log/log.h"
#include "common/net/http_url.h"
#include "common/process/process.h"
#include "meshwork/v1/protocol.h"
#include "meshwork/v1/role_names.h"
#include "streamer/access/access_gate.h"
#include "streamer/agent/agent.h"
#include "streamer/agent/host_sampler.h"
#include "streamer/agent/route_client.h"
#include "streamer/archive/recorder.h"
#include "streamer/delivery/archive_routes.h"
#include "streamer/delivery/load_report.h"
#include "streamer/delivery/node_metrics.h"
#include "streamer/delivery/node_routes.h"
#include "streamer/delivery/node_status.h"
#include "streamer/delivery/origin_routes.h"
#include "streamer/delivery/play_sessions.h"
#include "streamer/delivery/publish_auth.h"
#include "streamer/delivery/rtmp_listener.h"
#include "streamer/delivery/viewer_routes.h"
#include "streamer/ott/ott_gate.h"
#include "streamer/packager/stream_manager.h"
#include "streamer/relay/feed_ts.h"
#include "streamer/relay/upstreams_from_agent.h"
#include "streamer/store/origin_store.h"

ABSL_FLAG(std::string, central, "127.0.0.1:9090",
          "HOST:PORT of central's gRPC listener; several, comma-separated, for centrals sharing "
          "one etcd (C-10): the node moves to the next when one fails");
ABSL_FLAG(std::string, cluster_token_file, "",
          "file holding the cluster token presented to central (required, M-3; a copy of "
          "central's <data-dir>/cluster-token or of its --cluster-token-file; the first token "
          "is sent, re-read on every reconnect)");
ABSL_FLAG(int, central_max_message_bytes, 64 << 20,
          "largest message accepted from central (a full configuration snapshot)");
ABSL_FLAG(std::string, node_id, "", "this node's id (required)");
ABSL_FLAG(std::string, dvr_root, "",
          "directory this node records archives under, instead of each stream's dvr.root (D-1)");
ABSL_FLAG(std::string, hostname, "", "public host name of this node (default: the listen host)");
ABSL_FLAG(std::string, role, "edge", "ingest, origin or edge");
ABSL_FLAG(std::string, listen, "127.0.0.1:8081", "ADDR:PORT of the viewer listener");
ABSL_FLAG(std::string, publish_listen, "127.0.0.1:8082", "ADDR:PORT of the publish listener");
ABSL_FLAG(std::string, https_listen, "",
          "ADDR:PORT of an HTTPS viewer listener (needs --tls-cert and --tls-key; O-13)");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM certificate chain for --https-listen and --rtmps-listen (SIGHUP rereads it)");
ABSL_FLAG(std::string, tls_key, "", "PEM private key for --https-listen and --rtmps-listen");
ABSL_FLAG(std::string, rtmp_listen, "",
          "ADDR:PORT of an RTMP ingest listener, e.g. 0.0.0.0:1935 (off when empty; S-1)");
ABSL_FLAG(std::string, rtmps_listen, "",
          "ADDR:PORT of an RTMPS ingest listener (needs --tls-cert and --tls-key)");
ABSL_FLAG(std::string, rtmp_app, "live", "the RTMP application name publishers connect to");
ABSL_FLAG(int, public_port, 0, "public port of the viewer listener when port-forwarded");
ABSL_FLAG(std::string, internal_address, "",
          "host (name or address, no port) other nodes reach this one at for relay, publish "
          "feeds and archive reads; empty: the public hostname. Viewers' URLs never use it");
ABSL_FLAG(int, ll_tune_in_hold_pct, 50,
          "LL-HLS: a media playlist request without delivery directives (a player tuning in) "
          "waits for the next part when that part is due within this percentage of a part "
          "target, so that the live edge the player starts from is fresh (P-9); 0 never waits, "
          "100 always does (the first playlist then comes up to one part target later)");
ABSL_FLAG(int, http_threads, 2, "worker threads of the viewer listener");
ABSL_FLAG(int, publish_threads, 1, "worker threads of the publish listener");
ABSL_FLAG(uint64_t, heap_retain_mib, 128,
          "freed heap memory kept mapped for reuse by new segments and parts (P-7: fewer page "
          "faults per segment); 0 keeps the C library's defaults");
ABSL_FLAG(uint64_t, max_object_bytes, 64ull << 20,
          "largest object a packager may publish (413 above)");
ABSL_FLAG(int64_t, max_upload_ms, 120'000,
          "longest an object upload may take from its first byte to its last (408 beyond; R-3: "
          "a client trickling bytes holds a connection and the upload budget)");
ABSL_FLAG(uint64_t, max_buffered_upload_bytes, 256ull << 20,
          "bytes the publish listener holds for uploads still arriving, all together (503 with "
          "Retry-After beyond it; R-3)");
ABSL_FLAG(uint64_t, max_stream_bytes, 512ull << 20,
          "memory kept per published stream (the live window plus its tail)");
ABSL_FLAG(uint64_t, archive_open_files, 256,
          "archived files kept open between archive reads (D-3; each holds a descriptor)");
ABSL_FLAG(uint64_t, edge_archive_cache_bytes, 256ull << 20,
          "memory an edge keeps for archive answers it fetched upstream (D-3 on edges)");
ABSL_FLAG(std::string, access_backend_ca_file, "",
          "PEM CA certificates trusted for https:// auth backends besides the system's (A-6)");
ABSL_FLAG(int64_t, central_route_deadline_ms, 2000,
          "deadline of a call to central's Route for a stream not held here (Z-22)");
ABSL_FLAG(int64_t, central_route_cache_ms, 1000,
          "how long central's Route answer for a stream is reused (Z-22)");
ABSL_FLAG(double, shed_dvr_cpu, 90, "host CPU % above which DVR reads are shed (L-16; 0 = off)");
ABSL_FLAG(double, shed_live_cpu, 0, "host CPU % above which live reads are shed too (0 = off)");
ABSL_FLAG(int64_t, shed_dvr_in_flight, 5000,
          "reads in flight above which DVR reads are shed (0 = off)");
ABSL_FLAG(int64_t, shed_live_in_flight, 15000,
          "reads in flight above which live reads are shed (0 = off)");

namespace meshwork::streamer {
namespace {

constexpr char kVersion[] = "0.1.0";

void LogTlsReload(const char* listener, const absl::Status& status) {
  if (status.ok()) {
    log::Info("tls_reloaded", {{"listener", listener}});
  } else {
    log::Error("tls_reload_failed", {{"listener", listener}, {"error", status.ToString()}});
  }
}

int Run() {
  if (!RetainHeapMemory(absl::GetFlag(FLAGS_heap_retain_mib) << 20)) {
    log::Warn("heap_retain_refused", {{"mib", absl::GetFlag(FLAGS_heap_retain_mib)}});
  }
  const std::string node_id = absl::GetFlag(FLAGS_node_id);
  v1::Role role;
  if (node_id.empty() || !v1::ParseRole(absl::GetFlag(FLAGS_role), &role)) {
    log::Error("startup_failed",
               {{"error", "--node-id and --role=ingest|origin|edge are required"}});
    return 2;
  }
  const std::string cluster_token_path = absl::GetFlag(FLAGS_cluster_token_file);
  if (cluster_token_path.empty()) {
    log::Error("startup_failed",
               {{"error", "--cluster-token-file is required (central refuses nodes without it)"}});
    return 2;
  }
  auto cluster_token = crypto::TokenFile::Open(cluster_token_path, RealClock::Get());
  if (!cluster_token.ok()) {
    log::Error("startup_failed", {{"error", cluster_token.status().ToString()}});
    return 2;
  }
  auto backend_tls = http::ClientTlsContext(absl::GetFlag(FLAGS_access_backend_ca_file));
  if (!backend_tls.ok()) {
    log::Error("startup_failed", {{"error", std::string(backend_tls.status().message())}});
    return 2;
  }
  const std::string internal_address = absl::GetFlag(FLAGS_internal_address);
  if (!internal_address.empty() && !net::IsHostName(internal_address)) {
    log::Error("startup_failed", {{"error",
                                   "--internal_address must be a host name or an IP "
                                   "address, without a port"}});
    return 2;
  }
  if (int pct = absl::GetFlag(FLAGS_ll_tune_in_hold_pct); pct < 0 || pct > 100) {
    log::Error("startup_failed", {{"error", "--ll_tune_in_hold_pct must be 0…100"}});
    return 2;
  }
  BlockShutdownAndReloadSignals();
  auto metrics = std::make_shared<prometheus::Registry>();
  Snapshot<NodeConfig> config;
  auto trusted = [&config]() -> const net::CidrSet* {
    thread_local Snapshot<NodeConfig>::ReadCache cache;
    return config.Read(cache)->trusted_proxies.get();
  };

  std::unique_ptr<Agent> agent;
  NodeIdentity identity{node_id, absl::GetFlag(FLAGS_hostname), absl::GetFlag(FLAGS_role),
                        kVersion};
  if (identity.hostname.empty()) {
    auto hp = http::SplitHostPort(absl::GetFlag(FLAGS_listen));
    identity.hostname = hp.ok() ? hp->first : "localhost";
  }
  auto connected = [&agent] { return agent && agent->connected(); };

  // The servers are declared before everything their handlers use, so they are destroyed
  // last: at exit they are stopped first (their threads joined: no handler runs any more),
  // then the pipelines and stores go, releasing held requests into the stopped servers'
  // queues, and only then are the servers' io_contexts destroyed with what is queued.
  std::unique_ptr<http::Server> viewer_server, publish_server, https_server;
  std::unique_ptr<RtmpListener> rtmp_listener, rtmps_listener;
  // The one store (every stream's objects, local or published), then the pipelines that
  // publish into it.
  OriginStore::Options origin_options;
  origin_options.max_stream_bytes = absl::GetFlag(FLAGS_max_stream_bytes);
  OriginStore origin(origin_options, RealClock::Get());
  // S-23: what the local packager publishes goes on to the stream's origins too. Made before
  // the pipelines, so it outlives every publish.
  relay::OriginFeed origin_feed(node_id, relay::NodesFromAgent(&agent), RealClock::Get(),
                                metrics.get());
  origin.AddPublishHook([&origin_feed](const std::string& stream, const std::string& rendition,
                                       ObjectKey key,
                                       const std::shared_ptr<const Candidate>& candidate) {
    origin_feed.OnPublish(stream, rendition, key, candidate);
  });
  // S-23, S-25: on an origin, the MPEG-TS form of what ingest nodes' feeds send (CMAF only).
  relay::FeedTs feed_ts(&origin, metrics.get());
  origin.AddPublishHook([&feed_ts](const std::string& stream, const std::string& rendition,
                                   ObjectKey key,
                                   const std::shared_ptr<const Candidate>& candidate) {
    feed_ts.OnPublish(stream, rendition, key, candidate);
  });
  // D-1: streams with `dvr` are recorded from the same hook (the recorder only queues there).
  archive::ArchiveIndex archive_index;
  archive::Recorder::Options recorder_options;
  recorder_options.root_override = absl::GetFlag(FLAGS_dvr_root);
  archive::Recorder recorder(recorder_options, &archive_index, RealClock::Get(), metrics.get());
  origin.AddPublishHook([&recorder, &origin](const std::string& stream,
                                             const std::string& rendition, ObjectKey key,
                                             const std::shared_ptr<const Candidate>& candidate) {
    recorder.OnPublish(origin, stream, rendition, key, candidate);
  });
  StreamManager streams(&origin, RealClock::Get());
  PlaySessions sessions(RealClock::Get());
  NodeMetrics node_metrics(metrics.get());
  ShedThresholds thresholds;
  thresholds.dvr_cpu_percent = absl::GetFlag(FLAGS_shed_dvr_cpu);
  thresholds.live_cpu_percent = absl::GetFlag(FLAGS_shed_live_cpu);
  thresholds.dvr_in_flight = absl::GetFlag(FLAGS_shed_dvr_in_flight);
  thresholds.live_in_flight = absl::GetFlag(FLAGS_shed_live_in_flight);
  Shedder shedder(thresholds, metrics.get());
  OriginOptions delivery_options;
  delivery_options.max_object_bytes = absl::GetFlag(FLAGS_max_object_bytes);
  delivery_options.max_upload_time =
      std::chrono::milliseconds(std::max<int64_t>(1, absl::GetFlag(FLAGS_max_upload_ms)));
  delivery_options.clock = &RealClock::Get();
  PublishAuth publish_auth(&config);
  // P-13: objects a relay is receiving, shared with the viewers meanwhile.
  InFlightObjects in_flight;
  delivery_options.in_flight = &in_flight;
  OriginDelivery origin_delivery(delivery_options, &origin, &streams, &shedder, &publish_auth,
                                 metrics.get());

  OttGate ott(node_id, &config, RealClock::Get(), metrics.get());
  // S-19: streams central marks for relay are fetched from the upstreams it names. Declared
  // after `agent` and the store: its threads stop before either goes.
  // internode reads present the cluster token, never a viewer's.
  auto cluster_bearer = [tokens = cluster_token->get()] { return tokens->First(); };
  relay::RelayOptions relay_options;
  relay_options.cluster_token = cluster_bearer;
  relay_options.in_flight = &in_flight;
  relay_options.max_object_bytes = absl::GetFlag(FLAGS_max_object_bytes);  // what the store takes
  relay::Relay relay(relay_options, &origin, relay::UpstreamsFromAgent(&agent), RealClock::Get(),
                     metrics.get());
  // /status: the streams this node relays and where it publishes (S-19, S-23).
  auto shed_sampler = std::make_shared<HostSampler>();
  auto node_status = [&config, &origin_feed, &relay, &recorder, &streams, &sessions,
                      shed_sampler](nlohmann::json& body) {
    v1::LoadReport report;
    streams.FillReport(report);
    nlohmann::json relays = relay.Status();
    nlohmann::json streams_status = StreamsStatus(report, sessions.Count());
    AddStreamRoutes(streams_status, relays, origin_feed.StatusByStream());
    body["streams"] = std::move(streams_status);
    if (auto load = shed_sampler->Last()) {
      body["load"] = {{"cpu_percent", load->cpu_percent},
                      {"in_kbit", load->in_kbit},
                      {"out_kbit", load->out_kbit}};
    }
    body["relayed_streams"] = config.Get()->relayed;
    body["relays"] = std::move(relays);
    body["publish_targets"] = origin_feed.Status();
    body["archive"] = recorder.Status();
  };
  // D-3: archive reads open their files on a pool of their own (open/stat may block).
  // The files before the pool: the pool's threads (joined when it goes) may still use them.
  OpenFiles archive_files(absl::GetFlag(FLAGS_archive_open_files));
  boost::asio::thread_pool archive_disk(2);
  // An edge relays archive requests for the streams it relays (D-3, S-19).
  relay::ArchiveProxyOptions archive_proxy_options;
  archive_proxy_options.cluster_token = cluster_bearer;
  archive_proxy_options.max_cache_bytes = absl::GetFlag(FLAGS_edge_archive_cache_bytes);
  relay::ArchiveProxy archive_proxy(archive_proxy_options, relay::UpstreamsFromAgent(&agent),
                                    RealClock::Get(), metrics.get());
  // Z-22: what this node cannot answer from its own view, central's Route answers.
  RouteClient route_client(
      [&agent] { return agent ? agent->CurrentCentral() : std::string(); },
      [tokens = cluster_token->get(), node_id] { return tokens->TokenFor(node_id); },
      std::chrono::milliseconds(absl::GetFlag(FLAGS_central_route_deadline_ms)));
  CentralRedirect::Options redirect_options;
  redirect_options.cache_ttl =
      std::chrono::milliseconds(absl::GetFlag(FLAGS_central_route_cache_ms));
  CentralRedirect central_redirect(
      redirect_options, node_id,
      [&route_client](v1::RouteRequest request, CentralRedirect::Answer done) {
        route_client.Route(std::move(request), std::move(done));
      },
      RealClock::Get(), metrics.get());
  // Calls in flight answer through central_redirect: they end before it goes.
  absl::Cleanup stop_routes = [&route_client] { route_client.Stop(); };
  ArchiveContext archive_context{&archive_index, &recorder,        &origin,
                                 &shedder,       &archive_disk,    &RealClock::Get(),
                                 &ott,           &relay,           &archive_proxy,
                                 &archive_files, &central_redirect};
  // A-1…A-5: every viewer request of a protected stream is checked first.
  AccessGate::Options access_options;
  access_options.node = node_id;
  access_options.backend.tls = *std::move(backend_tls);
  AccessGate access_gate(&config, cluster_token->get(), RealClock::Get(), metrics.get(),
                         std::move(access_options));
  ViewerContext viewer_context{
      &origin, &streams,         &sessions, &origin_delivery,  &ott,
      &relay,  &archive_context, &shedder,  &central_redirect, &access_gate};
  viewer_context.tune_in_hold_pct = absl::GetFlag(FLAGS_ll_tune_in_hold_pct);
  // However Run() ends, the servers stop (threads joined) before anything above goes.
  absl::Cleanup stop_servers = [&] {
    for (http::Server* server : {viewer_server.get(), publish_server.get(), https_server.get()}) {
      if (server) server->Stop();
    }
    for (RtmpListener* listener : {rtmp_listener.get(), rtmps_listener.get()}) {
      if (listener) listener->Stop();
    }
  };
  auto build_viewer_router = [&] {
    http::Router router;
    AddNodeRoutes(router, identity, &config, metrics.get(), connected, node_status);
    AddViewerRoutes(router, viewer_context);
    return router;
  };
  http::Router viewer_router = build_viewer_router();
  http::ServerOptions viewer;
  http::ApplyServerFlags(viewer);
  viewer.name = "http";
  viewer.listen = absl::GetFlag(FLAGS_listen);
  viewer.threads = absl::GetFlag(FLAGS_http_threads);
  viewer.registry = metrics.get();
  viewer.trusted_proxies = trusted;
  auto viewer_started = http::Server::Start(viewer, std::move(viewer_router));
  if (!viewer_started.ok()) {
    log::Error("startup_failed", {{"error", viewer_started.status().ToString()}});
    return 1;
  }
  viewer_server = *std::move(viewer_started);

  const std::string https_listen = absl::GetFlag(FLAGS_https_listen);
  std::vector<std::string> certificate_names;
  if (!https_listen.empty()) {
    http::ServerOptions tls = viewer;
    tls.name = "https";
    tls.scheme = "https";
    tls.listen = https_listen;
    tls.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
    tls.tls_key_file = absl::GetFlag(FLAGS_tls_key);
    auto names = http::CertificateDnsNames(tls.tls_cert_file);
    auto started = names.ok() ? http::Server::Start(tls, build_viewer_router())
                              : absl::StatusOr<std::unique_ptr<http::Server>>(names.status());
    if (!started.ok()) {
      log::Error("startup_failed", {{"error", started.status().ToString()}});
      return 1;
    }
    https_server = *std::move(started);
    certificate_names = *names;
  }

  http::Router publish_router;
  AddNodeRoutes(publish_router, identity, &config, metrics.get(), connected, node_status);
  origin_delivery.AddPublishRoutes(publish_router);
  http::ServerOptions publish;
  http::ApplyServerFlags(publish);
  publish.name = "publish";
  publish.listen = absl::GetFlag(FLAGS_publish_listen);
  publish.threads = absl::GetFlag(FLAGS_publish_threads);
  publish.registry = metrics.get();
  publish.trusted_proxies = trusted;
  publish.max_buffered_body_bytes = absl::GetFlag(FLAGS_max_buffered_upload_bytes);
  auto publish_started = http::Server::Start(publish, std::move(publish_router));
  if (!publish_started.ok()) {
    log::Error("startup_failed", {{"error", publish_started.status().ToString()}});
    return 1;
  }
  publish_server = *std::move(publish_started);
  for (const char* name : {"rtmp", "rtmps"}) {
    RtmpListenerOptions options;
    options.name = name;
    const bool secure = options.name == "rtmps";
    options.listen = absl::GetFlag(secure ? FLAGS_rtmps_listen : FLAGS_rtmp_listen);
    if (options.listen.empty()) continue;
    options.app = absl::GetFlag(FLAGS_rtmp_app);
    if (secure) {
      options.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
      options.tls_key_file = absl::GetFlag(FLAGS_tls_key);
      if (options.tls_cert_file.empty() || options.tls_key_file.empty()) {
        log::Error("startup_failed", {{"error", "--rtmps-listen needs --tls-cert and --tls-key"}});
        return 1;
      }
    }
    auto started = RtmpListener::Start(options, &streams, &publish_auth, metrics.get());
    if (!started.ok()) {
      log::Error("startup_failed", {{"error", started.status().ToString()}});
      return 1;
    }
    (secure ? rtmps_listener : rtmp_listener) = *std::move(started);
  }

  AgentOptions agent_options;
  agent_options.central = absl::GetFlag(FLAGS_central);
  agent_options.cluster_token = cluster_token->get();
  agent_options.max_receive_message_bytes = absl::GetFlag(FLAGS_central_max_message_bytes);
  auto& reg = agent_options.registration;
  reg.set_node_id(node_id);
  reg.set_version(kVersion);
  reg.set_protocol_version(meshwork::v1::kProtocolVersion);
  reg.set_role(role);
  reg.set_hostname(identity.hostname);
  reg.set_public_port(absl::GetFlag(FLAGS_public_port));
  reg.set_internal_address(internal_address);
  auto bound_host = http::SplitHostPort(viewer_server->bound_address());
  if (bound_host.ok()) reg.add_addresses(bound_host->first);
  auto* l = reg.add_listeners();
  l->set_name("http");
  l->set_scheme("http");
  l->set_port(viewer_server->port());
  l = reg.add_listeners();
  l->set_name("publish");
  l->set_scheme("http");
  l->set_port(publish_server->port());

  if (https_server) {
    l = reg.add_listeners();
    l->set_name("https");
    l->set_scheme("https");
    l->set_port(https_server->port());
    for (const auto& name : certificate_names) reg.add_certificate_names(name);
  }
  std::vector<const http::Server*> servers = {viewer_server.get(), publish_server.get()};
  if (https_server) servers.push_back(https_server.get());
  NodeAlerts node_alerts(node_id, metrics.get());  // M-2
  LoadReportSources report_sources{servers,        shed_sampler, &shedder,      &ott,
                                   &streams,       &sessions,    &node_metrics, &origin,
                                   &archive_index, &node_alerts, &recorder};
  auto filler = [report_sources](v1::LoadReport& report) {
    FillLoadReport(report_sources, report);
  };
  agent_options.on_config = [&streams, &origin, &ott, &relay, &origin_feed, &recorder,
                             &shedder](std::shared_ptr<const NodeConfig> next) {
    // The store first: a pipeline started by the config publishes into its stream at once.
    origin.Apply(next->streams);
    recorder.Apply(next->streams, next->relayed);
    streams.Apply(*next);
    relay.Apply(next->relayed);
    origin_feed.Apply(*next);
    ott.Apply(*next);
    shedder.ApplySettings(next->settings);  // L-16: the node's alert thresholds
  };
  agent = std::make_unique<Agent>(agent_options, &config, filler, metrics.get());
  agent->Start();

  nlohmann::json ready = {{"http", viewer_server->bound_address()},
                          {"publish", publish_server->bound_address()}};
  if (https_server) ready["https"] = https_server->bound_address();
  if (rtmp_listener) ready["rtmp"] = rtmp_listener->bound_address();
  if (rtmps_listener) ready["rtmps"] = rtmps_listener->bound_address();
  AnnounceReady(ready);
  log::Info("streamer_started",
            {{"node", node_id}, {"role", identity.role}, {"central", agent_options.central}});
  int sig = WaitForShutdownOrReloadSignal();
  for (; sig == SIGHUP; sig = WaitForShutdownOrReloadSignal()) {  // reread certificates
    if (https_server) LogTlsReload("https", https_server->ReloadTls());
    if (rtmps_listener) LogTlsReload("rtmps", rtmps_listener->ReloadTls());
  }
  log::Info("streamer_stopping", {{"signal", sig}});
  viewer_server->Stop();
  publish_server->Stop();
  if (https_server) https_server->Stop();
  if (rtmp_listener) rtmp_listener->Stop();
  if (rtmps_listener) rtmps_listener->Stop();
  agent->Stop();
  log::Info("streamer_stopped");
  return 0;
}

}  // namespace
}  // namespace meshwork::streamer

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("Meshwork streamer: ingest, origin or edge node");
  meshwork::NormalizeFlagNames(argc, argv);
  meshwork::ConfigureServerRuntime();
  absl::ParseCommandLine(argc, argv);
  return meshwork::streamer::Run();
}
