// P-6 load client: publishes COUNT objects of SIZE bytes one after another over a single
// HTTP/1.1 keep-alive connection and reports how long each acknowledgement took.
//
//   publish_client --target HOST:PORT --prefix /live/v1/ --first-msn M
//                  [--count 200] [--size 1048576] [--pipeline a] [--ext ts]
//                  [--timeout-s 30]
//
// Object i is `PUT {prefix}{M+i}.{ext}` with `X-Pipeline` and a Content-Length body. The
// acknowledgement time of one PUT runs from the moment the write of its last body byte
// returns to the moment the response's status line has been read. Note that the write
// returning means the last byte is in the kernel's send buffer; on loopback the server may
// still be reading the tail of the body, so this errs on the long side.
//
// Prints one line at the end:
//   RESULT {"sent":…,"acked":…,"status_2xx":…,"errors":…,"ack_ms":{"p50":…,"p99":…,
//           "max":…},"over_500ms":…,"write_ms":{"p50":…,"max":…},"wall_s":…}
// and exits non-zero when the connection failed or an answer was not 201/204.
//
// Single-threaded, blocking POSIX sockets; loopback use only.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string host;
  uint16_t port = 0;
  std::string prefix;
  int64_t first_msn = -1;
  int count = 200;
  size_t size = 1 << 20;
  std::string pipeline = "a";
  std::string ext = "ts";
  int timeout_s = 30;
};

[[noreturn]] void Usage(const std::string& why) {
  std::cerr << "publish_client: " << why
            << "\nusage: publish_client --target HOST:PORT --prefix /STREAM/RENDITION/"
               " --first-msn M [--count N] [--size BYTES] [--pipeline ID] [--ext ts|m4s]"
               " [--timeout-s T]\n";
  std::exit(2);
}

template <typename T>
T Number(std::string_view name, std::string_view text) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    Usage("bad value for " + std::string(name) + ": " + std::string(text));
  }
  return value;
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    std::string_view value;
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
      o.port = Number<uint16_t>(arg, value.substr(colon + 1));
    } else if (arg == "--prefix") {
      o.prefix = std::string(value);
    } else if (arg == "--first-msn") {
      o.first_msn = Number<int64_t>(arg, value);
    } else if (arg == "--count") {
      o.count = Number<int>(arg, value);
    } else if (arg == "--size") {
      o.size = Number<size_t>(arg, value);
    } else if (arg == "--pipeline") {
      o.pipeline = std::string(value);
    } else if (arg == "--ext") {
      o.ext = std::string(value);
    } else if (arg == "--timeout-s") {
      o.timeout_s = Number<int>(arg, value);
    } else {
      Usage("unknown option " + std::string(arg));
    }
  }
  if (o.host.empty() || o.port == 0) Usage("--target is required");
  if (o.prefix.empty() || o.prefix.front() != '/' || o.prefix.back() != '/') {
    Usage("--prefix must start and end with '/'");
  }
  if (o.first_msn < 0) Usage("--first-msn is required");
  if (o.count <= 0 || o.size == 0 || o.timeout_s <= 0) Usage("counts must be positive");
  return o;
}

int Connect(const Options& o) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(o.port);
  if (inet_pton(AF_INET, o.host.c_str(), &sa.sin_addr) != 1) Usage("--target needs an IPv4");
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  // Bounded: a stuck server ends the run instead of hanging it.
  timeval tv{.tv_sec = o.timeout_s, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Writes head + body completely (scatter-gather). False on error.
bool WriteAll(int fd, const std::string& head, const std::string& body) {
  size_t done = 0;
  const size_t total = head.size() + body.size();
  while (done < total) {
    iovec iov[2];
    int n = 0;
    if (done < head.size()) {
      iov[n++] = {const_cast<char*>(head.data()) + done, head.size() - done};
      iov[n++] = {const_cast<char*>(body.data()), body.size()};
    } else {
      size_t off = done - head.size();
      iov[n++] = {const_cast<char*>(body.data()) + off, body.size() - off};
    }
    ssize_t w = writev(fd, iov, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    done += static_cast<size_t>(w);
  }
  return true;
}

// Reads one HTTP response on a keep-alive connection. `buffer` keeps bytes read past it.
// Sets *status_line_at when the first line is complete. Returns the status, or -1.
int ReadResponse(int fd, std::string& buffer, Clock::time_point* status_line_at) {
  bool have_line = false;
  size_t head_end = std::string::npos;
  char chunk[16 * 1024];
  auto check_line = [&] {
    if (!have_line && buffer.find("\r\n") != std::string::npos) {
      *status_line_at = Clock::now();
      have_line = true;
    }
  };
  check_line();
  while ((head_end = buffer.find("\r\n\r\n")) == std::string::npos) {
    ssize_t r = read(fd, chunk, sizeof chunk);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    buffer.append(chunk, static_cast<size_t>(r));
    check_line();
  }
  std::string_view head(buffer.data(), head_end + 2);
  int status = -1;
  if (head.size() > 12 && head.substr(0, 5) == "HTTP/") {
    std::from_chars(head.data() + 9, head.data() + 12, status);
  }
  // Content-Length of the answer (case-insensitive); absent means no body here (201/204).
  size_t body = 0;
  std::string lower(head);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (auto at = lower.find("\r\ncontent-length:"); at != std::string::npos) {
    size_t p = at + 17;
    while (p < lower.size() && lower[p] == ' ') ++p;
    std::from_chars(lower.data() + p, lower.data() + lower.size(), body);
  }
  size_t need = head_end + 4 + body;
  while (buffer.size() < need) {
    ssize_t r = read(fd, chunk, sizeof chunk);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    buffer.append(chunk, static_cast<size_t>(r));
  }
  buffer.erase(0, need);
  return status;
}

double Rank(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(i, 1, v.size()) - 1];
}

}  // namespace

int main(int argc, char** argv) {
  Options o = Parse(argc, argv);
  int fd = Connect(o);
  if (fd < 0) {
    std::cerr << "publish_client: cannot connect to " << o.host << ":" << o.port << ": "
              << std::strerror(errno) << "\n";
    return 1;
  }
  // A body that looks like MPEG-TS null packets (the origin does not parse it).
  std::string body(o.size, '\xff');
  for (size_t i = 0; i < body.size(); i += 188) body[i] = 0x47;

  std::vector<double> ack_ms, write_ms;
  int sent = 0, acked = 0, ok = 0, errors = 0, over = 0;
  std::string buffer;
  auto started = Clock::now();
  for (int i = 0; i < o.count; ++i) {
    // The origin takes segments up to three due times ahead (a guard against runaway
    // packagers), so the objects cycle over three msns and move to a fresh rendition
    // ("{prefix}-{k}/") every three: each PUT is still a new object.
    std::string prefix =
        o.prefix.substr(0, o.prefix.size() - 1) + "-" + std::to_string(i / 3) + "/";
    std::string head =
        "PUT " + prefix + std::to_string(o.first_msn + i % 3) + "." + o.ext +
        " HTTP/1.1\r\nHost: " + o.host + ":" + std::to_string(o.port) +
        "\r\nX-Pipeline: " + o.pipeline +
        "\r\nContent-Type: video/mp2t\r\nContent-Length: " + std::to_string(body.size()) +
        "\r\n\r\n";
    auto begin = Clock::now();
    if (!WriteAll(fd, head, body)) {
      std::cerr << "publish_client: write failed: " << std::strerror(errno) << "\n";
      ++errors;
      break;
    }
    auto last_byte = Clock::now();
    ++sent;
    Clock::time_point status_at{};
    int status = ReadResponse(fd, buffer, &status_at);
    if (status < 0) {
      std::cerr << "publish_client: no answer to PUT #" << i << ": " << std::strerror(errno)
                << "\n";
      ++errors;
      break;
    }
    ++acked;
    if (status == 201 || status == 204) {
      ++ok;
    } else {
      ++errors;
      std::cerr << "publish_client: PUT #" << i << " answered " << status << "\n";
    }
    double ms = std::chrono::duration<double, std::milli>(status_at - last_byte).count();
    ack_ms.push_back(ms);
    write_ms.push_back(std::chrono::duration<double, std::milli>(last_byte - begin).count());
    if (ms > 500) ++over;
  }
  double wall = std::chrono::duration<double>(Clock::now() - started).count();
  close(fd);

  auto max = [](const std::vector<double>& v) {
    return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end());
  };
  std::printf(
      "RESULT {\"sent\":%d,\"acked\":%d,\"status_2xx\":%d,\"errors\":%d,"
      "\"ack_ms\":{\"p50\":%.3f,\"p99\":%.3f,\"max\":%.3f},\"over_500ms\":%d,"
      "\"write_ms\":{\"p50\":%.3f,\"max\":%.3f},\"wall_s\":%.3f}\n",
      sent, acked, ok, errors, Rank(ack_ms, 0.5), Rank(ack_ms, 0.99), max(ack_ms), over,
      Rank(write_ms, 0.5), max(write_ms), wall);
  return (errors == 0 && ok == o.count) ? 0 : 1;
}
