// Integration-test harness: real central and streamer processes on port 0 of loopback,
// their READY lines, and a small HTTP client.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace meshwork::testing {

using namespace std::chrono_literals;

// A child process whose stdout is read for the `READY {json}` line; stderr goes to a log
// file kept for failure diagnosis. Killed with SIGKILL when destroyed while running.
// R-1: in a sanitized build a child's sanitizer report (ASan, UBSan, LSan, TSan) lands in its
// log; once the child is gone (Wait or destruction) the report is printed to the test's
// output and fails the test.
class Process {
 public:
  static std::unique_ptr<Process> Start(const std::vector<std::string>& argv,
                                        const std::string& log_path);
  ~Process();

  // Blocks until the READY line (returns its JSON) or the timeout/exit (fails the test).
  nlohmann::json WaitReady(std::chrono::milliseconds timeout = 20s);
  void Signal(int sig);
  // SIGSTOP, then waits (≤ 5 s) until every thread of the process shows as stopped in /proc:
  // kill(2) returns before a busy thread has stopped, and it could still answer meanwhile.
  void Stop();
  // Waits for exit; returns the exit status as from waitpid.
  int Wait();
  // Whether the child has exited (reaped here if so); never blocks.
  bool Exited();
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  const std::string& log_path() const { return log_path_; }

 private:
  void CheckSanitizerReport();

  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  std::string log_path_;
  std::string pending_;
};

// A port on 127.0.0.1 nobody is using right now (bound and released; `type` is SOCK_STREAM
// or SOCK_DGRAM), for peers that cannot bind port 0 and report it.
int FreePort(int type);
// The port of a "host:port" address.
inline uint16_t Port(const std::string& address) {
  return static_cast<uint16_t>(std::stoi(address.substr(address.rfind(':') + 1)));
}

// A fresh directory under the build's temp area; removed when the test process ends with
// every test passed (temp_cleanup.cc), kept otherwise.
std::string MakeTempDir(const std::string& tag);
// The directories MakeTempDir made in this process.
std::vector<std::string> TempDirsMade();

struct HttpResult {
  int status = 0;  // 0 when the request failed at the transport level
  std::string body;
  std::map<std::string, std::string> headers;
  std::string error;
  nlohmann::json Json() const;
};

HttpResult Http(const std::string& method, const std::string& address, const std::string& target,
                const std::string& body = "",
                const std::vector<std::pair<std::string, std::string>>& headers = {},
                std::chrono::milliseconds timeout = 5s);

// The whole content of the file at `path` (empty when it cannot be read).
std::string ReadFile(const std::string& path);

// Polls `condition` every 20 ms until it holds or `timeout` passes; returns whether it held
// and, through `elapsed`, how long it took. For waiting on other processes' state, which
// no in-process event can signal.
bool Eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
                std::chrono::milliseconds* elapsed = nullptr);

// M-3: the cluster token file every central and streamer of this test process uses (made
// once, mode 0600, one random token), and its token, for raw control-channel clients.
// StartCentral and StartStreamer pass it as --cluster-token-file unless `extra` names one
// (an empty `--cluster-token-file=` gives central its default, <data-dir>/cluster-token).
const std::string& ClusterTokenFile();
const std::string& ClusterToken();

// Central's admin API prefix.
inline const std::string kApi = "/central/api-v4";

struct Central {
  std::unique_ptr<Process> process;
  std::string http;  // 127.0.0.1:PORT
  std::string grpc;
  std::string https;  // empty unless started with --https-listen
  std::string rtmp;   // empty unless started with --rtmp-listen
  std::string rtmps;  // empty unless started with --rtmps-listen
};
// Starts central on `data_dir`; ports 0 unless given (to restart on the same ports).
Central StartCentral(const std::string& data_dir, const std::string& http = "127.0.0.1:0",
                     const std::string& grpc = "127.0.0.1:0",
                     const std::vector<std::string>& extra = {});
// Whether central's API shows node `id` online.
bool IsOnline(const Central& c, const std::string& id);

struct Streamer {
  std::unique_ptr<Process> process;
  std::string http;
  std::string publish;
  std::string https;  // empty unless started with --https-listen
  std::string rtmp;   // empty unless started with --rtmp-listen
  std::string rtmps;  // empty unless started with --rtmps-listen
};
Streamer StartStreamer(const std::string& central_grpc, const std::string& id,
                       const std::string& role = "edge",
                       const std::vector<std::string>& extra = {});
// The same, with the streamer's command line run by `wrapper` (its argv prefix, e.g.
// `unshare … sh -c '…; exec "$0" "$@"'`), which must exec the streamer in the same process.
Streamer StartStreamerWrapped(const std::vector<std::string>& wrapper,
                              const std::string& central_grpc, const std::string& id,
                              const std::string& role, const std::vector<std::string>& extra);

// The sum of the samples of metric `name` on `address`'s /metrics whose label set contains
// `labels` (e.g. `reason="disk_full"`; empty: every sample); 0 when there is none.
double MetricAt(const std::string& address, const std::string& name,
                const std::string& labels = "");

}  // namespace meshwork::testing
