// simnodes: N simulated streamers against one central, for load tests (P-11).
//
//   simnodes --central=HOST:PORT --cluster-token-file=FILE --count=N [--prefix=sim]
//            [--roles=edge,ingest,...] [--streams=ch1,ch2] [--sessions=MAX] [--duration-s=S]
//            [--api=HOST:PORT --zones=office-1,office-2,... [--api-token-file=FILE]]
//
// Node i (1-based) is `{prefix}-{i}`, its role and zone taken round-robin from the lists (a
// zone `none` leaves that node unzoned). Zones live in central's configuration, so they are
// set with `PATCH /central/api-v4/streamers/{id}` on --api once the nodes have registered.
// Prints `READY {"nodes": N}` on stdout when every node has an open session (and its zone),
// then a status line on stderr every 10 s. Runs until SIGINT/SIGTERM or --duration-s.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/random/random.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"
#include "common/crypto/token_file.h"
#include "common/http/client.h"
#include "common/process/process.h"
#include "meshwork/v1/role_names.h"
#include "nlohmann/json.hpp"
#include "tools/simnodes/sim_node.h"

ABSL_FLAG(std::string, central, "127.0.0.1:9090", "HOST:PORT of central's gRPC listener");
ABSL_FLAG(
    std::string, cluster_token_file, "",
    "file holding the cluster token (required, M-3; e.g. central's <data-dir>/cluster-token)");
ABSL_FLAG(std::string, api_token_file, "",
          "file holding central's admin API token, when central has --api-token-file");
ABSL_FLAG(int, count, 1, "number of simulated nodes");
ABSL_FLAG(std::string, prefix, "sim", "node ids are PREFIX-1 … PREFIX-N");
ABSL_FLAG(std::string, roles, "edge", "comma-separated roles, assigned round-robin");
ABSL_FLAG(std::string, zones, "",
          "comma-separated zones, assigned round-robin through --api (`none` = unzoned)");
ABSL_FLAG(std::string, api, "", "HOST:PORT of central's HTTP listener (needed for --zones)");
ABSL_FLAG(std::string, streams, "", "comma-separated streams every node reports as working");
ABSL_FLAG(int, sessions, 0, "each report carries a random play_sessions in 0..MAX");
ABSL_FLAG(int, duration_s, 0, "run this long; 0 = until SIGINT/SIGTERM");
ABSL_FLAG(int, interval_ms, 1000, "load report interval");
ABSL_FLAG(int, register_timeout_s, 120, "give up when not all nodes registered by then");

namespace meshwork::sim {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

std::vector<std::string> SplitList(const std::string& text) {
  return absl::StrSplit(text, ',', absl::SkipWhitespace());
}

bool SetZones(const std::string& api, const std::string& api_token,
              const std::vector<std::string>& ids, const std::vector<std::string>& zones) {
  const size_t colon = api.rfind(':');
  if (colon == std::string::npos) {
    std::fprintf(stderr, "simnodes: --api must be HOST:PORT\n");
    return false;
  }
  const std::string host = api.substr(0, colon);
  const int port = std::atoi(api.c_str() + colon + 1);
  for (size_t i = 0; i < ids.size(); ++i) {
    const std::string& zone = zones[i % zones.size()];
    nlohmann::json body = {
        {"zone", zone == "none" ? nlohmann::json(nullptr) : nlohmann::json(zone)}};
    http::ClientRequest request;
    request.host = host;
    request.port = static_cast<uint16_t>(port);
    request.method = http::Verb::patch;
    request.target = "/central/api-v4/streamers/" + ids[i];
    request.headers = {{"Content-Type", "application/json"}};
    if (!api_token.empty()) request.headers.emplace_back("Authorization", "Bearer " + api_token);
    request.body = body.dump();
    auto response = http::Fetch(request);
    if (!response.ok()) {
      std::fprintf(stderr, "simnodes: PATCH %s: %s\n", request.target.c_str(),
                   response.status().ToString().c_str());
      return false;
    }
    if (response->result_int() != 200) {
      std::fprintf(stderr, "simnodes: PATCH %s: HTTP %u %s\n", request.target.c_str(),
                   response->result_int(), response->body().c_str());
      return false;
    }
  }
  return true;
}

void PrintStatus(const SimCluster& cluster, const char* what) {
  const SimStats s = cluster.stats();
  std::fprintf(stderr,
               "simnodes: %s nodes=%zu open=%zu opening=%zu registering=%zu waiting=%zu "
               "reports_sent=%llu reports_skipped=%llu updates_received=%llu "
               "register_failures=%llu sessions_lost=%llu\n",
               what, s.nodes, s.open, s.opening, s.registering, s.waiting,
               static_cast<unsigned long long>(s.reports_sent),
               static_cast<unsigned long long>(s.reports_skipped),
               static_cast<unsigned long long>(s.config_updates_received),
               static_cast<unsigned long long>(s.register_failures),
               static_cast<unsigned long long>(s.sessions_lost));
}

int Run() {
  const int count = absl::GetFlag(FLAGS_count);
  const std::string prefix = absl::GetFlag(FLAGS_prefix);
  const std::vector<std::string> role_names = SplitList(absl::GetFlag(FLAGS_roles));
  const std::vector<std::string> zones = SplitList(absl::GetFlag(FLAGS_zones));
  const std::vector<std::string> stream_names = SplitList(absl::GetFlag(FLAGS_streams));
  const std::string api = absl::GetFlag(FLAGS_api);
  const int max_sessions = absl::GetFlag(FLAGS_sessions);
  const int duration_s = absl::GetFlag(FLAGS_duration_s);

  if (count <= 0 || prefix.empty() || role_names.empty() || max_sessions < 0 || duration_s < 0 ||
      absl::GetFlag(FLAGS_interval_ms) <= 0) {
    std::fprintf(stderr, "simnodes: need --count>0, a --prefix, --roles and non-negative values\n");
    return 2;
  }
  std::vector<v1::Role> roles;
  for (const std::string& name : role_names) {
    v1::Role role;
    if (!v1::ParseRole(name, &role)) {
      std::fprintf(stderr, "simnodes: unknown role \"%s\" (ingest, origin, edge)\n", name.c_str());
      return 2;
    }
    roles.push_back(role);
  }
  // First token of a token file ("" when it cannot be read or lists none).
  auto first_token = [](const std::string& path) -> std::optional<std::string> {
    auto file = crypto::TokenFile::Open(path, RealClock::Get());
    if (!file.ok()) {
      std::fprintf(stderr, "simnodes: %s\n", file.status().ToString().c_str());
      return std::nullopt;
    }
    return (*file)->First();
  };
  if (absl::GetFlag(FLAGS_cluster_token_file).empty()) {
    std::fprintf(stderr, "simnodes: --cluster-token-file is required\n");
    return 2;
  }
  const std::optional<std::string> cluster_token =
      first_token(absl::GetFlag(FLAGS_cluster_token_file));
  if (!cluster_token) return 2;
  std::string api_token;
  if (!absl::GetFlag(FLAGS_api_token_file).empty()) {
    auto token = first_token(absl::GetFlag(FLAGS_api_token_file));
    if (!token) return 2;
    api_token = *token;
  }
  if (!zones.empty() && api.empty()) {
    std::fprintf(stderr, "simnodes: --zones needs --api=HOST:PORT (central's HTTP listener)\n");
    return 2;
  }

  BlockShutdownSignals();  // before any thread starts, so all inherit the mask
  absl::Notification shutdown;
  std::thread signals([&shutdown] {
    WaitForShutdownSignal();
    shutdown.Notify();
  });
  const auto started = std::chrono::steady_clock::now();
  int exit_code = 0;
  {
    SimCluster cluster(absl::GetFlag(FLAGS_central), *cluster_token,
                       milliseconds(absl::GetFlag(FLAGS_interval_ms)));
    if (max_sessions > 0) {
      cluster.SetBeforeReport(
          [max_sessions, rng = std::make_shared<absl::BitGen>()](SimNodeSpec& spec) {
            spec.play_sessions = absl::Uniform<uint64_t>(absl::IntervalClosed, *rng, 0,
                                                         static_cast<uint64_t>(max_sessions));
          });
    }
    std::vector<std::string> ids;
    for (int i = 0; i < count; ++i) {
      SimNodeSpec spec;
      spec.id = prefix + "-" + std::to_string(i + 1);
      spec.hostname = spec.id + ".sim.invalid";
      for (char& c : spec.hostname) {
        if (c == '_') c = '-';
      }
      spec.role = roles[i % roles.size()];
      for (const std::string& name : stream_names) spec.streams.push_back({name, true});
      ids.push_back(spec.id);
      cluster.Add(spec);
    }

    const auto give_up =
        std::chrono::steady_clock::now() + seconds(absl::GetFlag(FLAGS_register_timeout_s));
    bool registered = false;
    auto next_progress = std::chrono::steady_clock::now() + seconds(10);
    while (!registered && !shutdown.HasBeenNotified()) {
      registered = cluster.WaitRegistered(milliseconds(200));
      const auto now = std::chrono::steady_clock::now();
      if (!registered && now > give_up) break;
      if (!registered && now > next_progress) {
        PrintStatus(cluster, "registering");
        next_progress += seconds(10);
      }
    }
    if (!registered) {
      PrintStatus(cluster, shutdown.HasBeenNotified() ? "interrupted" : "registration timed out");
      exit_code = shutdown.HasBeenNotified() ? 0 : 1;
    } else if (!zones.empty() && !SetZones(api, api_token, ids, zones)) {
      exit_code = 1;
    } else {
      AnnounceReady({{"nodes", count}});
      PrintStatus(cluster, "ready");
      const auto deadline = started + seconds(duration_s);
      auto next_status = std::chrono::steady_clock::now() + seconds(10);
      while (true) {
        auto until = next_status;
        if (duration_s > 0) until = std::min(until, deadline);
        const auto wait =
            std::chrono::duration_cast<milliseconds>(until - std::chrono::steady_clock::now());
        if (shutdown.WaitForNotificationWithTimeout(
                absl::Milliseconds(std::max<int64_t>(wait.count(), 0)))) {
          break;
        }
        const auto now = std::chrono::steady_clock::now();
        if (duration_s > 0 && now >= deadline) break;
        if (now >= next_status) {
          PrintStatus(cluster, "status");
          next_status += seconds(10);
        }
      }
    }
    PrintStatus(cluster, "stopping");
  }                                                          // ~SimCluster cancels every session
  if (!shutdown.HasBeenNotified()) kill(getpid(), SIGTERM);  // wakes the signal thread
  signals.join();
  return exit_code;
}

}  // namespace
}  // namespace meshwork::sim

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("simnodes: simulated streamers reporting to central");
  meshwork::NormalizeFlagNames(argc, argv);
  absl::ParseCommandLine(argc, argv);
  return meshwork::sim::Run();
}
