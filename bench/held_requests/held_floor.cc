// P-4 reference: the least a server can do to answer N held requests at once on this machine.
//
//   held_floor --connections N --body-bytes B [--threads T] [--hold-ms H]
//
// Listens on 127.0.0.1 (port 0) and prints `READY {"http":"127.0.0.1:PORT"}`. Connections are
// spread over T threads (default 2), each with its own epoll set. A thread reads each request
// up to its blank line and keeps it; once all N requests are in, every thread waits H ms
// (default 1500, like the publish the streamer waits for) and then writes one fixed answer —
// a status line, Content-Type, Content-Length and a body of B bytes — to each of its
// connections with one send() each, in the order they arrived. There is no routing, no
// rendering, no allocation per answer: what is left is the kernel's cost of sending the
// answers (on loopback, including the receiving side's TCP processing). The streamer's spread
// divided by this one's is the ratio bench/held_requests/run.sh prints.
//
// Keeps connections open until the client closes them; exits when all N are closed or after
// --timeout-s (default 30). Loopback use only.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int connections = 1000;
  int body_bytes = 1024;
  int threads = 2;
  int hold_ms = 1500;
  int timeout_s = 30;
};

[[noreturn]] void Die(const char* what) {
  std::perror(what);
  std::exit(1);
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string_view name = argv[i];
    int value = std::atoi(argv[i + 1]);
    if (value <= 0) {
      std::fprintf(stderr, "held_floor: %s needs a positive number\n", argv[i]);
      std::exit(2);
    }
    if (name == "--connections")
      o.connections = value;
    else if (name == "--body-bytes")
      o.body_bytes = value;
    else if (name == "--threads")
      o.threads = value;
    else if (name == "--hold-ms")
      o.hold_ms = value;
    else if (name == "--timeout-s")
      o.timeout_s = value;
    else {
      std::fprintf(stderr, "held_floor: unknown option %s\n", argv[i]);
      std::exit(2);
    }
  }
  return o;
}

struct Shared {
  Options options;
  std::string answer;
  std::atomic<int> requests{0};  // complete requests read, over all threads
  std::atomic<int> closed{0};
  std::atomic<int64_t> release_ns{0};  // steady-clock time of the release; 0 until all are in
  Clock::time_point deadline;
};

struct Conn {
  int fd = -1;
  std::string head;  // the request so far, up to its blank line
  bool held = false;
  bool answered = false;
};

class Worker {
 public:
  explicit Worker(Shared& shared) : shared_(shared) {
    epoll_ = epoll_create1(0);
    if (epoll_ < 0) Die("epoll_create1");
  }

  // From the accepting thread (epoll is thread-safe for adding descriptors); `c` is owned by
  // main and outlives the workers.
  void Add(Conn* c) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = c;
    int fd = c->fd;
    if (epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev) != 0) Die("epoll_ctl");
  }

  void Run() {
    std::vector<epoll_event> events(256);
    bool released = false;
    while (Clock::now() < shared_.deadline && shared_.closed.load() < shared_.options.connections) {
      int n = epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), 1);
      for (int i = 0; i < n; ++i) OnReadable(*static_cast<Conn*>(events[i].data.ptr));
      int64_t release = shared_.release_ns.load();
      if (!released && release != 0 && Clock::now().time_since_epoch().count() >= release) {
        released = true;
        for (Conn* c : held_) {
          if (c->fd < 0 || c->answered) continue;
          c->answered = true;
          (void)send(c->fd, shared_.answer.data(), shared_.answer.size(), MSG_NOSIGNAL);
        }
      }
    }
  }

 private:
  void OnReadable(Conn& c) {
    char buf[4096];
    for (;;) {
      ssize_t n = recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n > 0) {
        if (!c.held) {
          c.head.append(buf, static_cast<size_t>(n));
          if (c.head.find("\r\n\r\n") != std::string::npos) {
            c.held = true;
            c.head.clear();
            held_.push_back(&c);
            if (shared_.requests.fetch_add(1) + 1 == shared_.options.connections) {
              auto at = Clock::now() + std::chrono::milliseconds(shared_.options.hold_ms);
              shared_.release_ns.store(at.time_since_epoch().count());
            }
          }
        }
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
      close(c.fd);  // the client closed, or the connection broke
      c.fd = -1;
      shared_.closed.fetch_add(1);
      return;
    }
  }

  Shared& shared_;
  int epoll_ = -1;
  std::vector<Conn*> held_;
};

}  // namespace

int main(int argc, char** argv) {
  Shared shared;
  shared.options = Parse(argc, argv);
  const Options& o = shared.options;
  shared.deadline = Clock::now() + std::chrono::seconds(o.timeout_s);
  shared.answer =
      "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.apple.mpegurl\r\n"
      "Content-Length: " +
      std::to_string(o.body_bytes) + "\r\n\r\n" +
      std::string(static_cast<size_t>(o.body_bytes), '#');

  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  if (listener < 0) Die("socket");
  int on = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) Die("bind");
  if (listen(listener, 4096) != 0) Die("listen");
  socklen_t len = sizeof addr;
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  std::printf("READY {\"http\":\"127.0.0.1:%d\"}\n", ntohs(addr.sin_port));
  std::fflush(stdout);

  std::vector<Conn> conns(static_cast<size_t>(o.connections));
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::thread> threads;
  for (int i = 0; i < o.threads; ++i) workers.push_back(std::make_unique<Worker>(shared));
  for (auto& w : workers) threads.emplace_back([&w] { w->Run(); });
  for (int accepted = 0; accepted < o.connections && Clock::now() < shared.deadline;) {
    int fd = accept(listener, nullptr, nullptr);
    if (fd < 0) {
      if (errno == EINTR) continue;
      Die("accept");
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    Conn* c = &conns[static_cast<size_t>(accepted)];
    c->fd = fd;
    workers[static_cast<size_t>(accepted % o.threads)]->Add(c);
    ++accepted;
  }
  for (auto& t : threads) t.join();
  return 0;
}
