// BasicTlsStream (common/http/tls_stream.h) against asio's own TLS client on a loopback
// connection: gather writes byte for byte, completions never inline, the end of a stream with
// and without close_notify, and no ciphertext buffers held while idle (P-15, T-6, R-3).
#include "common/http/tls_stream.h"

#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "boost/asio.hpp"
#include "boost/asio/ssl.hpp"
#include "common/http/tls.h"

namespace meshwork::http {
namespace tls_stream_test {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
namespace fs = std::filesystem;
using tcp = asio::ip::tcp;
using ErrorCode = boost::system::error_code;
using namespace std::chrono_literals;

// A server context with a fresh self-signed certificate (made once per process).
std::shared_ptr<ssl::context> ServerContext() {
  static std::atomic<int> counter{0};
  fs::path dir = fs::temp_directory_path() / "meshwork-unit" /
                 ("tls-stream-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string cert = (dir / "cert.pem").string(), key = (dir / "key.pem").string();
  std::string cmd = "openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=stream -days 1 -keyout '" +
                    key + "' -out '" + cert + "' >/dev/null 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
  auto ctx = LoadServerTlsContext(cert, key);
  REQUIRE(ctx.ok());
  return *ctx;
}

// One connection: our stream on the server side, asio::ssl::stream as the client, both on
// one io_context driven by the test.
struct Pair {
  asio::io_context ioc;
  std::shared_ptr<ssl::context> server_ctx = ServerContext();
  ssl::context client_ctx{ssl::context::tls_client};
  std::unique_ptr<BasicTlsStream<tcp::socket>> server;
  std::unique_ptr<ssl::stream<tcp::socket>> client;

  Pair() {
    client_ctx.set_verify_mode(ssl::verify_none);
    tcp::acceptor acceptor(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    client = std::make_unique<ssl::stream<tcp::socket>>(ioc, client_ctx);
    client->next_layer().connect(acceptor.local_endpoint());
    server = std::make_unique<BasicTlsStream<tcp::socket>>(acceptor.accept(), *server_ctx);
    ErrorCode server_ec = asio::error::would_block, client_ec = asio::error::would_block;
    server->async_handshake(ssl::stream_base::server, [&](ErrorCode ec) { server_ec = ec; });
    client->async_handshake(ssl::stream_base::client, [&](ErrorCode ec) { client_ec = ec; });
    RunUntil([&] {
      return server_ec != asio::error::would_block && client_ec != asio::error::would_block;
    });
    REQUIRE_FALSE(server_ec);
    REQUIRE_FALSE(client_ec);
  }

  // Runs handlers until `done` holds (at most 5 s: a broken stream fails the test, not hangs).
  template <typename Done>
  void RunUntil(Done done) {
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      ioc.restart();
      ioc.run_one_for(50ms);
    }
  }
  // Runs what is ready now, without waiting.
  void Poll() {
    ioc.restart();
    ioc.poll();
  }
};

std::string Pattern(size_t n, unsigned seed) {
  std::string out(n, '\0');
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<char>((i * 131 + seed) ^ (i >> 7));
  return out;
}

TEST_CASE("P-15 a gather of odd pieces arrives byte for byte and completions are never inline") {
  Pair p;
  // Pieces of every shape: tiny, a record and a byte, several records, empty.
  std::vector<std::string> pieces = {Pattern(9, 1),      Pattern(16384, 2), Pattern(1, 3),
                                     Pattern(0, 4),      Pattern(70000, 5), Pattern(16383, 6),
                                     Pattern(200000, 7), Pattern(5, 8)};
  std::string all;
  std::vector<asio::const_buffer> gather;
  for (const auto& piece : pieces) {
    all += piece;
    gather.push_back(asio::buffer(piece));
  }
  bool written = false;
  size_t wrote = 0;
  asio::async_write(*p.server, gather, [&](ErrorCode ec, size_t n) {
    REQUIRE_FALSE(ec);
    written = true;
    wrote = n;
  });
  CHECK_FALSE(written);  // posted, never run inside the call
  std::string got(all.size(), '\0');
  size_t read = 0;
  asio::async_read(*p.client, asio::buffer(got), [&](ErrorCode ec, size_t n) {
    REQUIRE_FALSE(ec);
    read = n;
  });
  p.RunUntil([&] { return written && read > 0; });
  CHECK(written);
  CHECK(wrote == all.size());
  REQUIRE(read == all.size());
  CHECK(got == all);

  // Two messages in one flight: the second read is already decrypted and still posted.
  std::string message = "first|second";
  asio::write(*p.client, asio::buffer(message));
  char buf[6];
  size_t first = 0;
  asio::async_read(*p.server, asio::buffer(buf, 6), [&](ErrorCode ec, size_t n) {
    REQUIRE_FALSE(ec);
    first = n;
  });
  p.RunUntil([&] { return first > 0; });
  REQUIRE(first == 6);
  CHECK(std::string(buf, 6) == "first|");
  bool second_done = false;
  size_t second = 0;
  p.server->async_read_some(asio::buffer(buf, 6), [&](ErrorCode ec, size_t n) {
    REQUIRE_FALSE(ec);
    second_done = true;
    second = n;
  });
  CHECK_FALSE(second_done);
  p.RunUntil([&] { return second_done; });
  CHECK(second_done);
  CHECK(std::string(buf, second) == "second");
}

TEST_CASE("P-15 an idle TLS connection holds no ciphertext buffers of its own") {
  Pair p;
  std::string big = Pattern(300000, 9);
  bool sent = false, received = false;
  asio::async_write(*p.server, asio::buffer(big), [&](ErrorCode ec, size_t) {
    REQUIRE_FALSE(ec);
    sent = true;
  });
  std::string got(big.size(), '\0');
  asio::async_read(*p.client, asio::buffer(got), [&](ErrorCode ec, size_t) {
    REQUIRE_FALSE(ec);
    received = true;
  });
  p.RunUntil([&] { return sent && received; });
  CHECK(got == big);
  // A read that has to wait for the peer: nothing buffered, so nothing kept (SSO strings).
  char buf[64];
  size_t n = 0;
  p.server->async_read_some(asio::buffer(buf), [&](ErrorCode ec, size_t got_n) {
    REQUIRE_FALSE(ec);
    n = got_n;
  });
  p.Poll();
  CHECK(n == 0);  // waiting for the peer
  CHECK(p.server->buffer_bytes() < 256);
  asio::write(*p.client, asio::buffer(std::string("ping")));
  p.RunUntil([&] { return n > 0; });
  CHECK(std::string(buf, n) == "ping");
}

TEST_CASE("R-3 the end of a TLS stream: close_notify reads as eof, a bare TCP end as truncation") {
  Pair p;
  char buf[16];
  ErrorCode result = asio::error::would_block;
  auto ended = [&] { return result != asio::error::would_block; };
  SECTION("close_notify") {
    p.client->async_shutdown([](ErrorCode) {});
    p.server->async_read_some(asio::buffer(buf), [&](ErrorCode ec, size_t) { result = ec; });
    p.RunUntil(ended);
    CHECK(result == asio::error::eof);
  }
  SECTION("TCP closed without close_notify") {
    // A FIN (a close would send RST: the session tickets are still unread on its side).
    p.client->next_layer().shutdown(tcp::socket::shutdown_send);
    p.server->async_read_some(asio::buffer(buf), [&](ErrorCode ec, size_t) { result = ec; });
    p.RunUntil(ended);
    CHECK(result == ssl::error::stream_truncated);
  }
  SECTION("a record that does not verify") {
    std::string forged = std::string("\x17\x03\x03\x00\x20", 5) + std::string(32, 'x');
    asio::write(p.client->next_layer(), asio::buffer(forged));
    p.server->async_read_some(asio::buffer(buf), [&](ErrorCode ec, size_t) { result = ec; });
    p.RunUntil(ended);
    CHECK(result);
    CHECK(result.category() == asio::error::get_ssl_category());
  }
  SECTION("our close_notify reaches the peer") {
    ErrorCode shut = asio::error::would_block;
    p.server->async_shutdown([&](ErrorCode ec) { shut = ec; });
    p.client->async_read_some(asio::buffer(buf), [&](ErrorCode ec, size_t) { result = ec; });
    p.RunUntil([&] { return ended() && shut != asio::error::would_block; });
    CHECK_FALSE(shut);
    CHECK(result == asio::error::eof);
  }
}

TEST_CASE("R-3 a peer that makes TLS answer while never reading loses its connection") {
  Pair p;
  // Each KeyUpdate asking for ours makes OpenSSL write one while reading; the peer never
  // reads, and the session (an upload, say) never writes, so nothing would let it out.
  std::atomic<bool> ended{false};
  ErrorCode how;
  size_t got = 0;
  char buf[64];
  std::function<void(ErrorCode, size_t)> on_read = [&](ErrorCode ec, size_t n) {
    got += n;
    if (ec) {
      how = ec;
      ended = true;
      return;
    }
    p.server->async_read_some(asio::buffer(buf), on_read);
  };
  p.server->async_read_some(asio::buffer(buf), on_read);
  int sent = 0;
  for (; sent < 3000 && !ended; ++sent) {
    REQUIRE(SSL_key_update(p.client->native_handle(), SSL_KEY_UPDATE_REQUESTED) == 1);
    ErrorCode ec;
    asio::write(*p.client, asio::buffer("x", 1), ec);
    if (ec) break;  // the server closed
    p.Poll();
  }
  p.RunUntil([&] { return ended.load(); });
  INFO("key updates sent " << sent << ", bytes read " << got);
  REQUIRE(ended);
  CHECK(how.category() == asio::error::get_ssl_category());
  CHECK(got < 3000);
}

}  // namespace tls_stream_test
}  // namespace meshwork::http
