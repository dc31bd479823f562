#include "common/http/client.h"

#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "boost/asio.hpp"
#include "boost/asio/ssl.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/ssl.hpp"
#include "common/net/ip_address.h"

namespace meshwork::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;

namespace {

// The request line and headers every exchange sends.
Request BuildRequest(const ClientRequest& in) {
  Request out;
  out.method(in.method);
  out.target(in.target);
  out.version(11);
  out.set(beast_http::field::host, absl::StrCat(in.host, ":", in.port));
  out.set(beast_http::field::user_agent, "meshwork");
  for (auto& [k, v] : in.headers) out.set(k, v);
  out.body() = in.body;
  if (!in.body.empty() || in.method == Verb::put || in.method == Verb::post ||
      in.method == Verb::patch) {
    out.prepare_payload();
  }
  return out;
}

// "[::1]" → "::1" for the resolver.
std::string ResolverHost(const std::string& host) {
  if (host.size() >= 2 && host.front() == '[') return host.substr(1, host.size() - 2);
  return host;
}

absl::Status TransportError(const ClientRequest& request, const char* step, beast::error_code ec) {
  std::string what = absl::StrCat(step, " ", request.host, ":", request.port, ": ", ec.message());
  if (ec == beast::error::timeout) return absl::DeadlineExceededError(what);
  return absl::UnavailableError(what);
}

// One request on a fresh connection. `Stream` is beast::tcp_stream (plain) or an
// ssl_stream over one (HTTPS: a handshake after the connect, a TLS shutdown not awaited).
template <typename Stream>
class Exchange : public std::enable_shared_from_this<Exchange<Stream>> {
 public:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  // Every step runs on a strand of `executor` (a pool's executor may run handlers on several
  // threads): the deadline and the steps it cuts never race.
  Exchange(asio::any_io_executor executor, ClientRequest request, FetchCallback done)
      : strand_(asio::make_strand(executor)),
        resolver_(strand_),
        stream_(MakeStream(strand_, request)),
        deadline_(strand_),
        request_(std::move(request)),
        done_(std::move(done)) {}

  void Start() {
    // On the strand, as every later step: the deadline's handler never runs beside it.
    asio::dispatch(strand_, [self = this->shared_from_this()] { self->Begin(); });
  }

 private:
  void Begin() {
    out_ = BuildRequest(request_);
    if constexpr (kTls) {
      // SNI for names (not for addresses, RFC 6066 §3), and the certificate checked for it.
      const std::string host = ResolverHost(request_.host);
      if (!net::IpAddress::Parse(host).ok() &&
          !SSL_set_tlsext_host_name(stream_.native_handle(), host.c_str())) {
        return Fail(absl::UnavailableError(absl::StrCat("TLS name ", request_.host)));
      }
      stream_.set_verify_mode(asio::ssl::verify_peer);
      stream_.set_verify_callback(asio::ssl::host_name_verification(host));
    }
    Lowest().expires_after(request_.timeout);
    // The whole exchange's deadline, name resolution included (getaddrinfo runs on asio's
    // resolver thread, which the stream's own timer does not reach): a slow DNS server costs
    // a caller `timeout`, not the resolver's retries.
    deadline_.expires_after(request_.timeout);
    deadline_.async_wait([self = this->shared_from_this()](beast::error_code ec) {
      if (ec) return;  // cancelled: the exchange ended first
      self->Fail(absl::DeadlineExceededError(
          absl::StrCat(self->request_.host, ":", self->request_.port, " did not answer within ",
                       self->request_.timeout.count(), " ms")));
      self->resolver_.cancel();
      beast::error_code ignored;
      self->Lowest().socket().close(ignored);
    });
    resolver_.async_resolve(
        ResolverHost(request_.host), std::to_string(request_.port),
        [self = this->shared_from_this()](beast::error_code ec,
                                          tcp::resolver::results_type results) {
          if (ec)
            return self->Fail(absl::UnavailableError(
                absl::StrCat("resolve ", self->request_.host, ": ", ec.message())));
          self->Lowest().async_connect(results, [self](beast::error_code ec, const tcp::endpoint&) {
            if (ec) return self->Fail(self->Transport("connect", ec));
            if constexpr (kTls) {
              self->stream_.async_handshake(asio::ssl::stream_base::client,
                                            [self](beast::error_code ec) {
                                              if (ec) return self->Fail(self->Transport("TLS", ec));
                                              self->Send();
                                            });
            } else {
              self->Send();
            }
          });
        });
  }

  static Stream MakeStream(const asio::strand<asio::any_io_executor>& executor,
                           const ClientRequest& request) {
    if constexpr (kTls) {
      return Stream(executor, *request.tls);
    } else {
      return Stream(executor);
    }
  }
  beast::tcp_stream& Lowest() { return beast::get_lowest_layer(stream_); }
  void Send() {
    beast_http::async_write(
        stream_, out_, [self = this->shared_from_this()](beast::error_code ec, size_t) {
          if (ec) return self->Fail(self->Transport("write", ec));
          self->parser_.body_limit(self->request_.body_limit_bytes);
          if (self->request_.method == Verb::head) self->parser_.skip(true);
          beast_http::async_read(
              self->stream_, self->buffer_, self->parser_, [self](beast::error_code ec, size_t) {
                if (ec) return self->Fail(self->Transport("read", ec));
                beast::error_code ignored;
                self->Lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
                if (self->finished_) return;
                self->finished_ = true;
                self->deadline_.cancel();
                self->done_(self->parser_.release());
              });
        });
  }
  absl::Status Transport(const char* step, beast::error_code ec) {
    return TransportError(request_, step, ec);
  }
  // The first ending wins: the deadline, or a step's failure; `done_` is called once.
  void Fail(absl::Status status) {
    if (finished_) return;
    finished_ = true;
    deadline_.cancel();
    done_(std::move(status));
  }

  asio::strand<asio::any_io_executor> strand_;
  tcp::resolver resolver_;
  Stream stream_;
  asio::steady_timer deadline_;
  bool finished_ = false;
  beast::flat_buffer buffer_;
  ClientRequest request_;
  FetchCallback done_;
  Request out_;
  beast_http::response_parser<beast_http::string_body> parser_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<asio::ssl::context>> ClientTlsContext(const std::string& ca_file) {
  auto context = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_client);
  context->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                       asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                       asio::ssl::context::no_tlsv1_1);
  beast::error_code ec;
  context->set_default_verify_paths(ec);  // no system store: only ca_file is trusted
  if (!ca_file.empty()) {
    context->load_verify_file(ca_file, ec);
    if (ec) {
      return absl::InvalidArgumentError(absl::StrCat("CA file ", ca_file, ": ", ec.message()));
    }
  }
  return context;
}

void AsyncFetch(asio::any_io_executor executor, ClientRequest request, FetchCallback done) {
  if (request.tls) {
    using TlsStream = beast::ssl_stream<beast::tcp_stream>;
    std::make_shared<Exchange<TlsStream>>(std::move(executor), std::move(request), std::move(done))
        ->Start();
    return;
  }
  std::make_shared<Exchange<beast::tcp_stream>>(std::move(executor), std::move(request),
                                                std::move(done))
      ->Start();
}

absl::StatusOr<Response> Fetch(ClientRequest request) {
  asio::io_context io;
  absl::StatusOr<Response> result = absl::UnknownError("no answer");
  AsyncFetch(io.get_executor(), std::move(request),
             [&result](absl::StatusOr<Response> r) { result = std::move(r); });
  io.run();
  return result;
}

class KeepAliveClient::Impl {
 public:
  // One exchange on the open connection (opening it first when there is none). `reused`
  // tells whether the connection served an earlier request; `got_some` whether any byte of
  // the answer arrived before a failure.
  absl::StatusOr<Response> Exchange(const ClientRequest& request, bool& reused, bool& got_some,
                                    uint64_t& opened) {
    reused = false;
    got_some = false;
    if (stream_ && (request.host != host_ || request.port != port_)) Close();
    Request out = BuildRequest(request);
    absl::Status failed;
    beast_http::response_parser<beast_http::string_body> parser;
    parser.body_limit(request.body_limit_bytes);
    if (request.method == Verb::head) parser.skip(true);  // the answer's length, no body
    tcp::resolver resolver(io_);                          // lives until io_.run() returns
    // With on_body: the answer read piece by piece, each new stretch of a 200's body handed
    // on as soon as it is in.
    size_t delivered = 0;
    bool header_told = false;
    std::function<void()> read_pieces = [&] {
      beast_http::async_read_some(*stream_, buffer_, parser, [&](beast::error_code ec, size_t) {
        if (ec) {
          failed = TransportError(request, "read", ec);
          return;
        }
        if (parser.is_header_done() && parser.get().result() == Status::ok) {
          if (!header_told && request.on_header) request.on_header(parser.get());
          header_told = true;
          const std::string& body = parser.get().body();
          if (body.size() > delivered) {
            request.on_body(std::string_view(body).substr(delivered));
            delivered = body.size();
          }
        }
        if (!parser.is_done()) read_pieces();
      });
    };
    auto read_answer = [&] {
      beast_http::async_write(*stream_, out, [&](beast::error_code ec, size_t) {
        if (ec) {
          failed = TransportError(request, "write", ec);
          return;
        }
        if (!request.on_body) {
          beast_http::async_read(*stream_, buffer_, parser, [&](beast::error_code ec, size_t) {
            if (ec) failed = TransportError(request, "read", ec);
          });
          return;
        }
        read_pieces();
      });
    };
    if (stream_) {
      reused = true;
      stream_->expires_after(request.timeout);
      read_answer();
    } else {
      stream_.emplace(io_);
      buffer_.clear();
      host_ = request.host;
      port_ = request.port;
      ++opened;
      stream_->expires_after(request.timeout);
      resolver.async_resolve(ResolverHost(request.host), std::to_string(request.port),
                             [&](beast::error_code ec, tcp::resolver::results_type results) {
                               if (ec) {
                                 failed = absl::UnavailableError(
                                     absl::StrCat("resolve ", request.host, ": ", ec.message()));
                                 return;
                               }
                               stream_->async_connect(
                                   results, [&](beast::error_code ec, const tcp::endpoint&) {
                                     if (ec) {
                                       failed = TransportError(request, "connect", ec);
                                       return;
                                     }
                                     read_answer();
                                   });
                             });
    }
    io_.restart();
    io_.run();
    got_some = parser.got_some();
    if (!failed.ok()) {
      Close();
      return failed;
    }
    stream_->expires_never();
    Response res = parser.release();
    if (!res.keep_alive()) Close();
    return res;
  }

  void Close() {
    if (!stream_) return;
    beast::error_code ignored;
    stream_->socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_->close();
    stream_.reset();
    io_.restart();
    io_.poll();  // completes the cancelled operations of the closed socket
  }

 private:
  asio::io_context io_;
  std::optional<beast::tcp_stream> stream_;
  beast::flat_buffer buffer_;
  std::string host_;
  uint16_t port_ = 0;
};

KeepAliveClient::KeepAliveClient() : impl_(std::make_unique<Impl>()) {}
KeepAliveClient::~KeepAliveClient() { impl_->Close(); }

absl::StatusOr<Response> KeepAliveClient::Fetch(const ClientRequest& request) {
  bool reused = false, got_some = false;
  auto res = impl_->Exchange(request, reused, got_some, opened_);
  // A deadline is not retried: the caller's timeout is what it measures progress by.
  if (res.ok() || !reused || got_some || absl::IsDeadlineExceeded(res.status())) return res;
  return impl_->Exchange(request, reused, got_some, opened_);
}

}  // namespace meshwork::http
