// R-3 over HTTP/2 (prior knowledge on a plain listener): the connection's deadline follows
// what it waits for — a request still arriving (read timeout), an answer the client's flow
// control holds back (send timeout), nothing (idle timeout) — and frames the client sends do
// not re-arm it; a client that keeps reading, however slowly, is never cut.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "common/http/response.h"
#include "common/http/server.h"

namespace meshwork::http {
namespace h2_deadlines_test {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

std::string Frame(uint8_t type, uint8_t flags, uint32_t stream, const std::string& payload) {
  std::string f;
  const size_t n = payload.size();
  f += static_cast<char>(n >> 16);
  f += static_cast<char>(n >> 8);
  f += static_cast<char>(n);
  f += static_cast<char>(type);
  f += static_cast<char>(flags);
  for (int shift : {24, 16, 8, 0}) f += static_cast<char>(stream >> shift);
  return f + payload;
}

std::string U32(uint32_t v) {
  std::string s;
  for (int shift : {24, 16, 8, 0}) s += static_cast<char>(v >> shift);
  return s;
}

// The preface, SETTINGS (`settings`: id/value pairs, 6 bytes each) and an ACK of the server's.
std::string Hello(const std::string& settings = "") {
  return "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + Frame(0x4, 0, 0, settings) + Frame(0x4, 0x1, 0, "");
}

// HPACK: GET (static 2), http (6), :path as a literal without indexing, :authority "a".
std::string RequestBlock(const std::string& path) {
  std::string b = "\x82\x86";
  b += '\x04';
  b += static_cast<char>(path.size());
  b += path;
  b += '\x01';
  b += '\x01';
  b += 'a';
  return b;
}

class H2Client {
 public:
  explicit H2Client(uint16_t port, int receive_buffer = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (receive_buffer > 0) {
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
    }
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
    timeval tv{0, 100'000};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~H2Client() { ::close(fd_); }
  // False once the server has closed (or reset) the connection.
  bool Send(const std::string& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }
  // Reads up to `max_bytes` (or what one 100 ms wait brings); false once the server closed.
  bool ReadSome(size_t max_bytes = 65536) {
    std::string buf(max_bytes, '\0');
    ssize_t n = ::recv(fd_, buf.data(), buf.size(), 0);
    if (n == 0) return false;
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    received_ += static_cast<size_t>(n);
    return true;
  }
  // Reads everything until the server closes; the seconds it took, or -1 past `limit`.
  double SecondsUntilClosed(std::chrono::milliseconds limit) {
    const auto start = SteadyClock::now();
    while (SteadyClock::now() - start < limit) {
      if (!ReadSome()) return std::chrono::duration<double>(SteadyClock::now() - start).count();
    }
    return -1;
  }
  // Sends a PING every 20 ms (frames keep coming, none a request) and reads the ACKs; true
  // when the server closed the connection within `limit`.
  bool PingsUntilClosed(std::chrono::milliseconds limit) {
    const auto start = SteadyClock::now();
    while (SteadyClock::now() - start < limit) {
      if (!Send(Frame(0x6, 0, 0, std::string(8, 'p'))) || !ReadSome()) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }
  size_t received() const { return received_; }

 private:
  int fd_ = -1;
  size_t received_ = 0;
};

std::unique_ptr<Server> StartWith(ServerOptions options, size_t big_bytes) {
  options.name = "test";
  options.listen = "127.0.0.1:0";
  options.threads = 1;
  Router router;
  auto big = std::make_shared<std::string>(big_bytes, 'm');
  router.Add({Verb::get}, "/big", [big](RequestContext&, Responder r) {
    r.Send(MakeResponse(Status::ok, *big, "application/octet-stream"));
  });
  auto server = Server::Start(std::move(options), std::move(router));
  REQUIRE(server.ok());
  return std::move(*server);
}

ServerOptions Timeouts(std::chrono::milliseconds idle, std::chrono::milliseconds read,
                       std::chrono::milliseconds send) {
  ServerOptions o;
  o.idle_timeout = idle;
  o.read_timeout = read;
  o.send_timeout = send;
  return o;
}

TEST_CASE("P-13 HTTP/2: a streamed answer's producer learns that the client reset its stream") {
  ServerOptions options = Timeouts(30s, 30s, 30s);
  options.name = "test";
  options.listen = "127.0.0.1:0";
  options.threads = 1;
  auto writer_promise = std::make_shared<std::promise<std::shared_ptr<ChunkedWriter>>>();
  Router router;
  router.Add({Verb::get}, "/stream", [writer_promise](RequestContext&, Responder r) {
    Response header{Status::ok, 11};
    header.set(beast_http::field::content_type, "video/mp4");
    auto writer = r.StartChunked(std::move(header));
    writer->Write(std::make_shared<const std::string>(100, 'p'));
    writer_promise->set_value(writer);
  });
  auto started = Server::Start(std::move(options), std::move(router));
  REQUIRE(started.ok());
  auto server = std::move(*started);
  H2Client client(server->port());
  REQUIRE(client.Send(Hello() + Frame(0x1, 0x5, 1, RequestBlock("/stream"))));
  auto future = writer_promise->get_future();
  REQUIRE(future.wait_for(10s) == std::future_status::ready);
  std::shared_ptr<ChunkedWriter> writer = future.get();
  while (client.received() < 100) REQUIRE(client.ReadSome());
  CHECK_FALSE(writer->closed());
  // RST_STREAM CANCEL (0x8) on stream 1; the connection stays.
  REQUIRE(client.Send(Frame(0x3, 0, 1, U32(8))));
  const auto deadline = SteadyClock::now() + 10s;
  while (!writer->closed() && SteadyClock::now() < deadline) {
    client.ReadSome();  // a 100 ms wait for anything the server sends
  }
  CHECK(writer->closed());
  writer->Write(std::make_shared<const std::string>(100, 'q'));  // dropped, no harm
  writer->Finish();
  CHECK(client.SecondsUntilClosed(300ms) < 0);  // the connection lives on
}

TEST_CASE(
    "R-3 HTTP/2: request bodies that do not end count against the listener's cap on "
    "unfinished bodies") {
  ServerOptions options = Timeouts(10s, 10s, 10s);
  options.max_buffered_body_bytes = 48 * 1024;
  auto server = StartWith(options, 10);
  H2Client first(server->port());
  // POST (HPACK static 3) on stream 1, then 40 KiB of body without END_STREAM: under the cap.
  std::string post = RequestBlock("/upload");
  post[0] = '\x83';
  REQUIRE(first.Send(
      Hello() + Frame(0x1, 0x4, 1, post) + Frame(0x0, 0, 1, std::string(16384, 'b')) +
      Frame(0x0, 0, 1, std::string(16384, 'b')) + Frame(0x0, 0, 1, std::string(8192, 'b'))));
  CHECK(first.SecondsUntilClosed(300ms) < 0);  // still open
  // A second connection's 16 KiB more passes the listener's 48 KiB: that connection goes.
  H2Client second(server->port());
  REQUIRE(
      second.Send(Hello() + Frame(0x1, 0x4, 1, post) + Frame(0x0, 0, 1, std::string(16384, 'b'))));
  const double closed_after = second.SecondsUntilClosed(3s);
  CHECK(closed_after >= 0);
  CHECK(first.SecondsUntilClosed(300ms) < 0);  // the first is not cut for it
}

TEST_CASE(
    "R-3 HTTP/2: a request whose header block or body never ends is cut after the read "
    "timeout") {
  auto server = StartWith(Timeouts(30s, 300ms, 30s), 16);
  {  // HEADERS without END_STREAM: a body announced and never sent.
    H2Client client(server->port());
    REQUIRE(client.Send(Hello() + Frame(0x1, 0x4, 1, RequestBlock("/big"))));
    const double closed = client.SecondsUntilClosed(10s);
    CHECK(closed >= 0);
    CHECK(closed < 10);  // the idle timeout (30 s) would not have
  }
  {  // HEADERS without END_HEADERS and no CONTINUATION ever.
    H2Client client(server->port());
    REQUIRE(client.Send(Hello() + Frame(0x1, 0, 3, RequestBlock("/big"))));
    const double closed = client.SecondsUntilClosed(10s);
    CHECK(closed >= 0.2);  // the read timeout (300 ms), not at once
    CHECK(closed < 10);
  }
}

TEST_CASE(
    "R-3 HTTP/2: frames without requests do not hold a connection past its idle "
    "timeout") {
  auto server = StartWith(Timeouts(400ms, 30s, 30s), 16);
  H2Client client(server->port());
  REQUIRE(client.Send(Hello()));
  CHECK(client.PingsUntilClosed(10s));
}

TEST_CASE("R-3 HTTP/2: a connection answering body-less requests is not idle") {
  auto server = StartWith(Timeouts(400ms, 30s, 30s), 16);
  H2Client client(server->port());
  REQUIRE(client.Send(Hello()));
  // HEAD (a literal :method): answered with a header block only, every 100 ms for 2 s.
  std::string head = "\x02\x04HEAD" + RequestBlock("/big").substr(1);
  bool open = true;
  for (uint32_t stream = 1; open && stream <= 41; stream += 2) {
    open = client.Send(Frame(0x1, 0x5, stream, head)) && client.ReadSome();
    std::this_thread::sleep_for(100ms);
  }
  CHECK(open);
  CHECK(client.SecondsUntilClosed(10s) >= 0);  // and idle once they stop
}

TEST_CASE("R-3 HTTP/2: PINGs do not keep an answer held back by flow control alive") {
  auto server = StartWith(Timeouts(30s, 30s, 400ms), 256 * 1024);
  H2Client client(server->port());
  REQUIRE(client.Send(Hello(std::string("\x00\x04", 2) + U32(0)) +
                      Frame(0x1, 0x5, 1, RequestBlock("/big"))));
  CHECK(client.PingsUntilClosed(10s));
}

TEST_CASE(
    "R-3 HTTP/2: an answer held back by a closed flow-control window is cut after the "
    "send timeout") {
  auto server = StartWith(Timeouts(30s, 30s, 300ms), 256 * 1024);
  H2Client client(server->port());
  // SETTINGS_INITIAL_WINDOW_SIZE 0: the server may send headers, no DATA.
  REQUIRE(client.Send(Hello(std::string("\x00\x04", 2) + U32(0)) +
                      Frame(0x1, 0x5, 1, RequestBlock("/big"))));
  const double closed = client.SecondsUntilClosed(10s);
  CHECK(closed >= 0);
  CHECK(closed < 10);
  CHECK(client.received() < 64 * 1024);  // no body went out
}

TEST_CASE(
    "R-3 HTTP/2: a client that keeps reading, however slowly, is not cut by the send "
    "timeout") {
  const size_t size = 2 << 20;
  // The idle timeout as short as the send timeout: the answer's stream is done for nghttp2
  // long before its bytes are read, and that is no idle connection.
  auto server = StartWith(Timeouts(400ms, 30s, 400ms), size);
  H2Client client(server->port(), 16 * 1024);
  // Windows of 16 MiB for the stream and the connection: only the reading paces the answer.
  REQUIRE(client.Send(Hello(std::string("\x00\x04", 2) + U32(16 << 20)) +
                      Frame(0x8, 0, 0, U32((16 << 20) - 65535)) +
                      Frame(0x1, 0x5, 1, RequestBlock("/big"))));
  // About 2 s for 2 MiB: 16 KiB every ~15 ms, much longer than the send timeout.
  const auto start = SteadyClock::now();
  bool open = true;
  while (open && client.received() < size && SteadyClock::now() - start < 20s) {
    open = client.ReadSome(16 * 1024);
    std::this_thread::sleep_for(15ms);
  }
  INFO("received " << client.received() << " in "
                   << std::chrono::duration<double>(SteadyClock::now() - start).count() << " s");
  CHECK(client.received() >= size);
  CHECK(std::chrono::duration<double>(SteadyClock::now() - start).count() > 0.8);
}

}  // namespace
}  // namespace h2_deadlines_test
}  // namespace meshwork::http
