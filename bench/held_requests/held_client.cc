// P-4 load client: holds N concurrent HTTP/1.1 requests (LL-HLS blocking playlist requests)
// against one server and reports when their answers arrive.
//
//   held_client --target HOST:PORT --path '/ll/v1/index.ll.m3u8?_HLS_msn=M&_HLS_part=P'
//               --connections N --timeout-s T [--window W] [--close]
//
// Opens N TCP connections (at most W connection attempts outstanding, default 500, so the
// server's listen backlog is not overrun), writes the request on each, and prints `SENT n`
// once every connection has been written (or has failed). Each connection records the
// moment the first byte of its answer is read (steady clock, plus the kernel's receive
// timestamp), and the status code. At the end (every connection answered and closed, or
// the timeout) it prints one line. Connections are kept alive, as players keep theirs: a
// connection is done once its status line is read, and all are closed together at the end
// (so the server's answers are not interleaved with closes). `--close` sends
// `Connection: close` and waits for the server to close each connection instead.
//
//
//   RESULT {"connected":…,"answered":…,"status_200":…,"errors":…,"first_answer_unix_us":…,
//           "answers_us_after_first":{"p50":…,"p99":…,"max":…}, …}
//
// Single-threaded; loopback use only. Raises RLIMIT_NOFILE to its hard limit first.
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <boost/asio.hpp>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;
using SystemClock = std::chrono::system_clock;

struct Options {
  std::string host;
  uint16_t port = 0;
  std::string path;
  int connections = 1000;
  double timeout_s = 15;
  int window = 500;
  bool close = false;
};

[[noreturn]] void Usage(const std::string& why) {
  std::cerr << "held_client: " << why
            << "\nusage: held_client --target HOST:PORT --path PATH --connections N"
               " --timeout-s T [--window W] [--close]\n";
  std::exit(2);
}

template <typename T>
T ParseNumber(std::string_view name, std::string_view text) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    Usage("bad value for " + std::string(name) + ": " + std::string(text));
  }
  return value;
}

Options ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    std::string_view value;
    if (arg == "--close") {
      o.close = true;
      continue;
    }
    if (auto eq = arg.find('='); eq != std::string_view::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      Usage("missing value for " + std::string(arg));
    }
    if (arg == "--target") {
      auto colon = value.rfind(':');
      if (colon == std::string_view::npos) Usage("--target must be HOST:PORT");
      o.host = std::string(value.substr(0, colon));
      o.port = ParseNumber<uint16_t>(arg, value.substr(colon + 1));
    } else if (arg == "--path") {
      o.path = std::string(value);
    } else if (arg == "--connections") {
      o.connections = ParseNumber<int>(arg, value);
    } else if (arg == "--timeout-s") {
      // from_chars for double is available in libstdc++ 11+.
      o.timeout_s = ParseNumber<double>(arg, value);
    } else if (arg == "--window") {
      o.window = ParseNumber<int>(arg, value);
    } else {
      Usage("unknown option " + std::string(arg));
    }
  }
  if (o.host.empty() || o.port == 0) Usage("--target is required");
  if (o.path.empty() || o.path.front() != '/') Usage("--path must start with '/'");
  if (o.connections <= 0) Usage("--connections must be positive");
  if (o.window <= 0) Usage("--window must be positive");
  if (!(o.timeout_s > 0)) Usage("--timeout-s must be positive");
  return o;
}

// Raises the soft open-file limit to the hard limit; returns the resulting soft limit.
rlim_t RaiseFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
    getrlimit(RLIMIT_NOFILE, &limit);
  }
  return limit.rlim_cur;
}

struct Connection {
  explicit Connection(asio::io_context& io) : socket(io) {}

  tcp::socket socket;
  bool connected = false;
  bool written = false;
  bool done = false;
  bool timed_out = false;
  bool first_byte_seen = false;
  SteadyClock::time_point first_byte;   // when the reader saw the first byte
  std::optional<int64_t> kernel_rx_ns;  // the kernel's receive timestamp (CLOCK_REALTIME)
  char head[16] = {};                   // the first bytes of the answer: "HTTP/1.1 200 "
  size_t head_len = 0;
  int status = 0;
};

struct Percentiles {
  int64_t p50 = 0;
  int64_t p99 = 0;
  int64_t max = 0;
};

// Nearest-rank percentiles of `values` (sorted in place); all zero when empty.
Percentiles ComputePercentiles(std::vector<int64_t>& values) {
  Percentiles p;
  if (values.empty()) return p;
  std::sort(values.begin(), values.end());
  auto rank = [&](double q) {
    size_t n = values.size();
    size_t index = static_cast<size_t>(std::ceil(q * static_cast<double>(n)));
    return values[std::clamp<size_t>(index, 1, n) - 1];
  };
  p.p50 = rank(0.50);
  p.p99 = rank(0.99);
  p.max = values.back();
  return p;
}

class HeldClient {
 public:
  HeldClient(const Options& options, tcp::endpoint endpoint)
      : options_(options), endpoint_(endpoint), deadline_(io_) {
    request_ = "GET " + options_.path + " HTTP/1.1\r\nHost: " + options_.host + ":" +
               std::to_string(options_.port) +
               "\r\nUser-Agent: meshwork-held-client\r\nAccept: */*\r\n" +
               (options_.close ? "Connection: close\r\n" : "") + "\r\n";
    connections_.reserve(options_.connections);
    for (int i = 0; i < options_.connections; ++i) {
      connections_.push_back(std::make_unique<Connection>(io_));
    }
    drain_.resize(64 * 1024);
  }

  void Run() {
    started_ = SteadyClock::now();
    deadline_.expires_after(std::chrono::duration_cast<SteadyClock::duration>(
        std::chrono::duration<double>(options_.timeout_s)));
    deadline_.async_wait([this](boost::system::error_code ec) {
      if (!ec) OnTimeout();
    });
    StartMore();
    io_.run();
    PrintResult();
  }

 private:
  // Keeps up to `window` connection attempts outstanding until all N are started.
  void StartMore() {
    while (in_flight_ < options_.window && next_ < connections_.size()) {
      Connection& c = *connections_[next_++];
      ++in_flight_;
      c.socket.async_connect(endpoint_,
                             [this, &c](boost::system::error_code ec) { OnConnected(c, ec); });
    }
  }

  void OnConnected(Connection& c, boost::system::error_code ec) {
    if (c.done) return;
    if (ec) {
      ++connect_errors_;
      if (connect_errors_ <= 5) std::cerr << "held_client: connect: " << ec.message() << "\n";
      Settle(c);
      Finish(c);
      return;
    }
    c.connected = true;
    ++connected_;
    boost::system::error_code ignored;
    c.socket.set_option(tcp::no_delay(true), ignored);
    int on = 1;
    ::setsockopt(c.socket.native_handle(), SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
    c.socket.non_blocking(true, ignored);
    asio::async_write(c.socket, asio::buffer(request_),
                      [this, &c](boost::system::error_code ec, size_t) { OnWritten(c, ec); });
  }

  void OnWritten(Connection& c, boost::system::error_code ec) {
    if (c.done) return;
    if (ec) {
      ++write_errors_;
      Settle(c);
      Finish(c);
      return;
    }
    c.written = true;
    ++written_;
    Settle(c);
    WaitReadable(c);
  }

  // One connection has been connected and written, or has failed doing so.
  void Settle(Connection&) {
    --in_flight_;
    ++settled_;
    if (settled_ == connections_.size()) {
      sent_at_ = SteadyClock::now();
      answered_before_sent_ = answered_;
      std::printf("SENT %zu\n", written_);
      std::fflush(stdout);
    } else {
      StartMore();
    }
  }

  void WaitReadable(Connection& c) {
    c.socket.async_wait(tcp::socket::wait_read,
                        [this, &c](boost::system::error_code ec) { OnReadable(c, ec); });
  }

  void OnReadable(Connection& c, boost::system::error_code ec) {
    SteadyClock::time_point now = SteadyClock::now();
    if (c.done) return;
    if (ec) {
      ++read_errors_;
      Finish(c);
      return;
    }
    for (;;) {
      iovec iov{drain_.data(), drain_.size()};
      alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec)) * 2];
      msghdr msg{};
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      msg.msg_control = control;
      msg.msg_controllen = sizeof control;
      ssize_t n = ::recvmsg(c.socket.native_handle(), &msg, MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return WaitReadable(c);
        ++read_errors_;
        return Finish(c);
      }
      if (n == 0) return Finish(c);  // the server closed (Connection: close)
      if (!c.first_byte_seen) {
        c.first_byte_seen = true;
        c.first_byte = now;
        if (!reference_) reference_ = Reference{now, SystemClock::now()};
        for (cmsghdr* h = CMSG_FIRSTHDR(&msg); h != nullptr; h = CMSG_NXTHDR(&msg, h)) {
          if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_TIMESTAMPNS) {
            timespec ts{};
            std::memcpy(&ts, CMSG_DATA(h), sizeof ts);
            c.kernel_rx_ns = int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
          }
        }
      }
      if (c.status == 0) {
        size_t take = std::min(sizeof c.head - c.head_len, static_cast<size_t>(n));
        std::memcpy(c.head + c.head_len, drain_.data(), take);
        c.head_len += take;
        ParseStatus(c);
        // Kept alive: the status is all this client measures; the rest stays unread.
        if (c.status != 0 && !options_.close) return Finish(c, /*keep_open=*/true);
      }
    }
  }

  // "HTTP/1.1 200 …": the status is the three digits after the first space.
  void ParseStatus(Connection& c) {
    std::string_view head(c.head, c.head_len);
    auto space = head.find(' ');
    if (space == std::string_view::npos || head.size() < space + 4) return;
    int status = 0;
    auto digits = head.substr(space + 1, 3);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + 3, status);
    if (ec != std::errc() || end != digits.data() + 3 || head.substr(0, 5) != "HTTP/") {
      status = -1;  // not HTTP
    }
    c.status = status;
    if (status > 0) {
      ++answered_;
      if (status == 200) ++status_200_;
    }
  }

  // A connection is done; kept-alive ones stay open until every connection is done.
  void Finish(Connection& c, bool keep_open = false) {
    if (c.done) return;
    c.done = true;
    boost::system::error_code ignored;
    if (!keep_open) c.socket.close(ignored);
    if (++finished_ == connections_.size()) {
      deadline_.cancel();
      io_.stop();
    }
  }

  void OnTimeout() {
    for (auto& c : connections_) {
      if (c->done) continue;
      if (c->status <= 0) ++timeouts_;
      c->timed_out = true;
      Finish(*c);
    }
    io_.stop();
  }

  void PrintResult() {
    std::vector<int64_t> after_first;
    std::vector<int64_t> kernel_after_first;
    std::optional<SteadyClock::time_point> first;
    std::optional<int64_t> kernel_first;
    size_t errors = 0;
    bool all_kernel = true;
    for (auto& c : connections_) {
      if (c->status <= 0) {
        ++errors;
        continue;
      }
      if (!first || c->first_byte < *first) first = c->first_byte;
      if (c->kernel_rx_ns) {
        if (!kernel_first || *c->kernel_rx_ns < *kernel_first) kernel_first = c->kernel_rx_ns;
      } else {
        all_kernel = false;
      }
    }
    auto micros = [](auto d) {
      return std::chrono::duration_cast<std::chrono::microseconds>(d).count();
    };
    int64_t first_unix_us = 0;
    if (first) {
      for (auto& c : connections_) {
        if (c->status <= 0) continue;
        after_first.push_back(micros(c->first_byte - *first));
        if (all_kernel) kernel_after_first.push_back((*c->kernel_rx_ns - *kernel_first) / 1000);
      }
      // The system-clock reading taken with the first answer handled, moved back to the
      // earliest first byte (normally the same one).
      first_unix_us =
          micros(reference_->system.time_since_epoch()) - micros(reference_->steady - *first);
    }
    Percentiles answers = ComputePercentiles(after_first);
    Percentiles kernel = ComputePercentiles(kernel_after_first);
    auto ms_since = [&](std::optional<SteadyClock::time_point> t, SteadyClock::time_point from) {
      return t ? std::chrono::duration<double, std::milli>(*t - from).count() : -1.0;
    };
    std::printf(
        "RESULT {\"connections\":%zu,\"connected\":%zu,\"written\":%zu,\"answered\":%zu,"
        "\"status_200\":%zu,\"errors\":%zu,\"connect_errors\":%zu,\"write_errors\":%zu,"
        "\"read_errors\":%zu,\"timeouts\":%zu,\"answered_before_sent\":%zu,"
        "\"sent_ms_after_start\":%.1f,\"first_answer_ms_after_sent\":%.1f,"
        "\"first_answer_unix_us\":%lld,"
        "\"answers_us_after_first\":{\"p50\":%lld,\"p99\":%lld,\"max\":%lld},"
        "\"kernel_rx_us_after_first\":",
        connections_.size(), connected_, written_, answered_, status_200_, errors, connect_errors_,
        write_errors_, read_errors_, timeouts_, answered_before_sent_,
        sent_at_ ? ms_since(sent_at_, started_) : -1.0,
        sent_at_ && first ? ms_since(first, *sent_at_) : -1.0,
        static_cast<long long>(first_unix_us), static_cast<long long>(answers.p50),
        static_cast<long long>(answers.p99), static_cast<long long>(answers.max));
    if (all_kernel && first) {
      // SCM_TIMESTAMPNS is CLOCK_REALTIME: comparable with first_answer_unix_us.
      std::printf("{\"p50\":%lld,\"p99\":%lld,\"max\":%lld},\"kernel_first_rx_unix_us\":%lld}\n",
                  static_cast<long long>(kernel.p50), static_cast<long long>(kernel.p99),
                  static_cast<long long>(kernel.max), static_cast<long long>(*kernel_first / 1000));
    } else {
      std::printf("null,\"kernel_first_rx_unix_us\":null}\n");
    }
    std::fflush(stdout);
  }

  struct Reference {
    SteadyClock::time_point steady;
    SystemClock::time_point system;
  };

  const Options options_;
  const tcp::endpoint endpoint_;
  asio::io_context io_{1};
  asio::steady_timer deadline_;
  std::string request_;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::vector<char> drain_;  // shared: one thread reads, the bytes past the status are dropped

  SteadyClock::time_point started_;
  std::optional<SteadyClock::time_point> sent_at_;
  std::optional<Reference> reference_;
  size_t next_ = 0;
  int in_flight_ = 0;
  size_t settled_ = 0;
  size_t finished_ = 0;
  size_t connected_ = 0;
  size_t written_ = 0;
  size_t answered_ = 0;
  size_t answered_before_sent_ = 0;
  size_t status_200_ = 0;
  size_t connect_errors_ = 0;
  size_t write_errors_ = 0;
  size_t read_errors_ = 0;
  size_t timeouts_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  Options options = ParseOptions(argc, argv);
  rlim_t files = RaiseFileLimit();
  if (files < static_cast<rlim_t>(options.connections) + 16) {
    std::cerr << "held_client: the open-file limit (" << files << ") is below "
              << options.connections << " connections; some will fail\n";
  }
  boost::system::error_code ec;
  auto address = boost::asio::ip::make_address(options.host, ec);
  if (ec) Usage("--target host must be a numeric IP address (loopback)");
  HeldClient client(options, tcp::endpoint(address, options.port));
  client.Run();
  return 0;
}
