#include "tests/integration/harness.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "common/http/client.h"
#include "common/http/server.h"
#include "tests/test_paths.h"

namespace meshwork::testing {

std::unique_ptr<Process> Process::Start(const std::vector<std::string>& argv,
                                        const std::string& log_path) {
  int out[2];
  REQUIRE(pipe2(out, O_CLOEXEC) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (log >= 0) dup2(log, STDERR_FILENO);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out[1]);
  auto p = std::unique_ptr<Process>(new Process());
  p->pid_ = pid;
  p->stdout_fd_ = out[0];
  p->log_path_ = log_path;
  return p;
}

Process::~Process() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
    CheckSanitizerReport();
  }
  if (stdout_fd_ >= 0) close(stdout_fd_);
}

// a sanitizer report in the child's log (sanitizers write to stderr, which is the log)
// is copied to this test's output from its first line on, and fails the test.
void Process::CheckSanitizerReport() {
  static constexpr const char* kStarts[] = {
      "ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "WARNING: ThreadSanitizer",
      "ERROR: ThreadSanitizer",  "runtime error:",       "ERROR: UndefinedBehaviorSanitizer"};
  std::ifstream in(log_path_);
  std::string line, report;
  int lines = 0;
  while (std::getline(in, line) && lines < 400) {
    if (report.empty()) {
      bool start = false;
      for (const char* s : kStarts) start = start || line.find(s) != std::string::npos;
      if (!start) continue;
    }
    report += line + "\n";
    ++lines;
  }
  if (report.empty()) return;
  std::fprintf(stderr, "==== sanitizer report of child process (log %s):\n%s====\n",
               log_path_.c_str(), report.c_str());
  FAIL_CHECK("sanitizer report in child process log " << log_path_);
}

nlohmann::json Process::WaitReady(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    size_t nl;
    while ((nl = pending_.find('\n')) != std::string::npos) {
      std::string line = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      if (line.rfind("READY ", 0) == 0) return nlohmann::json::parse(line.substr(6));
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) FAIL("process did not become ready; log: " << log_path_);
    pollfd pfd{stdout_fd_, POLLIN, 0};
    int r = poll(&pfd, 1, static_cast<int>(left.count()));
    if (r <= 0) continue;
    char buf[4096];
    ssize_t n = read(stdout_fd_, buf, sizeof buf);
    if (n <= 0) FAIL("process exited before it was ready; log: " << log_path_);
    pending_.append(buf, static_cast<size_t>(n));
  }
}

void Process::Signal(int sig) {
  if (pid_ > 0) kill(pid_, sig);
}

void Process::Stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGSTOP);
  const std::string tasks = "/proc/" + std::to_string(pid_) + "/task";
  auto all_stopped = [&] {
    std::error_code ec;
    for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
      std::ifstream in(task.path() / "stat");
      std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      size_t paren = stat.rfind(')');  // the state follows the command name in parentheses
      if (paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] != 'T') {
        return false;
      }
    }
    return !ec;
  };
  REQUIRE(Eventually(all_stopped, std::chrono::seconds(5)));
}

int Process::Wait() {
  int status = 0;
  if (pid_ > 0) {
    waitpid(pid_, &status, 0);
    pid_ = -1;
    CheckSanitizerReport();
  }
  return status;
}

bool Process::Exited() {
  if (pid_ <= 0) return true;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) != pid_) return false;
  pid_ = -1;
  CheckSanitizerReport();
  return true;
}

int FreePort(int type) {
  int fd = socket(AF_INET, type, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

namespace {
std::mutex temp_dirs_mu;
std::vector<std::string>& TempDirList() {
  static auto* dirs = new std::vector<std::string>;
  return *dirs;
}
}  // namespace

std::string MakeTempDir(const std::string& tag) {
  static std::atomic<int> counter{0};
  auto base = std::filesystem::temp_directory_path() / "meshwork-tests";
  std::filesystem::create_directories(base);
  auto dir = base / (tag + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::lock_guard<std::mutex> lock(temp_dirs_mu);
  TempDirList().push_back(dir.string());
  return dir.string();
}

std::vector<std::string> TempDirsMade() {
  std::lock_guard<std::mutex> lock(temp_dirs_mu);
  return TempDirList();
}

nlohmann::json HttpResult::Json() const {
  return nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
}

HttpResult Http(const std::string& method, const std::string& address, const std::string& target,
                const std::string& body,
                const std::vector<std::pair<std::string, std::string>>& headers,
                std::chrono::milliseconds timeout) {
  HttpResult result;
  auto hp = http::SplitHostPort(address);
  if (!hp.ok()) {
    result.error = std::string(hp.status().message());
    return result;
  }
  http::ClientRequest req;
  req.host = hp->first;
  req.port = hp->second;
  req.method = http::beast_http::string_to_verb(method);
  req.target = target;
  req.body = body;
  req.headers = headers;
  if (!body.empty()) req.headers.emplace_back("Content-Type", "application/json");
  req.timeout = timeout;
  auto res = http::Fetch(std::move(req));
  if (!res.ok()) {
    result.error = std::string(res.status().message());
    return result;
  }
  result.status = res->result_int();
  result.body = res->body();
  for (const auto& f : *res) {
    result.headers[std::string(f.name_string())] = std::string(f.value());
  }
  return result;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool Eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
                std::chrono::milliseconds* elapsed) {
  auto start = std::chrono::steady_clock::now();
  while (true) {
    if (condition()) {
      if (elapsed) {
        *elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - start);
      }
      return true;
    }
    if (std::chrono::steady_clock::now() - start > timeout) return false;
    std::this_thread::sleep_for(20ms);
  }
}

const std::string& ClusterTokenFile() {
  static const std::string path = [] {
    auto base = std::filesystem::temp_directory_path() / "meshwork-tests";
    std::filesystem::create_directories(base);
    auto file = base / ("cluster-token-" + std::to_string(getpid()));
    std::filesystem::remove(file);
    unsigned char bytes[32];
    int random = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    REQUIRE(random >= 0);
    REQUIRE(read(random, bytes, sizeof bytes) == static_cast<ssize_t>(sizeof bytes));
    close(random);
    std::string token;
    for (unsigned char b : bytes) {
      token.push_back("0123456789abcdef"[b >> 4]);
      token.push_back("0123456789abcdef"[b & 15]);
    }
    token.push_back('\n');
    int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(write(fd, token.data(), token.size()) == static_cast<ssize_t>(token.size()));
    close(fd);
    return file.string();
  }();
  return path;
}

const std::string& ClusterToken() {
  static const std::string token = [] {
    std::ifstream in(ClusterTokenFile());
    std::string line;
    std::getline(in, line);
    REQUIRE(!line.empty());
    return line;
  }();
  return token;
}

namespace {

// Adds the harness's --cluster-token-file unless the caller gave one.
void AddClusterTokenFile(std::vector<std::string>& argv) {
  for (const auto& arg : argv) {
    if (arg.rfind("--cluster-token-file", 0) == 0 || arg.rfind("--cluster_token_file", 0) == 0) {
      return;
    }
  }
  argv.push_back("--cluster-token-file=" + ClusterTokenFile());
}

}  // namespace

Central StartCentral(const std::string& data_dir, const std::string& http, const std::string& grpc,
                     const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {CentralBin(), "--data-dir=" + data_dir, "--http-listen=" + http,
                                   "--grpc-listen=" + grpc};
  argv.insert(argv.end(), extra.begin(), extra.end());
  AddClusterTokenFile(argv);
  Central c;
  c.process = Process::Start(argv, data_dir + ".central.log");
  auto ready = c.process->WaitReady();
  c.http = ready["http"].get<std::string>();
  c.grpc = ready["grpc"].get<std::string>();
  if (ready.contains("https")) c.https = ready["https"].get<std::string>();
  return c;
}

Streamer StartStreamer(const std::string& central_grpc, const std::string& id,
                       const std::string& role, const std::vector<std::string>& extra) {
  return StartStreamerWrapped({}, central_grpc, id, role, extra);
}

Streamer StartStreamerWrapped(const std::vector<std::string>& wrapper,
                              const std::string& central_grpc, const std::string& id,
                              const std::string& role, const std::vector<std::string>& extra) {
  std::vector<std::string> argv = wrapper;
  for (std::string arg :
       {StreamerBin(), "--central=" + central_grpc, "--node-id=" + id, "--role=" + role,
        std::string("--listen=127.0.0.1:0"), std::string("--publish-listen=127.0.0.1:0")}) {
    argv.push_back(std::move(arg));
  }
  argv.insert(argv.end(), extra.begin(), extra.end());
  AddClusterTokenFile(argv);
  Streamer s;
  s.process = Process::Start(argv, MakeTempDir("streamer-" + id) + ".log");
  auto ready = s.process->WaitReady();
  s.http = ready["http"].get<std::string>();
  s.publish = ready["publish"].get<std::string>();
  if (ready.contains("https")) s.https = ready["https"].get<std::string>();
  if (ready.contains("rtmp")) s.rtmp = ready["rtmp"].get<std::string>();
  if (ready.contains("rtmps")) s.rtmps = ready["rtmps"].get<std::string>();
  return s;
}

bool IsOnline(const Central& c, const std::string& id) {
  auto r = Http("GET", c.http, kApi + "/streamers/" + id);
  if (r.status != 200) return false;
  auto j = r.Json();
  return j.is_object() && j["status"]["online"] == true;
}

double MetricAt(const std::string& address, const std::string& name, const std::string& labels) {
  auto page = Http("GET", address, "/metrics").body;
  double sum = 0;
  std::istringstream in(page);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with(name) || line.size() <= name.size()) continue;
    char next = line[name.size()];
    if (next != ' ' && next != '{') continue;
    size_t space = line.rfind(' ');
    std::string label_set = line.substr(name.size(), space - name.size());
    if (label_set.find(labels) == std::string::npos) continue;
    sum += std::strtod(line.c_str() + space + 1, nullptr);
  }
  return sum;
}

}  // namespace meshwork::testing
