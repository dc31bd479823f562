// AsyncReadShort (short_read.h): a read that leaves the descriptor marked drained after a short
// read must still see every byte that arrives later, for itself and for Asio's own reads.
#include "common/http/short_read.h"

#include <sys/ioctl.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "boost/asio.hpp"

namespace meshwork::http {
namespace short_read_test {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

struct Pair {
  asio::io_context io;
  tcp::socket server{io};
  tcp::socket client{io};
  // `hint`: the server socket reports whether a read drained it (TCP_INQ), as the HTTP
  // server's connections do; without it every read is taken as possibly not draining.
  explicit Pair(bool hint = true) {
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    client.connect(acceptor.local_endpoint());
    acceptor.accept(server);
    if (hint) REQUIRE(EnableShortReads(server));
  }
  // Blocks until `n` bytes wait in the server's receive queue (the kernel's count, no sleep
  // guesses): the readiness event for them has happened by then.
  void AwaitQueued(size_t n) {
    for (int i = 0; i < 100000; ++i) {
      int queued = 0;
      REQUIRE(::ioctl(server.native_handle(), FIONREAD, &queued) == 0);
      if (static_cast<size_t>(queued) >= n) return;
      std::this_thread::yield();
    }
    FAIL("bytes never arrived");
  }
};

// Runs `io` until `done()` or five seconds (run_one_for may return early with nothing run).
template <typename Pred>
void RunUntil(asio::io_context& io, Pred done) {
  auto until = std::chrono::steady_clock::now() + 5s;
  while (!done() && std::chrono::steady_clock::now() < until) {
    io.restart();  // a run that found no work left stopped it
    io.run_one_until(until);
  }
}

void Poll(asio::io_context& io) {
  io.restart();
  io.poll();
}

struct Result {
  boost::system::error_code ec;
  std::string bytes;
};

// Starts a short read into `buf` and returns where its result lands.
std::optional<Result>& Read(Pair& p, std::string& buf, std::optional<Result>& out) {
  out.reset();
  AsyncReadShort(p.server, ShortReadReactorOf(p.server), asio::buffer(buf),
                 [&out, &buf](boost::system::error_code ec, size_t n) {
                   out = Result{ec, buf.substr(0, n)};
                 });
  return out;
}

TEST_CASE("P-5 short read: bytes arriving after a short read reach the next read") {
  Pair p;
  std::string buf(64, '\0');
  std::optional<Result> got;
  asio::write(p.client, asio::buffer(std::string("GET /a")));
  Read(p, buf, got);
  // Never completes inside the call, even with the bytes already there.
  CHECK_FALSE(got.has_value());
  RunUntil(p.io, [&] { return got.has_value(); });
  REQUIRE(got.has_value());
  CHECK_FALSE(got->ec);
  CHECK(got->bytes == "GET /a");

  // Drained (6 < 64): the next read waits for readiness and nothing completes meanwhile.
  Read(p, buf, got);
  Poll(p.io);
  CHECK_FALSE(got.has_value());
  asio::write(p.client, asio::buffer(std::string(" HTTP/1.1")));
  RunUntil(p.io, [&] { return got.has_value(); });
  REQUIRE(got.has_value());
  CHECK(got->bytes == " HTTP/1.1");

  // Bytes that arrive between two reads (their event seen with no read queued) are found.
  asio::write(p.client, asio::buffer(std::string("\r\n")));
  p.AwaitQueued(2);
  Poll(p.io);  // the reactor takes the event now, with no read waiting
  Read(p, buf, got);
  RunUntil(p.io, [&] { return got.has_value(); });
  REQUIRE(got.has_value());
  CHECK(got->bytes == "\r\n");
}

TEST_CASE("P-5 short read: a full read leaves the rest for the next, Asio's own reads still work") {
  Pair p;
  std::string sent(100, 'x');
  for (size_t i = 0; i < sent.size(); ++i) sent[i] = static_cast<char>('a' + i % 26);
  asio::write(p.client, asio::buffer(sent));
  p.AwaitQueued(sent.size());
  std::string buf(40, '\0');
  std::optional<Result> got;
  std::string all;
  while (all.size() < sent.size()) {
    Read(p, buf, got);
    RunUntil(p.io, [&] { return got.has_value(); });
    REQUIRE(got.has_value());
    REQUIRE_FALSE(got->ec);
    all += got->bytes;
  }
  CHECK(all == sent);

  // The last read was short (20 of 40): Asio's own read of the same socket must still get
  // bytes that arrive later.
  std::string asio_buf(16, '\0');
  size_t asio_n = 0;
  bool asio_done = false;
  p.server.async_read_some(asio::buffer(asio_buf), [&](boost::system::error_code ec, size_t n) {
    CHECK_FALSE(ec);
    asio_n = n;
    asio_done = true;
  });
  Poll(p.io);
  CHECK_FALSE(asio_done);
  asio::write(p.client, asio::buffer(std::string("late")));
  RunUntil(p.io, [&] { return asio_done; });
  REQUIRE(asio_done);
  CHECK(asio_buf.substr(0, asio_n) == "late");
}

TEST_CASE("P-5 short read: end of file, cancel and close complete the read") {
  std::string buf(64, '\0');
  std::optional<Result> got;
  SECTION("the peer closes") {
    Pair p;
    Read(p, buf, got);
    Poll(p.io);
    CHECK_FALSE(got.has_value());
    p.client.close();
    RunUntil(p.io, [&] { return got.has_value(); });
    REQUIRE(got.has_value());
    CHECK(got->ec == asio::error::eof);
  }
  SECTION("cancel") {
    Pair p;
    Read(p, buf, got);
    Poll(p.io);
    p.server.cancel();
    RunUntil(p.io, [&] { return got.has_value(); });
    REQUIRE(got.has_value());
    CHECK(got->ec == asio::error::operation_aborted);
  }
  SECTION("close") {
    Pair p;
    Read(p, buf, got);
    Poll(p.io);
    p.server.close();
    RunUntil(p.io, [&] { return got.has_value(); });
    REQUIRE(got.has_value());
    CHECK(got->ec == asio::error::operation_aborted);
  }
  SECTION("a closed socket") {
    Pair p;
    p.server.close();
    Read(p, buf, got);
    RunUntil(p.io, [&] { return got.has_value(); });
    REQUIRE(got.has_value());
    CHECK(got->ec == asio::error::bad_descriptor);
  }
}

TEST_CASE("P-5 short read: a FIN queued behind the bytes is seen without a new event") {
  // The client sends its request and half-closes at once: both wait in the queue before the
  // first read, which returns the bytes only. The next read must find the end of the stream
  // (no readiness event will come for it) — with the kernel's hint and without it.
  for (bool hint : {true, false}) {
    INFO("TCP_INQ " << hint);
    Pair p(hint);
    asio::write(p.client, asio::buffer(std::string("GET / HTTP/1.1\r\n\r\n")));
    p.client.shutdown(tcp::socket::shutdown_send);
    p.AwaitQueued(18);
    Poll(p.io);  // the reactor takes the readiness event now, with no read waiting
    std::string buf(64, '\0');
    std::optional<Result> got;
    Read(p, buf, got);
    RunUntil(p.io, [&] { return got.has_value(); });
    REQUIRE(got.has_value());
    CHECK(got->bytes == "GET / HTTP/1.1\r\n\r\n");
    Read(p, buf, got);
    RunUntil(p.io, [&] { return got.has_value(); });
    REQUIRE(got.has_value());
    CHECK(got->ec == asio::error::eof);
  }
}

TEST_CASE("P-5 short read: a read still queued when the io_context goes is freed, not run") {
  std::string buf(64, '\0');
  bool called = false;
  {
    auto p = std::make_unique<Pair>();
    AsyncReadShort(p->server, ShortReadReactorOf(p->server), asio::buffer(buf),
                   [&called](boost::system::error_code, size_t) { called = true; });
    Poll(p->io);
    // The sockets go first (their reads are aborted and posted), then the io_context, which
    // destroys what was posted without running it (ASan: nothing leaks).
  }
  CHECK_FALSE(called);
}

}  // namespace short_read_test
}  // namespace meshwork::http
