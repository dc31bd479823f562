#include "tests/integration/tcp_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>

namespace meshwork::testing {
namespace {

int ConnectLoopback(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

TcpProxy::TcpProxy(const std::string& target) : TcpProxy() { SetTarget(target); }

void TcpProxy::SetTarget(const std::string& target) {
  const size_t colon = target.rfind(':');
  REQUIRE(colon != std::string::npos);
  target_port_ = std::stoi(target.substr(colon + 1));
}

TcpProxy::TcpProxy() {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(listen_fd_ >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(listen_fd_, 64) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

TcpProxy::~TcpProxy() {
  stopping_ = true;
  ::shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  ::close(listen_fd_);
  std::vector<std::thread> pumps;
  {
    absl::MutexLock lock(&mu_);
    pumps.swap(pumps_);
  }
  for (auto& t : pumps) t.join();  // each pump polls with a timeout and sees stopping_
}

void TcpProxy::Cut() {
  absl::MutexLock lock(&mu_);  // the acceptor checks cut_ under mu_ before adding a pump
  cut_ = true;
  // Once this returns no byte crosses: a pump's next read or write fails.
  for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
}

void TcpProxy::Restore() { cut_ = false; }

void TcpProxy::AcceptLoop() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    ++accepted_;
    int upstream = cut_ || target_port_ == 0 ? -1 : ConnectLoopback(target_port_);
    absl::MutexLock lock(&mu_);
    if (upstream < 0 || cut_) {
      ::close(client);
      if (upstream >= 0) ::close(upstream);
      continue;
    }
    open_fds_.insert(open_fds_.end(), {client, upstream});
    pumps_.emplace_back([this, client, upstream] { Pump(client, upstream); });
  }
}

void TcpProxy::Pump(int client, int upstream) {
  char buf[16384];
  pollfd fds[2] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}};
  auto paced_from = std::chrono::steady_clock::now();
  double paced_bytes = 0;
  while (!stopping_) {
    int n = ::poll(fds, 2, 50);
    if (n < 0) break;
    if (n == 0) continue;
    bool done = false;
    for (int i = 0; i < 2 && !done; ++i) {
      if (fds[i].revents == 0) continue;
      const double pace = pace_;  // read per piece: a test may slow the link mid-connection
      const bool paced = pace > 0 && i == 1;
      ssize_t got = ::read(fds[i].fd, buf, paced ? 4096 : sizeof buf);
      if (got <= 0) {
        done = true;
        break;
      }
      const int to = fds[1 - i].fd;
      for (ssize_t off = 0; off < got;) {
        // MSG_NOSIGNAL: a side that has closed fails the send (the pump ends) instead of
        // raising SIGPIPE, which would kill the whole test process.
        ssize_t put = ::send(to, buf + off, got - off, MSG_NOSIGNAL);
        if (put <= 0) {
          done = true;
          break;
        }
        off += put;
      }
      if (paced && !done) {
        // The simulated link's timing (not a wait for an event): the next piece leaves when
        // the bytes so far fit the pace; an idle spell banks no credit for a later burst.
        auto now = std::chrono::steady_clock::now();
        if (now - paced_from > std::chrono::duration<double>(paced_bytes / pace + 0.05)) {
          paced_from = now;
          paced_bytes = 0;
        }
        paced_bytes += static_cast<double>(got);
        std::this_thread::sleep_until(
            paced_from + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                             std::chrono::duration<double>(paced_bytes / pace)));
      }
    }
    if (done) break;
  }
  absl::MutexLock lock(&mu_);  // closed under mu_, so Cut() never shuts a reused number
  std::erase(open_fds_, client);
  std::erase(open_fds_, upstream);
  ::close(client);
  ::close(upstream);
}

}  // namespace meshwork::testing
