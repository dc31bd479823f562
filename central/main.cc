// central: the control plane. Wiring only; the parts live in store/, model/, cluster/, rpc/,
// api/, ott/.
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <memory>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "boost/asio/post.hpp"
#include "boost/asio/thread_pool.hpp"
#include "central/api/admin_api.h"
#include "central/api/console_routes.h"
#include "central/api/viewer_api.h"
#include "central/cluster/anchor_keeper.h"
#include "central/cluster/node_registry.h"
#include "central/cluster/placer.h"
#include "central/etcd/etcd_store.h"
#include "central/etcd/leader_election.h"
#include "central/model/config_service.h"
#include "central/ott/ott_service.h"
#include "central/ott/viewing_keys.h"
#include "central/routing/routing_service.h"
#include "central/rpc/control_service.h"
#include "central/rpc/grpc_gate.h"
#include "central/rpc/routing_rpc.h"
#include "central/store/store.h"
#include "common/crypto/token_file.h"
#include "common/http/metrics_handler.h"
#include "common/http/server.h"
#include "common/http/server_flags.h"
#include "common/log/log.h"
#include "common/process/process.h"
#include "grpcpp/grpcpp.h"
#include "prometheus/gauge.h"

ABSL_FLAG(std::string, data_dir, "",
          "directory of central's RocksDB store (required without --etcd-endpoints; with it, "
          "only the default place of the cluster token)");
ABSL_FLAG(std::string, etcd_endpoints, "",
          "C-10: HOST:PORT,… of the etcd members to keep the configuration in, shared by every "
          "central given the same endpoints and prefix; empty: embedded RocksDB in --data-dir");
ABSL_FLAG(std::string, etcd_prefix, "/meshwork/", "key prefix of this cluster in etcd");
ABSL_FLAG(std::string, etcd_ca_file, "", "PEM CA bundle: talk to etcd over TLS");
ABSL_FLAG(std::string, etcd_cert_file, "", "PEM client certificate for etcd (with --etcd-ca-file)");
ABSL_FLAG(std::string, etcd_key_file, "", "PEM client key for etcd");
ABSL_FLAG(std::string, etcd_user, "", "etcd user name, when etcd has authentication on");
ABSL_FLAG(std::string, etcd_password_file, "", "file holding the etcd user's password");
ABSL_FLAG(int, etcd_timeout_ms, 3000, "deadline of each etcd request, per member tried");
ABSL_FLAG(int, etcd_compact_retain_s, 300,
          "C-10: etcd history the leader keeps, in seconds (it compacts what is older: every "
          "report is a new revision and etcd keeps all of them unless compacted); 0 = never "
          "compact (then run etcd with --auto-compaction-retention)");
ABSL_FLAG(int, leader_lease_s, 5,
          "C-10: TTL of the leader's etcd lease; a dead leader is replaced within it");
ABSL_FLAG(std::string, instance_id, "",
          "this central's name among several (default: the host name and HTTP listen address)");
ABSL_FLAG(std::string, http_listen, "127.0.0.1:8080", "ADDR:PORT of the HTTP listener");
ABSL_FLAG(std::string, grpc_listen, "127.0.0.1:9090", "ADDR:PORT of the gRPC listener");
ABSL_FLAG(std::string, https_listen, "",
          "ADDR:PORT of the HTTPS listener (needs --tls-cert and --tls-key; SIGHUP reloads them)");
ABSL_FLAG(std::string, tls_cert, "", "PEM certificate chain for --https-listen");
ABSL_FLAG(std::string, tls_key, "", "PEM private key for --https-listen");
ABSL_FLAG(std::string, api_token_file, "",
          "file of admin API bearer tokens, one per line (M-3); when set, every /central/api-v4/ "
          "call needs `Authorization: Bearer <token>`; re-read within a second of a change");
ABSL_FLAG(std::string, cluster_token_file, "",
          "file of cluster tokens, one per line, that streamers present on the control channel "
          "(M-3); default <data-dir>/cluster-token, created with a random token when absent");
ABSL_FLAG(int, grpc_max_concurrent_streams, 100,
          "concurrent gRPC streams per connection (R-3; a streamer uses 1)");
ABSL_FLAG(int, grpc_max_connections, 4096,
          "control-channel connections central relays at once (R-3; one per streamer)");
ABSL_FLAG(int, grpc_max_connections_per_address, 64,
          "control-channel connections from one client address (R-3)");
ABSL_FLAG(int, grpc_handshake_timeout_ms, 10'000,
          "a control-channel client must acknowledge central's HTTP/2 SETTINGS within this "
          "long, or it is disconnected (R-3)");
ABSL_FLAG(int, max_sessions_per_node, 4,
          "control Sessions one node id holds at once (R-3); a newer one ends the oldest, so a "
          "node whose link died silently is not locked out by its leftover sessions");
ABSL_FLAG(int, grpc_auth_timeout_ms, 10'000,
          "a control-channel connection carrying no call with a valid cluster token this long "
          "after it opened is closed (R-3); 0 turns the deadline off");
ABSL_FLAG(int, grpc_max_receive_message_bytes, 4 << 20,
          "largest gRPC message central accepts (a load report or a registration)");
ABSL_FLAG(int, grpc_max_send_message_bytes, 64 << 20,
          "largest gRPC message central sends (a full configuration snapshot)");
ABSL_FLAG(int64_t, grpc_memory_limit_bytes, int64_t{256} << 20,
          "memory gRPC may use for its connections and calls (grpc::ResourceQuota, R-3)");
ABSL_FLAG(int, grpc_max_threads, 64, "threads gRPC may use (grpc::ResourceQuota)");
ABSL_FLAG(int, grpc_max_connection_idle_ms, 5 * 60 * 1000,
          "a gRPC connection without a call for this long is closed (a streamer's session "
          "keeps its connection busy)");
ABSL_FLAG(int, http_threads, 2, "worker threads of the HTTP listener");
ABSL_FLAG(std::string, public_url, "",
          "central's base URL for players, e.g. https://central.example.net (content steering's "
          "server URI, CS-2); empty: http:// and the HTTP listener's bound address");
ABSL_FLAG(int64_t, steering_max_answers_per_s, 20000,
          "steering answers per second before 429 + Retry-After (CS-2)");
ABSL_FLAG(int64_t, steering_max_answers_per_client_per_s, 200,
          "steering answers per second to one client address (an IPv6 /64) before 429 (R-3); "
          "0: no per-address share");
ABSL_FLAG(int64_t, steering_max_moves_per_s, 20,
          "viewers per stream and second a steering answer moves for load alone (CS-3)");
ABSL_FLAG(std::string, http_delivery, "redirect",
          "Z-23: how the HTTP listener delivers viewers: redirect (302 to the node) or proxy");
ABSL_FLAG(std::string, https_delivery, "redirect",
          "Z-23: how the HTTPS listener delivers viewers: redirect or proxy");
ABSL_FLAG(int, proxy_timeout_ms, 15'000,
          "Z-23: deadline of one proxied viewer request (covers LL-HLS blocking reloads)");
ABSL_FLAG(int, proxy_max_in_flight, 1024,
          "Z-23: proxied viewer requests at once; beyond it 503 + Retry-After");
ABSL_FLAG(std::string, console_dir, "/usr/share/meshwork/console",
          "directory of the web console's files (M-7), served under /console/; at the default "
          "path a missing directory just means no console");
ABSL_FLAG(int, offline_after_ms, 3000, "a node without a report for this long is offline (C-4)");
ABSL_FLAG(int64_t, viewing_key_rotate_s, 86400,
          "rotate the OTT viewing key this often, in seconds; 0 = never (O-7)");
ABSL_FLAG(int64_t, viewing_key_overlap_s, 6 * 3600 + 600,
          "a replaced viewing key is still accepted this long, in seconds (O-7; the 6 h pass "
          "lifetime plus the 240 s clock tolerance and a margin for the push)");
ABSL_FLAG(int, ott_min_protocol_version, 1,
          "OTT group members with an older protocol version are not eligible (O-4); a group's "
          "streams may raise it for their group with ott.min_protocol_version");

namespace meshwork::central {
namespace {

// what one client can make central hold is bounded by the gate in front of gRPC
// (connections, streams before the SETTINGS ACK, header blocks, floods: grpc_gate.h) and by
// gRPC per connection once acknowledged (streams, message size). gRPC 1.51's resource quota
// is soft (it cancels streams under pressure, never refuses one); it stays as a second
// line. No maximum connection age:
// a streamer's Session lives as long as its connection, and ending it would only make every
// node reconnect.
void ConfigureGrpcLimits(grpc::ServerBuilder& builder) {
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                             std::max(1, absl::GetFlag(FLAGS_grpc_max_concurrent_streams)));
  builder.SetMaxReceiveMessageSize(absl::GetFlag(FLAGS_grpc_max_receive_message_bytes));
  builder.SetMaxSendMessageSize(absl::GetFlag(FLAGS_grpc_max_send_message_bytes));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS,
                             std::max(1000, absl::GetFlag(FLAGS_grpc_max_connection_idle_ms)));
  grpc::ResourceQuota quota("central-grpc");
  quota.Resize(static_cast<size_t>(
      std::max<int64_t>(int64_t{16} << 20, absl::GetFlag(FLAGS_grpc_memory_limit_bytes))));
  quota.SetMaxThreads(std::max(4, absl::GetFlag(FLAGS_grpc_max_threads)));
  builder.SetResourceQuota(quota);
}

GrpcGateOptions GrpcGateOptionsFromFlags() {
  GrpcGateOptions o;
  o.listen = absl::GetFlag(FLAGS_grpc_listen);
  o.max_connections = static_cast<size_t>(std::max(1, absl::GetFlag(FLAGS_grpc_max_connections)));
  o.max_per_address =
      static_cast<size_t>(std::max(1, absl::GetFlag(FLAGS_grpc_max_connections_per_address)));
  o.handshake_timeout =
      std::chrono::milliseconds(std::max(100, absl::GetFlag(FLAGS_grpc_handshake_timeout_ms)));
  const int auth_ms = absl::GetFlag(FLAGS_grpc_auth_timeout_ms);
  o.auth_timeout = std::chrono::milliseconds(auth_ms <= 0 ? 0 : std::max(100, auth_ms));
  o.limits.streams_before_ack =
      static_cast<uint32_t>(std::max(1, absl::GetFlag(FLAGS_grpc_max_concurrent_streams)));
  return o;
}

// The embedded store, or (C-10) the shared one on etcd with the client it talks through.
struct OpenedStore {
  std::unique_ptr<Store> store;
  std::shared_ptr<etcd::EtcdClient> etcd;
};

absl::StatusOr<OpenedStore> OpenConfiguredStore(const std::string& data_dir) {
  OpenedStore out;
  const std::string endpoints = absl::GetFlag(FLAGS_etcd_endpoints);
  if (endpoints.empty()) {
    auto store = OpenRocksDbStore(data_dir);
    if (!store.ok()) return store.status();
    out.store = *std::move(store);
    return out;
  }
  etcd::EtcdOptions options;
  options.endpoints = etcd::ParseEndpoints(endpoints);
  options.ca_file = absl::GetFlag(FLAGS_etcd_ca_file);
  options.cert_file = absl::GetFlag(FLAGS_etcd_cert_file);
  options.key_file = absl::GetFlag(FLAGS_etcd_key_file);
  options.user = absl::GetFlag(FLAGS_etcd_user);
  if (const std::string path = absl::GetFlag(FLAGS_etcd_password_file); !path.empty()) {
    auto file = crypto::TokenFile::Open(path, RealClock::Get());
    if (!file.ok()) return file.status();
    options.password = (*file)->First();
    if (options.password.empty()) return absl::InvalidArgumentError(path + " holds no password");
  }
  options.request_timeout =
      std::chrono::milliseconds(std::max(100, absl::GetFlag(FLAGS_etcd_timeout_ms)));
  auto client = etcd::EtcdClient::Connect(std::move(options));
  if (!client.ok()) return client.status();
  out.etcd = *std::move(client);
  etcd::EtcdStoreOptions store_options;
  store_options.prefix = absl::GetFlag(FLAGS_etcd_prefix);
  auto store = etcd::EtcdStore::Open(out.etcd, store_options);
  if (!store.ok()) return store.status();
  out.store = *std::move(store);
  return out;
}

int Run() {
  const std::string data_dir = absl::GetFlag(FLAGS_data_dir);
  const bool shared_store = !absl::GetFlag(FLAGS_etcd_endpoints).empty();
  if (data_dir.empty() && !shared_store) {
    log::Error("startup_failed", {{"error", "--data-dir is required (or --etcd-endpoints)"}});
    return 2;
  }
  if (data_dir.empty() && absl::GetFlag(FLAGS_cluster_token_file).empty()) {
    log::Error("startup_failed",
               {{"error",
                 "with --etcd-endpoints and no --data-dir, give --cluster-token-file "
                 "(the same file on every central)"}});
    return 2;
  }
  const std::string https_listen = absl::GetFlag(FLAGS_https_listen);
  if (!https_listen.empty() &&
      (absl::GetFlag(FLAGS_tls_cert).empty() || absl::GetFlag(FLAGS_tls_key).empty())) {
    log::Error("startup_failed", {{"error", "--https-listen needs --tls-cert and --tls-key"}});
    return 2;
  }
  BlockShutdownAndReloadSignals();

  auto opened = OpenConfiguredStore(data_dir);
  if (!opened.ok()) {
    log::Error("startup_failed", {{"error", opened.status().ToString()}});
    return 1;
  }
  std::unique_ptr<Store>* store = &opened->store;
  std::string instance_id = absl::GetFlag(FLAGS_instance_id);
  if (instance_id.empty()) {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    instance_id = std::string(host) + "/" + absl::GetFlag(FLAGS_http_listen);
  }
  // M-3: secure by default. Without --cluster-token-file central makes its own token next to
  // its store; operators copy that file to the streamers (--cluster-token-file there).
  std::string cluster_token_path = absl::GetFlag(FLAGS_cluster_token_file);
  if (cluster_token_path.empty()) {
    cluster_token_path = data_dir + "/cluster-token";
    auto created = crypto::EnsureTokenFile(cluster_token_path);
    if (!created.ok()) {
      log::Error("startup_failed", {{"error", created.status().ToString()}});
      return 1;
    }
    log::Info(*created ? "cluster_token_created" : "cluster_token_default",
              {{"path", cluster_token_path}});
  }
  auto cluster_tokens = crypto::TokenFile::Open(cluster_token_path, RealClock::Get());
  if (!cluster_tokens.ok()) {
    log::Error("startup_failed", {{"error", cluster_tokens.status().ToString()}});
    return 1;
  }
  std::unique_ptr<crypto::TokenFile> api_tokens;
  if (const std::string path = absl::GetFlag(FLAGS_api_token_file); !path.empty()) {
    auto opened = crypto::TokenFile::Open(path, RealClock::Get());
    if (!opened.ok()) {
      log::Error("startup_failed", {{"error", opened.status().ToString()}});
      return 1;
    }
    api_tokens = *std::move(opened);
  } else {
    log::Warn("admin_api_open",
              {{"reason", "no --api-token-file: /central/api-v4/ needs no token"}});
  }

  std::string console_dir = absl::GetFlag(FLAGS_console_dir);
  if (console_dir == "/usr/share/meshwork/console" && !std::filesystem::exists(console_dir)) {
    console_dir.clear();
  }
  auto console = LoadConsole(console_dir);
  if (!console.ok()) {
    log::Error("startup_failed", {{"error", console.status().ToString()}});
    return 1;
  }
  log::Info("console", {{"dir", console_dir.empty() ? "none" : console_dir},
                        {"files", std::to_string((*console)->files.size())}});

  auto config = ConfigService::Load(store->get());
  if (!config.ok()) {
    log::Error("startup_failed", {{"error", config.status().ToString()}});
    return 1;
  }
  auto metrics = std::make_shared<prometheus::Registry>();
  auto& revision_gauge = prometheus::BuildGauge()
                             .Name("meshwork_config_revision")
                             .Help("Revision of central's configuration")
                             .Register(*metrics)
                             .Add({});
  revision_gauge.Set(static_cast<double>((*config)->Current()->revision));

  NodeRegistry registry(RealClock::Get(),
                        std::chrono::milliseconds(absl::GetFlag(FLAGS_offline_after_ms)),
                        store->get(), metrics.get());
  RoutingService routing(&registry, metrics.get());
  (*config)->Subscribe(
      [&registry, &routing, &revision_gauge](std::shared_ptr<const ClusterConfig> next) {
        revision_gauge.Set(static_cast<double>(next->revision));
        routing.ConfigChanged(*next);
        registry.ConfigChanged(std::move(next));
      },
      ConfigService::From::kNow);
  registry.StartSweeper(std::chrono::milliseconds(200));
  // C-10: every central routes on every node, including those attached to another central.
  (*store)->SetReportListener(
      [&registry](const std::string& node, const std::optional<std::string>& value) {
        registry.RemoteReport(node, value);
      });
  // Before the registry and routing go: the store's thread must no longer reach them (a
  // change made by another central is published to both).
  absl::Cleanup stop_following = [&store] {
    (*store)->SetReportListener(nullptr);
    (*store)->SetChangeListener(nullptr);
  };
  std::unique_ptr<Leadership> leadership;
  if (opened->etcd) {
    auto election = std::make_unique<etcd::LeaderElection>(
        opened->etcd, etcd::NormalizedPrefix(absl::GetFlag(FLAGS_etcd_prefix)) + "leader",
        instance_id, std::chrono::seconds(absl::GetFlag(FLAGS_leader_lease_s)), RealClock::Get(),
        metrics.get(),
        std::chrono::seconds(std::max(0, absl::GetFlag(FLAGS_etcd_compact_retain_s))));
    election->Start();
    leadership = std::move(election);
  } else {
    leadership = std::make_unique<SoleLeader>(instance_id);
  }

  // O-7: the first viewing key is created before any node can register.
  ott::ViewingKeyOptions key_options;
  key_options.rotate_every =
      std::chrono::seconds(std::max<int64_t>(0, absl::GetFlag(FLAGS_viewing_key_rotate_s)));
  key_options.overlap =
      std::chrono::seconds(std::max<int64_t>(0, absl::GetFlag(FLAGS_viewing_key_overlap_s)));
  ott::ViewingKeyManager viewing_keys(config->get(), RealClock::Get(), key_options);
  // several centrals starting together race for the first key. The loser's store has
  // read the winner's write when ABORTED comes back (EtcdStore::CommitIf), so its retry
  // finds the key; a short back-off covers a store still catching up.
  absl::Status ensured = viewing_keys.EnsureKey();
  for (int i = 0; i < 10 && absl::IsAborted(ensured); ++i) {
    log::Info("viewing_key_race_retry", {{"attempt", i + 1}, {"error", ensured.ToString()}});
    std::this_thread::sleep_for(std::chrono::milliseconds(50 * (i + 1)));
    ensured = viewing_keys.EnsureKey();
  }
  if (absl::Status s = ensured; !s.ok()) {
    log::Error("startup_failed", {{"error", s.ToString()}});
    return 1;
  }
  ott::GroupOptions group_options;
  group_options.min_protocol_version =
      static_cast<uint32_t>(std::max(0, absl::GetFlag(FLAGS_ott_min_protocol_version)));
  ott::OttService ott_service(config->get(), &registry, &viewing_keys, RealClock::Get(),
                              group_options, metrics.get());
  ott_service.set_leader_check([&leadership] { return leadership->IsLeader(); });
  ott_service.Start(std::chrono::milliseconds(1000));
  // C-9: count placements, filled on every write of the stream and re-placed by the leader.
  // Declared before every writer (pools, servers), so it outlives them all.
  Placer placer(
      config->get(), [&registry] { return registry.OttNodeStates(); }, RealClock::Get(),
      metrics.get());
  (*config)->SetStreamFiller(
      [&placer](const ClusterConfig& current, const std::string& name, nlohmann::json& stream) {
        placer.Fill(current, name, stream);
      });
  placer.set_leader_check([&leadership] { return leadership->IsLeader(); });
  placer.Start(std::chrono::milliseconds(1000));

  boost::asio::thread_pool blocking_pool(2);
  // S-5: the streams' timeline anchors, from the nodes' reports (writes on the blocking pool,
  // which is joined before the keeper goes).
  AnchorKeeper anchor_keeper(
      config->get(),
      [&blocking_pool](std::function<void()> task) {
        boost::asio::post(blocking_pool, std::move(task));
      },
      RealClock::Get());
  registry.SetReportListener(
      [&anchor_keeper](const std::string& node, const meshwork::v1::LoadReport& report) {
        anchor_keeper.OnReport(node, report);
      });
  // the gate in front of gRPC keeps a connection past its auth_timeout only once a call
  // on it presented the cluster token; the services tell it so.
  GrpcGate grpc_gate(GrpcGateOptionsFromFlags(), RealClock::Get(), metrics.get());
  auto vouch = [&grpc_gate](const std::string& peer) { grpc_gate.Vouch(peer); };
  ControlService control(config->get(), &registry, &blocking_pool, cluster_tokens->get(),
                         metrics.get());
  control.set_routing(&routing);
  control.set_on_authenticated(vouch);
  control.set_max_sessions_per_node(
      static_cast<size_t>(std::max(1, absl::GetFlag(FLAGS_max_sessions_per_node))));
  grpc::ServerBuilder builder;
  ConfigureGrpcLimits(builder);
  builder.RegisterService(&control);
  RoutingRpc routing_rpc(&routing, cluster_tokens->get(), vouch);
  builder.RegisterService(&routing_rpc);
  // Nodes ping every 2 s to notice a dead link; allow it.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 1000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  // gRPC listens on no port of its own: the gate accepts and relays every connection.
  std::unique_ptr<grpc::Server> grpc_server = builder.BuildAndStart();
  absl::StatusOr<int> gate_port =
      grpc_server ? grpc_gate.Start(grpc_server.get()) : absl::InternalError("gRPC did not start");
  if (!gate_port.ok()) {
    log::Error("startup_failed", {{"error", gate_port.status().ToString()}});
    return 1;
  }
  const int grpc_port = *gate_port;
  log::Info("grpc_listening", {{"port", grpc_port}});

  // Every listener serves the same routes; the listener's scheme shapes redirects (T-6).
  AdminApi api(config->get(), &registry, &routing, &blocking_pool, &ott_service, api_tokens.get());
  ViewerProxyOptions proxy_options;
  proxy_options.timeout =
      std::chrono::milliseconds(std::max(1, absl::GetFlag(FLAGS_proxy_timeout_ms)));
  proxy_options.max_in_flight = std::max(1, absl::GetFlag(FLAGS_proxy_max_in_flight));
  ViewerProxy viewer_proxy(proxy_options, metrics.get());
  auto delivery = [&](const std::string& flag, const char* name) -> absl::StatusOr<ViewerProxy*> {
    if (flag == "redirect") return static_cast<ViewerProxy*>(nullptr);
    if (flag == "proxy") return &viewer_proxy;
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, " must be redirect or proxy, not \"", flag, "\""));
  };
  auto http_delivery = delivery(absl::GetFlag(FLAGS_http_delivery), "http-delivery");
  auto https_delivery = delivery(absl::GetFlag(FLAGS_https_delivery), "https-delivery");
  for (const auto* d : {&http_delivery, &https_delivery}) {
    if (!d->ok()) {
      log::Error("startup_failed", {{"error", d->status().ToString()}});
      return 1;
    }
  }
  SteeringService::Options steering_options;
  steering_options.max_answers_per_s = absl::GetFlag(FLAGS_steering_max_answers_per_s);
  steering_options.max_moves_per_s = absl::GetFlag(FLAGS_steering_max_moves_per_s);
  steering_options.max_answers_per_client_per_s =
      absl::GetFlag(FLAGS_steering_max_answers_per_client_per_s);
  SteeringService steering(steering_options, &routing, config->get(), RealClock::Get(),
                           metrics.get());
  auto build_router = [&](ViewerProxy* proxy) {
    http::Router router;
    api.AddRoutes(router);
    router.Add({http::Verb::get}, "/metrics", http::MetricsHandler(metrics.get()));
    AddConsoleRoutes(router, *console);
    AddViewerRoutes(router, config->get(), &routing, proxy, &steering);
    return router;
  };

  http::ServerOptions options;
  http::ApplyServerFlags(options);
  options.name = "http";
  options.listen = absl::GetFlag(FLAGS_http_listen);
  options.threads = absl::GetFlag(FLAGS_http_threads);
  options.registry = metrics.get();
  ConfigService* config_ptr = config->get();
  options.trusted_proxies = [config_ptr]() -> const net::CidrSet* {
    thread_local Snapshot<ClusterConfig>::ReadCache cache;
    return config_ptr->Read(cache)->trusted_set.get();
  };
  auto http_server = http::Server::Start(options, build_router(*http_delivery));
  if (!http_server.ok()) {
    log::Error("startup_failed", {{"error", http_server.status().ToString()}});
    return 1;
  }
  std::unique_ptr<http::Server> https_server;
  if (!https_listen.empty()) {
    http::ServerOptions tls_options = options;
    tls_options.name = "https";
    tls_options.scheme = "https";
    tls_options.listen = https_listen;
    tls_options.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
    tls_options.tls_key_file = absl::GetFlag(FLAGS_tls_key);
    auto started = http::Server::Start(std::move(tls_options), build_router(*https_delivery));
    if (!started.ok()) {
      log::Error("startup_failed", {{"error", started.status().ToString()}});
      return 1;
    }
    https_server = *std::move(started);
  }

  // CS-1, CS-2: where players reach this central's steering server.
  std::string public_url = absl::GetFlag(FLAGS_public_url);
  if (public_url.empty()) public_url = "http://" + (*http_server)->bound_address();
  while (!public_url.empty() && public_url.back() == '/') public_url.pop_back();
  steering.set_public_base(public_url);
  ott_service.set_steering_base(public_url);

  std::string grpc_host = absl::GetFlag(FLAGS_grpc_listen);
  grpc_host = grpc_host.substr(0, grpc_host.rfind(':'));
  nlohmann::json ready = {{"http", (*http_server)->bound_address()},
                          {"grpc", grpc_host + ":" + std::to_string(grpc_port)}};
  if (https_server) ready["https"] = https_server->bound_address();
  AnnounceReady(ready);
  log::Info("central_started",
            {{"data_dir", data_dir}, {"revision", (*config)->Current()->revision}});

  int sig = WaitForShutdownOrReloadSignal();
  for (; sig == SIGHUP; sig = WaitForShutdownOrReloadSignal()) {
    if (!https_server) {
      log::Info("tls_reload_skipped", {{"reason", "no https listener"}});
      continue;
    }
    absl::Status reloaded = https_server->ReloadTls();
    if (reloaded.ok()) {
      log::Info("tls_reloaded", {{"listener", "https"}});
    } else {
      log::Error("tls_reload_failed", {{"listener", "https"}, {"error", reloaded.ToString()}});
    }
  }
  log::Info("central_stopping", {{"signal", sig}});
  if (https_server) https_server->Stop();
  (*http_server)->Stop();
  ott_service.Stop();
  grpc_gate.Stop();
  grpc_server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  blocking_pool.join();
  log::Info("central_stopped");
  return 0;
}

}  // namespace
}  // namespace meshwork::central

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("Meshwork central: control plane, routing and configuration");
  meshwork::NormalizeFlagNames(argc, argv);
  meshwork::ConfigureServerRuntime();
  absl::ParseCommandLine(argc, argv);
  return meshwork::central::Run();
}
