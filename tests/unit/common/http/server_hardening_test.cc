// The HTTP server against hostile and slow clients: framing that could smuggle a
// request, chunk extensions, the cap on buffered bodies, deadlines that measure progress,
// Date on every answer, and the accept back-off.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "common/http/framing.h"
#include "common/http/response.h"
#include "common/http/server.h"
#include "common/time/clock.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"
#include "tests/raw_connection.h"

namespace meshwork::http {
namespace {

using meshwork::testing::RawConnection;
using namespace std::chrono_literals;

ServerOptions Options() {
  ServerOptions options;
  options.name = "test";
  options.listen = "127.0.0.1:0";
  options.threads = 2;
  options.header_limit_bytes = 4096;
  options.body_limit_bytes = 1024;
  options.idle_timeout = 30s;
  options.read_timeout = 10s;
  options.send_timeout = 10s;
  return options;
}

// GET /hello, POST /echo, GET /big (a body of `big_bytes`), PUT /stream (streamed: answers
// with the byte count, or the read error).
Router TestRouter(size_t big_bytes = 0) {
  Router router;
  router.Add({Verb::get}, "/hello", [](RequestContext&, Responder r) {
    r.Send(MakeResponse(Status::ok, "hello", "text/plain"));
  });
  router.Add({Verb::post}, "/echo", [](RequestContext& ctx, Responder r) {
    r.Send(MakeResponse(Status::ok, ctx.request.body(), "text/plain"));
  });
  auto big = std::make_shared<std::string>(big_bytes, 'm');
  router.Add({Verb::get}, "/big", [big](RequestContext&, Responder r) {
    r.Send(MakeResponse(Status::ok, *big, "application/octet-stream"));
  });
  router.AddStreaming(
      {Verb::put}, "/stream", [](RequestContext&, std::shared_ptr<BodyReader> body, Responder r) {
        struct Loop : std::enable_shared_from_this<Loop> {
          std::shared_ptr<BodyReader> body;
          std::optional<Responder> r;
          size_t bytes = 0;
          void Next() {
            body->Read([self = shared_from_this()](const absl::Status& status,
                                                   std::span<const uint8_t> chunk, bool done) {
              if (!status.ok()) return self->r->Send(ErrorResponse(status));
              self->bytes += chunk.size();
              if (done) {
                return self->r->Send(
                    MakeResponse(Status::ok, std::to_string(self->bytes), "text/plain"));
              }
              self->Next();
            });
          }
        };
        auto loop = std::make_shared<Loop>();
        loop->body = std::move(body);
        loop->r.emplace(std::move(r));
        loop->Next();
      });
  return router;
}

std::unique_ptr<Server> Start(ServerOptions options, Router router = TestRouter()) {
  auto server = Server::Start(std::move(options), std::move(router));
  INFO(server.status().ToString());
  REQUIRE(server.ok());
  return std::move(*server);
}

// Sends `request` and expects one answer with `status`, then the connection closed (nothing
// else answered: the body bytes never ran as a request of their own).
void ExpectRefusedAndClosed(uint16_t port, const std::string& request, unsigned status) {
  RawConnection conn(port);
  conn.Write(request);
  auto response = conn.Read();
  REQUIRE(response);
  CHECK(response->result_int() == status);
  CHECK_FALSE(response->keep_alive());
  CHECK(conn.ClosedByPeer());
}

TEST_CASE("R-3 Transfer-Encoding not ending in chunked is 400 and close: no smuggled request") {
  auto server = Start(Options());
  // The "body" is a complete second request: it must never be answered.
  const std::string smuggled = "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n";
  for (std::string te : {"identity", "xchunked", "chunked, identity"}) {
    INFO(te);
    ExpectRefusedAndClosed(
        server->port(),
        "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: " + te + "\r\n\r\n" + smuggled, 400);
  }
}

TEST_CASE("R-3 Transfer-Encoding with Content-Length is 400 and close") {
  auto server = Start(Options());
  const std::string smuggled = "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n";
  ExpectRefusedAndClosed(server->port(),
                         "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\n"
                         "Content-Length: " +
                             std::to_string(smuggled.size()) + "\r\n\r\n" + smuggled,
                         400);
}

TEST_CASE("R-3 an unknown coding before chunked is 501 and close") {
  auto server = Start(Options());
  ExpectRefusedAndClosed(server->port(),
                         "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n"
                         "\r\n0\r\n\r\n",
                         501);
}

TEST_CASE("R-3 smuggling framing is refused on streamed routes too") {
  auto server = Start(Options());
  ExpectRefusedAndClosed(server->port(),
                         "PUT /stream HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity\r\n\r\n"
                         "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n",
                         400);
}

TEST_CASE("R-3 malformed chunking answers 400 on buffered and streamed routes") {
  auto server = Start(Options());
  for (std::string path : {"/echo", "/stream"}) {
    INFO(path);
    std::string method = path == "/echo" ? "POST" : "PUT";
    ExpectRefusedAndClosed(server->port(),
                           method + " " + path +
                               " HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
                               "zz\r\nabc\r\n0\r\n\r\n",
                           400);
  }
}

TEST_CASE("R-3 a chunk extension above the limit answers 400, on either kind of route") {
  ServerOptions options = Options();
  options.chunk_extension_limit_bytes = 64;
  auto server = Start(options);
  for (std::string path : {"/echo", "/stream"}) {
    INFO(path);
    std::string method = path == "/echo" ? "POST" : "PUT";
    ExpectRefusedAndClosed(server->port(),
                           method + " " + path +
                               " HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3;" +
                               std::string(200, 'e') + "\r\nabc\r\n0\r\n\r\n",
                           400);
  }
}

TEST_CASE("R-3 a chunk-size line that never ends is cut at the decoder's buffer, not buffered") {
  auto server = Start(Options());
  RawConnection conn(server->port());
  conn.Write("PUT /stream HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3;");
  // 16 MiB of extension: the server answers and closes long before taking it all.
  std::string extension(16 << 20, 'e');
  size_t taken = conn.WriteFor(extension, 5s);
  auto response = conn.Read();
  REQUIRE(response);
  CHECK(response->result_int() == 400);
  CHECK(taken < extension.size());
}

// One sample of a counter or gauge from `registry` (the sum of its series); -1 when absent.
double Sample(prometheus::Registry& registry, const std::string& name) {
  for (const auto& family : registry.Collect()) {
    if (family.name != name) continue;
    double total = 0;
    for (const auto& m : family.metric) total += m.counter.value + m.gauge.value;
    return total;
  }
  return -1;
}

TEST_CASE("R-3 buffered bodies beyond the listener's cap answer 503 with Retry-After") {
  auto registry = std::make_shared<prometheus::Registry>();
  ServerOptions options = Options();
  options.registry = registry.get();
  options.body_limit_bytes = 1024;
  options.max_buffered_body_bytes = 2048;
  auto server = Start(options);
  const std::string head = "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 1024\r\n\r\n";
  // Two stalled uploads hold the whole cap (once the server has read their headers)...
  RawConnection first(server->port()), second(server->port());
  first.Write(head + "x");
  second.Write(head + "y");
  for (int i = 0; i < 500 && Sample(*registry, "meshwork_http_buffered_body_bytes") < 2048; ++i) {
    std::this_thread::sleep_for(10ms);  // another thread's progress, visible only here
  }
  REQUIRE(Sample(*registry, "meshwork_http_buffered_body_bytes") == 2048);
  // ...so a third is refused at once, not left waiting.
  RawConnection third(server->port());
  third.Write(head);
  auto refused = third.Read();
  REQUIRE(refused);
  CHECK(refused->result_int() == 503);
  CHECK((*refused)[beast_http::field::retry_after] == "1");
  CHECK(refused->body().find("unfinished request bodies") != std::string::npos);
  CHECK(Sample(*registry, "meshwork_http_body_budget_refusals_total") == 1);
  // The first upload finishing gives its share back: a new one is taken.
  first.Write(std::string(1023, 'x'));
  auto done = first.Read();
  REQUIRE(done);
  CHECK(done->result_int() == 200);
  RawConnection fourth(server->port());
  fourth.Write(head + std::string(1024, 'z'));
  auto accepted = fourth.Read();
  REQUIRE(accepted);
  CHECK(accepted->result_int() == 200);
}

TEST_CASE(
    "R-3 a body refused on its header is drained, so the client still sending reads the answer") {
  auto server = Start(Options());  // body limit 1 KiB
  // 8 MB announced and sent at once: more than the socket buffers between client and server
  // hold, so the client's write completes only if the server keeps reading after its 413.
  const std::string body(8 << 20, 'b');
  for (const std::string& head :
       {std::string("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: ") +
            std::to_string(body.size()) + "\r\n\r\n",
        std::string("POST /no-such-route HTTP/1.1\r\nHost: a\r\nContent-Length: ") +
            std::to_string(body.size()) + "\r\n\r\n"}) {
    INFO(head);
    RawConnection conn(server->port());
    conn.Write(head);
    CHECK(conn.WriteFor(body, 5000ms) == body.size());
    auto answer = conn.Read();
    REQUIRE(answer);
    CHECK((answer->result_int() == 413 || answer->result_int() == 404));
    CHECK_FALSE(answer->keep_alive());
    // Then the server ends the connection.
    CHECK(conn.ClosedByPeer());
  }
  // A client that neither sends more nor closes is drained for the linger time only (2 s).
  for (int i = 0; i < 250 && server->counters().connections > 0; ++i) {
    std::this_thread::sleep_for(20ms);  // the clients above are gone: their sessions end
  }
  REQUIRE(server->counters().connections == 0);
  RawConnection silent(server->port());
  silent.Write("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5000\r\n\r\n");
  auto answer = silent.Read();
  REQUIRE(answer);
  CHECK(answer->result_int() == 413);
  const auto answered = std::chrono::steady_clock::now();
  CHECK(server->counters().connections == 1);  // held while it lingers
  while (server->counters().connections > 0 && std::chrono::steady_clock::now() - answered < 5s) {
    std::this_thread::sleep_for(20ms);  // another thread's progress, visible only here
  }
  CHECK(server->counters().connections == 0);
  CHECK(std::chrono::steady_clock::now() - answered < 3s);
}

TEST_CASE("RFC 9110 every response carries Date from the server's clock") {
  FakeClock clock;
  ServerOptions options = Options();
  options.clock = &clock;
  auto server = Start(options);
  std::string expected = HttpDate(
      std::chrono::duration_cast<std::chrono::seconds>(clock.Now().time_since_epoch()).count());
  RawConnection conn(server->port());
  conn.Write("GET /hello HTTP/1.1\r\nHost: a\r\n\r\nGET /nothing HTTP/1.1\r\nHost: a\r\n\r\n");
  auto ok = conn.Read();
  auto missing = conn.Read();
  REQUIRE(ok);
  REQUIRE(missing);
  CHECK((*ok)[beast_http::field::date] == expected);
  CHECK(missing->result_int() == 404);
  CHECK((*missing)[beast_http::field::date] == expected);
  // A refusal written before any route ran has it too.
  RawConnection bad(server->port());
  bad.Write("POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity\r\n\r\n");
  auto refused = bad.Read();
  REQUIRE(refused);
  CHECK((*refused)[beast_http::field::date] == expected);
}

TEST_CASE("R-3 a slow viewer that keeps reading is not cut by the send timeout") {
  ServerOptions options = Options();
  options.send_timeout = 1s;
  options.read_timeout = 1s;
  constexpr size_t kBody = 24 << 20;
  auto server = Start(options, TestRouter(kBody));
  // A small receive window, read a little at a time: the whole answer takes several times
  // the send timeout, but bytes move all along.
  RawConnection conn(server->port(), 64 * 1024);
  conn.Write("GET /big HTTP/1.1\r\nHost: a\r\n\r\n");
  auto& socket = conn.socket();
  std::vector<char> buffer(256 * 1024);
  size_t received = 0;
  auto start = std::chrono::steady_clock::now();
  boost::system::error_code ec;
  while (!ec && received < kBody) {
    received += socket.read_some(boost::asio::buffer(buffer), ec);
    std::this_thread::sleep_for(40ms);  // the viewer's pace is what this test is about
  }
  auto elapsed = std::chrono::steady_clock::now() - start;
  INFO("received " << received << " in " << std::chrono::duration<double>(elapsed).count()
                   << " s: " << ec.message());
  CHECK(received > kBody);                    // the whole body and its header
  CHECK(elapsed > options.send_timeout * 2);  // it really was slower than the timeout
}

TEST_CASE("R-3 a client that stops reading is cut after the send timeout") {
  ServerOptions options = Options();
  options.send_timeout = 300ms;
  auto server = Start(options, TestRouter(32 << 20));
  RawConnection conn(server->port(), 64 * 1024);
  conn.Write("GET /big HTTP/1.1\r\nHost: a\r\n\r\n");
  // Never read: once the buffers are full the server makes no progress and gives up. The
  // answer's bytes are counted when its write ends, which only the cut can make happen while
  // this client reads nothing (a sanitized server may take a second to start writing).
  auto& socket = conn.socket();
  auto start = std::chrono::steady_clock::now();
  while (server->counters().bytes_out == 0 && std::chrono::steady_clock::now() - start < 20s) {
    std::this_thread::sleep_for(20ms);  // polls a counter of the server's own thread
  }
  CHECK(server->counters().bytes_out > 0);
  CHECK(server->counters().bytes_out < (32u << 20));
  std::vector<char> buffer(1 << 20);
  size_t received = 0;
  boost::system::error_code ec;
  while (!ec) received += socket.read_some(boost::asio::buffer(buffer), ec);
  CHECK(received < (32u << 20));
}

TEST_CASE("R-3 a request header is due within the read timeout once its first byte came") {
  ServerOptions options = Options();
  options.idle_timeout = 30s;
  options.read_timeout = 300ms;
  auto server = Start(options);
  RawConnection conn(server->port());
  conn.Write("GET /hello HTTP/1.1\r\n");  // and nothing more
  auto start = std::chrono::steady_clock::now();
  CHECK(conn.ClosedByPeer(10s));
  CHECK(std::chrono::steady_clock::now() - start < 10s);  // well before the idle timeout
}

TEST_CASE("R-3 an idle keep-alive connection waits for the idle timeout, not the read timeout") {
  ServerOptions options = Options();
  options.idle_timeout = 30s;
  options.read_timeout = 200ms;
  auto server = Start(options);
  RawConnection conn(server->port());
  CHECK_FALSE(conn.ClosedByPeer(1s));  // idle: kept
  conn.Write("GET /hello HTTP/1.1\r\nHost: a\r\n\r\n");
  auto r = conn.Read();
  REQUIRE(r);
  CHECK(r->result_int() == 200);
}

TEST_CASE("R-3 out of descriptors, the listener backs off instead of spinning") {
  auto registry = std::make_shared<prometheus::Registry>();
  ServerOptions options = Options();
  options.registry = registry.get();
  auto server = Start(options);
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket client(io);
  client.open(boost::asio::ip::tcp::v4());  // its descriptor exists before the table fills
  // Take every free descriptor, so the listener's accept fails with EMFILE. Nothing below
  // asserts until they are given back: the sanitizers' runtimes need descriptors to report.
  std::vector<int> filler;
  while (true) {
    int fd = ::open("/dev/null", O_RDONLY);
    if (fd < 0) break;
    filler.push_back(fd);
  }
  int exhausted = errno;
  boost::system::error_code connect_error;
  client.connect({boost::asio::ip::make_address("127.0.0.1"), server->port()}, connect_error);
  std::this_thread::sleep_for(1s);  // how often it retries within this second is the test
  double failures = Sample(*registry, "meshwork_http_accept_failures_total");
  for (int fd : filler) ::close(fd);
  REQUIRE(exhausted == EMFILE);
  REQUIRE_FALSE(connect_error);
  INFO("accept failures in 1 s: " << failures);
  CHECK(failures >= 1);
  CHECK(failures <= 20);  // 100 ms back-off: about 10; a spin makes thousands
  // With descriptors back, the waiting connection is taken and answered.
  std::string request = "GET /hello HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";
  boost::asio::write(client, boost::asio::buffer(request));
  boost::beast::flat_buffer buffer;
  Response response;
  boost::beast::error_code ec;
  beast_http::read(client, buffer, response, ec);
  REQUIRE_FALSE(ec);
  CHECK(response.result_int() == 200);
}

}  // namespace
}  // namespace meshwork::http
