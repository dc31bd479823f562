// Integration-test harness: a TCP forwarder on 127.0.0.1:0 that a test can cut, to make a
// network partition between one process and another without touching either. While cut, it
// closes every forwarded connection and closes each new one as soon as it is accepted (the
// peer sees a reset or EOF, as after a link failure), so clients go into their reconnect
// backoff. Restore() forwards again. PaceAnswers() makes it a slow link (P-13): what the
// target sends back crosses in pieces of at most 4 KiB at a set rate, so an object takes a
// measurable time to cross; requests still cross at once.
//
// Threads: one acceptor thread, plus one thread per forwarded connection that copies both
// directions with poll(). All are joined by the destructor.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace meshwork::testing {

class TcpProxy {
 public:
  // Forwards 127.0.0.1:<port()> to `target` ("127.0.0.1:PORT").
  explicit TcpProxy(const std::string& target);
  // Listening now, forwarding once SetTarget names the target (connections before are closed):
  // a node can announce the proxy's port before the proxy knows the node's.
  TcpProxy();
  void SetTarget(const std::string& target);
  // The target's answers cross at `bytes_per_second` from the next connection on (0: at once).
  void PaceAnswers(double bytes_per_second) { pace_ = bytes_per_second; }
  ~TcpProxy();
  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  void Cut();      // close all connections now and refuse new ones until Restore()
  void Restore();  // forward new connections again
  int accepted() const { return accepted_.load(); }

 private:
  void AcceptLoop();
  void Pump(int client, int upstream);

  std::atomic<int> target_port_{0};
  std::atomic<double> pace_{0};
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> cut_{false};
  std::atomic<int> accepted_{0};
  std::thread acceptor_;
  absl::Mutex mu_;
  std::vector<std::thread> pumps_ ABSL_GUARDED_BY(mu_);
  std::vector<int> open_fds_ ABSL_GUARDED_BY(mu_);  // both ends of every live connection
};

}  // namespace meshwork::testing
