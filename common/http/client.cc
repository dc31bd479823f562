#include "common/http/client.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "boost/asio.hpp"
#include "boost/beast/core.hpp"

namespace meshwork::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;

namespace {

class Exchange : public std::enable_shared_from_this<Exchange> {
 public:
  Exchange(asio::any_io_executor executor, ClientRequest request, FetchCallback done)
      : resolver_(executor),
        stream_(executor),
        request_(std::move(request)),
        done_(std::move(done)) {}

  void Start() {
    std::string host = request_.host;
    if (host.size() >= 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
    out_.method(request_.method);
    out_.target(request_.target);
    out_.version(11);
    out_.set(beast_http::field::host, absl::StrCat(request_.host, ":", request_.port));
    out_.set(beast_http::field::user_agent, "meshwork");
    for (auto& [k, v] : request_.headers) out_.set(k, v);
    out_.body() = request_.body;
    if (!request_.body.empty() || request_.method == Verb::put || request_.method == Verb::post ||
        request_.method == Verb::patch) {
      out_.prepare_payload();
    }
    stream_.expires_after(request_.timeout);
    resolver_.async_resolve(
        host, std::to_string(request_.port),
        [self = shared_from_this()](beast::error_code ec, tcp::resolver::results_type results) {
          if (ec)
            return self->Fail(absl::UnavailableError(
                absl::StrCat("resolve ", self->request_.host, ": ", ec.message())));
          self->stream_.async_connect(results, [self](beast::error_code ec, const tcp::endpoint&) {
            if (ec) return self->Fail(self->Transport("connect", ec));
            beast_http::async_write(
                self->stream_, self->out_, [self](beast::error_code ec, size_t) {
                  if (ec) return self->Fail(self->Transport("write", ec));
                  self->parser_.body_limit(self->request_.body_limit_bytes);
                  beast_http::async_read(self->stream_, self->buffer_, self->parser_,
                                         [self](beast::error_code ec, size_t) {
                                           if (ec) return self->Fail(self->Transport("read", ec));
                                           beast::error_code ignored;
                                           self->stream_.socket().shutdown(
                                               tcp::socket::shutdown_both, ignored);
                                           self->done_(self->parser_.release());
                                         });
                });
          });
        });
  }

 private:
  absl::Status Transport(const char* step, beast::error_code ec) {
    std::string what =
        absl::StrCat(step, " ", request_.host, ":", request_.port, ": ", ec.message());
    if (ec == beast::error::timeout) return absl::DeadlineExceededError(what);
    return absl::UnavailableError(what);
  }
  void Fail(absl::Status status) { done_(std::move(status)); }

  tcp::resolver resolver_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  ClientRequest request_;
  FetchCallback done_;
  Request out_;
  beast_http::response_parser<beast_http::string_body> parser_;
};

}  // namespace

void AsyncFetch(asio::any_io_executor executor, ClientRequest request, FetchCallback done) {
  std::make_shared<Exchange>(std::move(executor), std::move(request), std::move(done))->Start();
}

absl::StatusOr<Response> Fetch(ClientRequest request) {
  asio::io_context io;
  absl::StatusOr<Response> result = absl::UnknownError("no answer");
  AsyncFetch(io.get_executor(), std::move(request),
             [&result](absl::StatusOr<Response> r) { result = std::move(r); });
  io.run();
  return result;
}

}  // namespace meshwork::http
