// HTTPS listeners of meshwork::http::Server: TLS handshake, scheme, deadlines, certificate
// reload without restart (T-6, R-3, R-7).
#include <fcntl.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "boost/asio.hpp"
#include "boost/asio/ssl.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/http.hpp"
#include "boost/beast/ssl.hpp"
#include "common/http/client.h"
#include "common/http/content.h"
#include "common/http/response.h"
#include "common/http/router.h"
#include "common/http/server.h"

namespace meshwork::http {
namespace {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace fs = std::filesystem;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

std::string TempDir(const std::string& tag) {
  static std::atomic<int> counter{0};
  fs::path dir = fs::temp_directory_path() / "meshwork-unit" /
                 (tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

// Writes a fresh self-signed certificate for CN=`cn` and its key to `cert` and `key`.
void MakeCertificate(const std::string& cn, const std::string& cert, const std::string& key) {
  std::string cmd = "openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=" + cn +
                    " -days 1 -keyout '" + key + "' -out '" + cert + "' >/dev/null 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
}

// One TLS client connection (no verification: the certificates are self-signed). Every
// step runs the io_context to completion under a 5 s deadline.
class TlsClient {
 public:
  TlsClient() : ctx_(ssl::context::tls_client), stream_(ioc_, ctx_) {
    ctx_.set_verify_mode(ssl::verify_none);
    // Counts the TLS records that arrive (OpenSSL reports each record's header).
    SSL_set_msg_callback(stream_.native_handle(), &TlsClient::OnRecord);
    SSL_set_msg_callback_arg(stream_.native_handle(), &records_in_);
  }

  // Connects and handshakes; returns the error text, empty on success.
  std::string Connect(uint16_t port) {
    std::string error;
    auto& lowest = beast::get_lowest_layer(stream_);
    lowest.expires_after(5s);
    lowest.async_connect(
        tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), [&](beast::error_code ec) {
          if (ec) {
            error = "connect: " + ec.message();
            return;
          }
          stream_.async_handshake(ssl::stream_base::client, [&](beast::error_code ec) {
            if (ec) error = "handshake: " + ec.message();
          });
        });
    Run();
    if (error.empty()) peer_cn_ = ReadPeerCommonName();
    return error;
  }

  // Sends GET `target` on the connection; returns the status (0 on a transport error).
  int Get(const std::string& target, bool keep_alive = true) {
    int status = 0;
    Request req{Verb::get, target, 11};
    req.set(beast_http::field::host, "localhost");
    req.keep_alive(keep_alive);
    Response res;
    beast::get_lowest_layer(stream_).expires_after(5s);
    beast_http::async_write(stream_, req, [&](beast::error_code ec, size_t) {
      if (ec) return;
      beast_http::async_read(stream_, buffer_, res, [&](beast::error_code ec, size_t) {
        if (!ec) status = res.result_int();
      });
    });
    Run();
    body_ = res.body();
    return status;
  }

  // Reads until the server ends the connection; returns how it ended.
  beast::error_code ReadToEnd(std::chrono::milliseconds timeout) {
    beast::error_code result;
    char byte;
    beast::get_lowest_layer(stream_).expires_after(timeout);
    std::function<void(beast::error_code, size_t)> on_read = [&](beast::error_code ec, size_t) {
      if (ec) {
        result = ec;
        return;
      }
      stream_.async_read_some(asio::buffer(&byte, 1), on_read);
    };
    stream_.async_read_some(asio::buffer(&byte, 1), on_read);
    Run();
    return result;
  }

  // Sends `head` and `body_bytes` of body at once, without waiting for an answer, then reads
  // the answer: its status (0 when none came). `sent`: the body bytes written.
  int SendThenRead(const std::string& head, size_t body_bytes, size_t& sent) {
    const std::string bytes = head + std::string(body_bytes, 'b');
    size_t written = 0;
    beast::get_lowest_layer(stream_).expires_after(5s);
    asio::async_write(stream_, asio::buffer(bytes),
                      [&](beast::error_code, size_t n) { written = n; });
    Run();
    sent = written > head.size() ? written - head.size() : 0;
    int status = 0;
    Response res;
    beast::get_lowest_layer(stream_).expires_after(5s);
    beast_http::async_read(stream_, buffer_, res, [&](beast::error_code ec, size_t) {
      if (!ec) status = res.result_int();
    });
    Run();
    return status;
  }

  // Writes bytes to the TCP connection under the TLS layer (a forged record).
  void WriteRaw(const std::string& bytes) {
    beast::error_code ec;
    asio::write(beast::get_lowest_layer(stream_).socket(), asio::buffer(bytes), ec);
    REQUIRE_FALSE(ec);
  }

  // Sends GET `target` without reading the answer.
  void SendOnly(const std::string& target) {
    Request req{Verb::get, target, 11};
    req.set(beast_http::field::host, "localhost");
    beast::error_code result;
    beast::get_lowest_layer(stream_).expires_after(5s);
    beast_http::async_write(stream_, req, [&](beast::error_code ec, size_t) { result = ec; });
    Run();
    REQUIRE_FALSE(result);
  }

  // Reads until the connection ends; returns how many bytes arrived.
  size_t Drain(std::chrono::milliseconds timeout, beast::error_code& how) {
    size_t total = 0;
    std::vector<char> buf(64 * 1024);
    beast::get_lowest_layer(stream_).expires_after(timeout);
    std::function<void(beast::error_code, size_t)> on_read = [&](beast::error_code ec, size_t n) {
      total += n;
      if (ec) {
        how = ec;
        return;
      }
      stream_.async_read_some(asio::buffer(buf), on_read);
    };
    stream_.async_read_some(asio::buffer(buf), on_read);
    Run();
    return total;
  }

  // A small receive buffer, so that a client that stops reading stalls the server soon.
  void SmallReceiveBuffer() {
    auto& socket = beast::get_lowest_layer(stream_).socket();
    socket.open(tcp::v4());
    socket.set_option(asio::socket_base::receive_buffer_size(4096));
  }

  const std::string& peer_cn() const { return peer_cn_; }
  const std::string& body() const { return body_; }
  // Records received since the connection opened (handshake included).
  int records_in() const { return records_in_; }

 private:
  static void OnRecord(int write_p, int, int content_type, const void*, size_t, SSL*, void* arg) {
    if (write_p == 0 && content_type == SSL3_RT_HEADER) ++*static_cast<int*>(arg);
  }
  void Run() {
    ioc_.restart();
    ioc_.run();
  }
  std::string ReadPeerCommonName() {
    X509* cert = SSL_get1_peer_certificate(stream_.native_handle());
    if (!cert) return "";
    char buf[256] = {0};
    int n = X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, buf, sizeof buf);
    X509_free(cert);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  }

  asio::io_context ioc_;
  ssl::context ctx_;
  beast::ssl_stream<beast::tcp_stream> stream_;
  beast::flat_buffer buffer_;
  std::string peer_cn_;
  std::string body_;
  int records_in_ = 0;
};

struct TlsFixture {
  static constexpr size_t kFramePair = 9 + 16384;
  std::string dir = TempDir("tls");
  std::string cert = dir + "/cert.pem";
  std::string key = dir + "/key.pem";
  std::atomic<int> https_requests{0};
  std::string media = [] {
    std::string out(3 * 256 * 1024 + 17, '\0');
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<char>((i * 131) ^ (i >> 9));
    return out;
  }();

  std::chrono::milliseconds send_timeout{10'000};
  std::chrono::milliseconds read_timeout{300};

  std::string media_file = dir + "/media.bin";

  TlsFixture() {
    MakeCertificate("one", cert, key);
    std::ofstream(media_file, std::ios::binary) << media;
  }

  ServerOptions Options() {
    ServerOptions options;
    options.name = "https";
    options.scheme = "https";
    options.listen = "127.0.0.1:0";
    options.threads = 2;
    options.read_timeout = read_timeout;
    options.idle_timeout = 10s;
    options.send_timeout = send_timeout;
    options.tls_cert_file = cert;
    options.tls_key_file = key;
    return options;
  }

  Router MakeRouter() {
    Router router;
    router.Add({Verb::get}, "/scheme", [this](RequestContext& ctx, Responder responder) {
      if (ctx.scheme == "https") ++https_requests;
      responder.Send(MakeResponse(Status::ok, ctx.scheme, "text/plain"));
    });
    // L-17: a body of several chunks, written from them (scatter-gather).
    router.Add({Verb::get}, "/media", [this](RequestContext& ctx, Responder responder) {
      SharedBuffers body;
      for (size_t at = 0; at < media.size(); at += 256 * 1024) {
        body.Append(std::make_shared<const std::string>(media.substr(at, 256 * 1024)));
      }
      SendMedia(ctx.request, responder, std::move(body), "video/mp4");
    });
    // D-3: a file answer (an archived segment), read and written a piece at a time.
    router.Add({Verb::get}, "/file", [this](RequestContext&, Responder responder) {
      int fd = ::open(media_file.c_str(), O_RDONLY | O_CLOEXEC);
      REQUIRE(fd >= 0);
      auto file = std::make_shared<OpenFile>(fd, media.size());
      responder.SendFile(Response{Status::ok, 11}, std::move(file), 0, media.size());
    });
    // 64 MiB: more than the socket buffers hold (the same chunk again and again).
    router.Add({Verb::get}, "/big", [this](RequestContext& ctx, Responder responder) {
      auto chunk = std::make_shared<const std::string>(media.substr(0, 256 * 1024));
      SharedBuffers body;
      for (int i = 0; i < 256; ++i) body.Append(chunk);
      SendMedia(ctx.request, responder, std::move(body), "video/mp4");
    });
    // P-15: the shape of HTTP/2 DATA frames — a 9-byte piece before every 16 KiB piece.
    router.Add({Verb::get}, "/frames", [this](RequestContext& ctx, Responder responder) {
      SharedBuffers body;
      for (size_t at = 0; at + kFramePair <= media.size(); at += kFramePair) {
        body.Append(std::make_shared<const std::string>(media.substr(at, 9)));
        body.Append(std::make_shared<const std::string>(media.substr(at + 9, 16384)));
      }
      SendMedia(ctx.request, responder, std::move(body), "video/mp4");
    });
    return router;
  }

  std::unique_ptr<Server> Start() {
    auto server = Server::Start(Options(), MakeRouter());
    REQUIRE(server.ok());
    return *std::move(server);
  }
};

TEST_CASE(
    "D-3 R-3 a file answer over TLS carries the file, read a piece at a time, and keeps "
    "the connection") {
  TlsFixture f;
  auto server = f.Start();
  TlsClient client;
  REQUIRE(client.Connect(server->port()) == "");
  CHECK(client.Get("/file") == 200);
  CHECK(client.body() == f.media);  // 3 pieces of 256 KiB and 17 bytes
  CHECK(client.Get("/scheme") == 200);
}

TEST_CASE("T-6 a TLS listener serves HTTPS and its handlers see scheme https") {
  TlsFixture f;
  auto server = f.Start();
  CHECK(server->tls());

  TlsClient client;
  REQUIRE(client.Connect(server->port()) == "");
  CHECK(client.peer_cn() == "one");
  CHECK(client.Get("/scheme") == 200);
  CHECK(client.body() == "https");
  // Keep-alive: a second request on the same TLS connection.
  CHECK(client.Get("/scheme") == 200);
  CHECK(f.https_requests == 2);
  CHECK(server->counters().bytes_out > 0);

  SECTION("Connection: close ends with a TLS close_notify") {
    CHECK(client.Get("/scheme", /*keep_alive=*/false) == 200);
    CHECK(client.ReadToEnd(2s) == asio::error::eof);
  }
  SECTION("Stop closes an idle TLS connection with close_notify, without waiting for it") {
    auto started = std::chrono::steady_clock::now();
    server->Stop(2000ms);
    CHECK(std::chrono::steady_clock::now() - started < 1500ms);
    CHECK(client.ReadToEnd(2s) == asio::error::eof);
  }
}

TEST_CASE("L-17 scatter-gather responses over TLS arrive byte for byte") {
  TlsFixture f;
  auto server = f.Start();
  TlsClient client;
  REQUIRE(client.Connect(server->port()) == "");
  CHECK(client.Get("/media") == 200);
  CHECK(client.body() == f.media);
  // Keep-alive: a second one on the same TLS connection.
  CHECK(client.Get("/media") == 200);
  CHECK(client.body() == f.media);
}

TEST_CASE("P-15 small pieces between large ones leave in whole TLS records, byte for byte") {
  TlsFixture f;
  auto server = f.Start();
  TlsClient client;
  REQUIRE(client.Connect(server->port()) == "");
  REQUIRE(client.Get("/scheme") == 200);  // the session tickets of TLS 1.3 arrive with it
  int before = client.records_in();
  REQUIRE(client.Get("/frames") == 200);
  size_t pairs = f.media.size() / TlsFixture::kFramePair;
  REQUIRE(client.body().size() == pairs * TlsFixture::kFramePair);
  CHECK(client.body() == f.media.substr(0, client.body().size()));
  // Packed: one record per 16 KiB of the head (< 300 bytes) and body, the last one partial. A
  // record per piece would be twice as many.
  int most = static_cast<int>((client.body().size() + 300) / 16384 + 1);
  int records = client.records_in() - before;
  INFO("records " << records << " for " << client.body().size() << " bytes");
  CHECK(records <= most);
  CHECK(records >= most - 1);
}

TEST_CASE("R-3 misbehaving TLS peers lose only their own connection") {
  TlsFixture f;
  f.send_timeout = 300ms;
  auto server = f.Start();

  SECTION("a forged record after the handshake closes the connection at once") {
    TlsClient client;
    REQUIRE(client.Connect(server->port()) == "");
    REQUIRE(client.Get("/scheme") == 200);
    // An application-data record whose tag cannot verify.
    std::string forged = std::string("\x17\x03\x03\x00\x40", 5) + std::string(64, '\x5a');
    client.WriteRaw(forged);
    beast::error_code how;
    auto started = std::chrono::steady_clock::now();
    client.Drain(3s, how);
    CHECK(how);
    CHECK(how != beast::error::timeout);
    CHECK(std::chrono::steady_clock::now() - started < 2s);
  }
  SECTION("a peer that stops reading a large answer is cut by the send deadline") {
    TlsClient client;
    client.SmallReceiveBuffer();
    REQUIRE(client.Connect(server->port()) == "");
    client.SendOnly("/big");
    // The server's send deadline runs on its real clock (its wheel's 100 ms ticks): reading
    // at any time before it fires would be progress, so the client waits without reading.
    std::this_thread::sleep_for(1500ms);
    beast::error_code how;
    size_t got = client.Drain(5s, how);
    CHECK(how);
    CHECK(how != beast::error::timeout);
    CHECK(got < 64u * 1024 * 1024);
  }
  // Whatever happened to that connection, the next client is served.
  TlsClient next;
  REQUIRE(next.Connect(server->port()) == "");
  CHECK(next.Get("/scheme") == 200);
}

TEST_CASE("R-3 a TLS client still sending a body refused on its header reads the answer") {
  TlsFixture f;
  f.read_timeout = 5s;  // the linger then lasts its own 2 s
  auto server = f.Start();
  TlsClient client;
  REQUIRE(client.Connect(server->port()) == "");
  // 4 MB to a path no route takes: more than the socket buffers hold, so the write completes
  // only if the server, after its 404 and close_notify, drains the rest.
  const size_t body = 4 << 20;
  size_t sent = 0;
  const int status = client.SendThenRead(
      "POST /nothing HTTP/1.1\r\nHost: localhost\r\nContent-Length: " + std::to_string(body) +
          "\r\n\r\n",
      body, sent);
  CHECK(sent == body);
  CHECK(status == 404);
}

TEST_CASE("T-6 a TLS listener refuses TLS below 1.2") {
  TlsFixture f;
  auto server = f.Start();
  asio::io_context ioc;
  ssl::context ctx(ssl::context::tls_client);
  ctx.set_verify_mode(ssl::verify_none);
  SSL_CTX_set_security_level(ctx.native_handle(), 0);
  SSL_CTX_set_min_proto_version(ctx.native_handle(), TLS1_VERSION);
  SSL_CTX_set_max_proto_version(ctx.native_handle(), TLS1_1_VERSION);
  beast::ssl_stream<beast::tcp_stream> stream(ioc, ctx);
  beast::get_lowest_layer(stream).expires_after(5s);
  beast::error_code result;
  beast::get_lowest_layer(stream).async_connect(
      tcp::endpoint(asio::ip::make_address("127.0.0.1"), server->port()),
      [&](beast::error_code ec) {
        if (ec) {
          result = ec;
          return;
        }
        stream.async_handshake(ssl::stream_base::client,
                               [&](beast::error_code ec) { result = ec; });
      });
  ioc.run();
  CHECK(result);
  CHECK(result != beast::error::timeout);
}

TEST_CASE("R-3 plain HTTP and silent clients on a TLS listener are dropped, the server lives") {
  TlsFixture f;
  auto server = f.Start();

  SECTION("a plain-HTTP request fails cleanly and the next TLS client is served") {
    ClientRequest req;
    req.host = "127.0.0.1";
    req.port = server->port();
    req.target = "/scheme";
    req.timeout = 3s;
    auto started = std::chrono::steady_clock::now();
    auto res = Fetch(req);
    CHECK_FALSE(res.ok());
    CHECK(std::chrono::steady_clock::now() - started < 2s);  // closed, not left hanging
  }
  SECTION("a client that sends nothing is dropped after the handshake deadline") {
    asio::io_context ioc;
    beast::tcp_stream stream(ioc);
    stream.expires_after(5s);
    beast::error_code result;
    char byte;
    auto started = std::chrono::steady_clock::now();
    stream.async_connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), server->port()),
                         [&](beast::error_code ec) {
                           if (ec) {
                             result = ec;
                             return;
                           }
                           stream.async_read_some(
                               asio::buffer(&byte, 1),
                               [&](beast::error_code ec, size_t) { result = ec; });
                         });
    ioc.run();
    auto took = std::chrono::steady_clock::now() - started;
    CHECK((result == asio::error::eof || result == asio::error::connection_reset));
    CHECK(took >= 250ms);  // read_timeout is 300 ms
    CHECK(took < 3s);
  }
  SECTION("a client that stops mid-handshake is dropped after the handshake deadline") {
    asio::io_context ioc;
    beast::tcp_stream stream(ioc);
    stream.expires_after(5s);
    beast::error_code result;
    char byte;
    // The first bytes of a TLS record header, then silence.
    static const unsigned char kPartial[] = {0x16, 0x03, 0x01};
    auto started = std::chrono::steady_clock::now();
    stream.async_connect(
        tcp::endpoint(asio::ip::make_address("127.0.0.1"), server->port()),
        [&](beast::error_code ec) {
          if (ec) {
            result = ec;
            return;
          }
          asio::async_write(stream, asio::buffer(kPartial), [&](beast::error_code ec, size_t) {
            if (ec) {
              result = ec;
              return;
            }
            stream.async_read_some(asio::buffer(&byte, 1),
                                   [&](beast::error_code ec, size_t) { result = ec; });
          });
        });
    ioc.run();
    auto took = std::chrono::steady_clock::now() - started;
    CHECK((result == asio::error::eof || result == asio::error::connection_reset));
    CHECK(took < 3s);
  }

  TlsClient client;
  REQUIRE(client.Connect(server->port()) == "");
  CHECK(client.Get("/scheme") == 200);
}

TEST_CASE("R-7 TLS certificates reload without restart") {
  TlsFixture f;
  auto server = f.Start();

  TlsClient before;
  REQUIRE(before.Connect(server->port()) == "");
  CHECK(before.peer_cn() == "one");

  MakeCertificate("two", f.cert, f.key);
  REQUIRE(server->ReloadTls().ok());

  TlsClient after;
  REQUIRE(after.Connect(server->port()) == "");
  CHECK(after.peer_cn() == "two");
  CHECK(after.Get("/scheme") == 200);
  // The connection opened before the reload keeps working on its own context.
  CHECK(before.Get("/scheme") == 200);

  SECTION("a reload from missing files fails and keeps the current certificate") {
    fs::remove(f.key);
    absl::Status status = server->ReloadTls();
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(status.message()).find(f.key) != std::string::npos);
    TlsClient again;
    REQUIRE(again.Connect(server->port()) == "");
    CHECK(again.peer_cn() == "two");
    CHECK(again.Get("/scheme") == 200);
  }
  SECTION("a key that does not match the certificate is refused") {
    std::string other_cert = f.dir + "/other-cert.pem";
    std::string other_key = f.dir + "/other-key.pem";
    MakeCertificate("three", other_cert, other_key);
    fs::copy_file(other_key, f.key, fs::copy_options::overwrite_existing);
    CHECK(server->ReloadTls().code() == absl::StatusCode::kInvalidArgument);
    TlsClient again;
    REQUIRE(again.Connect(server->port()) == "");
    CHECK(again.peer_cn() == "two");
  }
}

TEST_CASE("R-7 a TLS listener does not start without loadable certificate files") {
  TlsFixture f;

  SECTION("missing certificate file") {
    ServerOptions options = f.Options();
    options.tls_cert_file = f.dir + "/absent.pem";
    auto server = Server::Start(options, f.MakeRouter());
    REQUIRE_FALSE(server.ok());
    CHECK(server.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(server.status().message()).find("absent.pem") != std::string::npos);
  }
  SECTION("a certificate without a key") {
    ServerOptions options = f.Options();
    options.tls_key_file.clear();
    auto server = Server::Start(options, f.MakeRouter());
    CHECK(server.status().code() == absl::StatusCode::kInvalidArgument);
  }
  SECTION("a file that is not PEM") {
    std::string junk = f.dir + "/junk.pem";
    std::FILE* file = std::fopen(junk.c_str(), "w");
    REQUIRE(file != nullptr);
    std::fputs("not a certificate\n", file);
    std::fclose(file);
    ServerOptions options = f.Options();
    options.tls_cert_file = junk;
    auto server = Server::Start(options, f.MakeRouter());
    CHECK(server.status().code() == absl::StatusCode::kInvalidArgument);
  }
  SECTION("TLS with scheme http") {
    ServerOptions options = f.Options();
    options.scheme = "http";
    auto server = Server::Start(options, f.MakeRouter());
    CHECK(server.status().code() == absl::StatusCode::kInvalidArgument);
  }
  SECTION("ReloadTls on a plain listener") {
    ServerOptions options = f.Options();
    options.scheme = "http";
    options.tls_cert_file.clear();
    options.tls_key_file.clear();
    auto server = Server::Start(options, f.MakeRouter());
    REQUIRE(server.ok());
    CHECK_FALSE((*server)->tls());
    CHECK((*server)->ReloadTls().code() == absl::StatusCode::kFailedPrecondition);
  }
}

}  // namespace
}  // namespace meshwork::http
