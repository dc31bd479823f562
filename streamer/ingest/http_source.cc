// http:// pull of a continuous MPEG-TS body, streamed as it arrives (chunked or
// close-delimited), with reconnects. One io_context thread per source.
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/steady_timer.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/http.hpp"
#include "common/log/log.h"
#include "streamer/ingest/source_base.h"
#include "streamer/ingest/sources.h"

namespace meshwork::ingest {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

constexpr auto kConnectTimeout = std::chrono::seconds(5);
constexpr auto kReadTimeout = std::chrono::seconds(5);  // without a byte → reconnect
constexpr size_t kReadBufferBytes = 64 * 1024;
// The socket read buffer's bound: a few reads of body bytes waiting for `body`, a header, a
// chunk-size line.
constexpr size_t kMaxBufferedBytes = 256 * 1024;

class HttpSource final : public SourceBase {
 public:
  HttpSource(std::string url, const SourceUrl& parsed, BytesCallback on_bytes)
      : SourceBase(std::move(url), "http", std::move(on_bytes)),
        host_(parsed.host),
        port_(parsed.port),
        target_(parsed.target) {
    const bool v6 = host_.find(':') != std::string::npos;
    host_header_ = v6 ? absl::StrCat("[", host_, "]") : host_;
    if (port_ != 80) absl::StrAppend(&host_header_, ":", port_);
  }
  ~HttpSource() override { Stop(); }

  void Start() {
    Connect();
    Launch();
  }

 private:
  // One attempt: its socket, buffers and parser.
  struct Connection {
    explicit Connection(asio::io_context& io) : resolver(io), stream(io) {}
    tcp::resolver resolver;
    beast::tcp_stream stream;
    // bounded. It holds a response header or a chunk-size line with its extensions,
    // never a body (that goes to `body`): an upstream that sends a chunk-size line without
    // end fails the read (buffer_overflow) and the source retries, instead of growing it.
    beast::flat_buffer buffer{kMaxBufferedBytes};
    bhttp::request<bhttp::empty_body> request;
    bhttp::response_parser<bhttp::buffer_body> parser;
    std::vector<uint8_t> body = std::vector<uint8_t>(kReadBufferBytes);
    uint64_t received = 0;
    std::string peer;
  };
  using ConnectionPtr = std::shared_ptr<Connection>;

  void Run() override {
    auto guard = asio::make_work_guard(io_);
    io_.run();
  }

  void Interrupt() override { io_.stop(); }

  void Connect() {
    auto c = std::make_shared<Connection>(io_);
    connection_ = c;
    c->resolver.async_resolve(
        host_, std::to_string(port_),
        [this, c](beast::error_code ec, tcp::resolver::results_type results) {
          if (ec) return Retry(c, absl::StrCat("resolve ", host_, ": ", ec.message()));
          c->stream.expires_after(kConnectTimeout);
          c->stream.async_connect(results, [this, c](beast::error_code ec,
                                                     const tcp::endpoint& endpoint) {
            if (ec) return Retry(c, absl::StrCat("connect: ", ec.message()));
            c->peer = endpoint.address().is_v6()
                          ? absl::StrCat("[", endpoint.address().to_string(), "]:", endpoint.port())
                          : absl::StrCat(endpoint.address().to_string(), ":", endpoint.port());
            SendRequest(c);
          });
        });
  }

  void SendRequest(const ConnectionPtr& c) {
    c->request.method(bhttp::verb::get);
    c->request.target(target_);
    c->request.version(11);
    c->request.set(bhttp::field::host, host_header_);
    c->request.set(bhttp::field::user_agent, "meshwork-streamer");
    c->request.set(bhttp::field::accept, "*/*");
    c->stream.expires_after(kReadTimeout);
    bhttp::async_write(c->stream, c->request, [this, c](beast::error_code ec, size_t) {
      if (ec) return Retry(c, absl::StrCat("write request: ", ec.message()));
      c->parser.body_limit(boost::none);  // the body never ends
      c->stream.expires_after(kReadTimeout);
      bhttp::async_read_header(
          c->stream, c->buffer, c->parser, [this, c](beast::error_code ec, size_t) {
            if (ec) return Retry(c, absl::StrCat("read header: ", ec.message()));
            const unsigned status = c->parser.get().result_int();
            if (status != 200) {
              return Retry(c, absl::StrCat("status ", status));
            }
            log::Info("ingest_connected",
                      {{"url", log_url()}, {"kind", "http"}, {"peer", c->peer}});
            ReadBody(c);
          });
    });
  }

  void ReadBody(const ConnectionPtr& c) {
    if (c->parser.is_done()) return Retry(c, "end of body");
    auto& body = c->parser.get().body();
    body.data = c->body.data();
    body.size = c->body.size();
    c->stream.expires_after(kReadTimeout);
    bhttp::async_read_some(c->stream, c->buffer, c->parser,
                           [this, c](beast::error_code ec, size_t) {
                             if (ec == bhttp::error::need_buffer) ec = {};
                             const size_t got = c->body.size() - c->parser.get().body().size;
                             if (got > 0) {
                               if (c->received == 0) backoff_.Reset();
                               c->received += got;
                               Deliver(std::span<const uint8_t>(c->body.data(), got));
                             }
                             if (ec == beast::error::timeout) return Retry(c, "no data for 5s");
                             if (ec == bhttp::error::end_of_stream || ec == asio::error::eof) {
                               return Retry(c, "connection closed");
                             }
                             if (ec) return Retry(c, absl::StrCat("read: ", ec.message()));
                             ReadBody(c);
                           });
  }

  // Ends attempt `c` and schedules the next one.
  void Retry(const ConnectionPtr& c, std::string reason) {
    if (stopping() || c != connection_) return;
    beast::error_code ignored;
    c->stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    c->stream.close();
    if (c->parser.is_header_done() && c->parser.get().result_int() == 200) {
      log::Warn("ingest_lost", {{"url", log_url()},
                                {"kind", "http"},
                                {"peer", c->peer},
                                {"reason", reason},
                                {"bytes", c->received}});
    }
    const auto delay = backoff_.Next();
    log::Info(
        "ingest_reconnect",
        {{"url", log_url()}, {"kind", "http"}, {"reason", reason}, {"delay_ms", delay.count()}});
    retry_timer_.expires_after(delay);
    retry_timer_.async_wait([this](beast::error_code ec) {
      if (!ec && !stopping()) Connect();
    });
  }

  const std::string host_;
  const uint16_t port_;
  const std::string target_;
  std::string host_header_;
  // Declared before everything that uses it.
  asio::io_context io_{1};
  asio::steady_timer retry_timer_{io_};
  // Worker thread only (and Start() before it runs).
  ConnectionPtr connection_;
  Backoff backoff_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Source>> StartHttpSource(std::string url, const SourceUrl& parsed,
                                                        BytesCallback on_bytes) {
  auto source = std::make_unique<HttpSource>(std::move(url), parsed, std::move(on_bytes));
  source->Start();
  return source;
}

}  // namespace meshwork::ingest
