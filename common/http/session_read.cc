// The reading half of a connection: handshake, request header, body, routing, handler call.
// Every function runs on the session's worker (session.h).
#include <openssl/ssl.h>

#include <algorithm>
#include <exception>

#include "absl/strings/str_cat.h"
#include "common/http/h2_session.h"
#include "common/http/request_head.h"
#include "common/http/response.h"
#include "common/http/session.h"
#include "common/http/session_bridge.h"
#include "common/log/log.h"
#include "common/net/client_address.h"

namespace meshwork::http::server_internal {

namespace {

// How long a closing TLS connection may take to send its close_notify.
constexpr std::chrono::milliseconds kTlsShutdownTimeout{1000};
// Lingering close (Session::Linger): how long and how much of a refused body is drained.
constexpr std::chrono::milliseconds kLingerTime{2000};
constexpr uint64_t kLingerBytes = 16u << 20;

constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

bool ExpectsContinue(const Request& req) {
  auto expect = req.find(beast_http::field::expect);
  return expect != req.end() && beast::iequals(expect->value(), "100-continue");
}

// Why a streamed body could not be read: the client's bytes broke the framing
// (InvalidArgument: the handler answers 400), or the connection failed (Unavailable).
absl::Status BodyReadError(const beast::error_code& ec) {
  bool transport = ec == beast_http::error::end_of_stream ||
                   ec == beast_http::error::partial_message || ec == beast::error::timeout ||
                   ec == asio::error::eof || ec == asio::error::connection_reset ||
                   ec == asio::error::operation_aborted ||
                   ec.category() == asio::error::get_ssl_category() ||
                   ec.category() == asio::error::get_system_category();
  if (transport) return absl::UnavailableError("request body: " + ec.message());
  return absl::InvalidArgumentError("malformed request body: " + ec.message());
}

// 503 for a request whose body does not fit under the listener's cap on buffered bodies.
Response BudgetExceeded(uint64_t cap) {
  Response res = ErrorResponse(Status::service_unavailable, "unavailable",
                               absl::StrCat("this listener already holds ", cap,
                                            " bytes of unfinished request bodies; retry later"));
  res.set(beast_http::field::retry_after, "1");
  return res;
}

Response BodyTooLarge(uint64_t limit) {
  return ErrorResponse(Status::payload_too_large, "invalid_argument",
                       absl::StrCat("request body exceeds ", limit, " bytes"));
}

}  // namespace

// The answer to a request that no route takes: 404, or 405 with the methods the path takes.
Response NoRouteAnswer(const Router::Match& match, std::string_view method, std::string_view path) {
  if (match.result == Router::MatchResult::kNoMethod) {
    Response res =
        ErrorResponse(Status::method_not_allowed, "method_not_allowed",
                      std::string(method) + " is not allowed here; allowed: " + match.allow);
    res.set(beast_http::field::allow, match.allow);
    return res;
  }
  return ErrorResponse(Status::not_found, "not_found", "no such resource: " + std::string(path));
}

net::IpAddress ToIpAddress(const asio::ip::address& a) {
  if (a.is_v4()) return net::IpAddress::V4(a.to_v4().to_uint());
  return net::IpAddress::V6(a.to_v6().to_bytes());
}

template <typename Stream>
void Session<Stream>::Handshake() {
  if constexpr (kTls) {
    if (server_->stopping.load()) return CloseSocket();
    handshaking_ = true;
    SetDeadline(server_->options.read_timeout);
    stream_.async_handshake(asio::ssl::stream_base::server, [self = Self()](beast::error_code ec) {
      self->handshaking_ = false;
      if (ec) {
        // Not TLS, a failed negotiation, or too slow: just drop it.
        log::Debug("http_tls_handshake_failed", {{"listener", self->server_->options.name},
                                                 {"peer", self->peer_.ToString()},
                                                 {"error", ec.message()}});
        return self->CloseSocket();
      }
      self->handshake_done_ = true;
      const unsigned char* protocol = nullptr;
      unsigned int length = 0;
      SSL_get0_alpn_selected(self->stream_.native_handle(), &protocol, &length);
      if (length == 2 && protocol[0] == 'h' && protocol[1] == '2') return self->HandOverToH2();
      self->ReadHeader();
    });
  }
}

template <typename Stream>
void Session<Stream>::HandOverToH2() {
  idle_ = false;
  auto data = buffer_.cdata();
  std::string read(static_cast<const char*>(data.data()), data.size());
  buffer_.consume(buffer_.size());
  ClearDeadline();
  // The HTTP/2 session takes a slot of its own; this one's goes back when it is destroyed,
  // after the new one has counted itself, so `active` never dips to zero in between.
  server_->active.fetch_add(1);
  server_->SessionOpened();
  auto h2 = std::make_shared<H2Session<Stream>>(server_, worker_, tls_, std::move(stream_),
                                                std::move(read), peer_, local_port_);
  h2->client_place = std::move(client_place);  // the same connection: the same place
  worker_->sessions.Add(*h2);
  h2->Start();
  close_after_response_ = true;  // nothing more happens on this (moved-from) session
}

template <typename Stream>
void Session<Stream>::Close() {
  if constexpr (kTls) {
    if (handshake_done_ && Lowest().is_open()) {
      handshake_done_ = false;  // closes once
      // Send our close_notify but do not wait for the peer's (RFC 8446 §6.1 allows it), so
      // an idle peer cannot hold a stopping server; the deadline bounds the send.
      SSL* ssl = stream_.native_handle();
      SSL_set_shutdown(ssl, SSL_get_shutdown(ssl) | SSL_RECEIVED_SHUTDOWN);
      SetDeadline(
          std::min<std::chrono::milliseconds>(kTlsShutdownTimeout, server_->options.read_timeout));
      stream_.async_shutdown([self = Self()](beast::error_code) { self->CloseSocket(); });
      return;
    }
  }
  CloseSocket();
}

template <typename Stream>
void Session<Stream>::Linger(uint64_t drained) {
  // What is read is dropped: every lingering session of a worker thread reads into the same
  // bytes (a worker's reads run on its own thread, and the buffer lives as long as it).
  thread_local std::array<char, 16384> scratch;
  if (drained == 0) SetDeadline(std::min(kLingerTime, server_->options.read_timeout));
  Lowest().async_read_some(asio::buffer(scratch),
                           [self = Self(), drained](beast::error_code ec, size_t n) {
                             // The client closed, the deadline (or a stopping server) cancelled the
                             // read, or enough was dropped.
                             if (ec || drained + n >= kLingerBytes) {
                               self->ClearDeadline();
                               self->Lowest().close(ec);
                               return;
                             }
                             self->Linger(drained + n);
                           });
}

template <typename Stream>
void Session<Stream>::ReadHeader() {
  if (close_after_response_ || server_->stopping.load()) {
    Close();
    return;
  }
  // The last request's context: its request's memory goes now (fields, target, a buffered
  // body: an idle connection holds none), the object itself (and its params' capacity) stays
  // for the next request, every field that FillRequestContext does not set again back to its
  // default (member by member: a whole default RequestContext move-assigned cost ~500
  // instructions a request).
  ctx_filled_ = false;
  if (ctx_ && ctx_.use_count() == 1) {
    // Most fields added to RequestContext change its size (not one that fits in padding):
    // then reset it here too.
    static_assert(sizeof(RequestContext) == 352, "reset every RequestContext field below");
    RequestContext& c = *ctx_;
    c.request.base().clear();
    c.request.target({});
    std::string().swap(c.request.body());
    c.path = {};
    c.query = {};
    // The last request's captures go back to the Match, whose next Find assigns over them
    // (Dispatch swapped the two); the context gets the Match's emptied vector.
    match_.params.swap(c.params);
    c.params.clear();
    c.peer = {};
    c.client = {};
    c.peer_trusted = false;
    c.local_port = 0;
    c.upload_budget = nullptr;
    // listener, scheme and executor: the same for every request of this connection, and set
    // again by FillRequestContext.
  } else {
    ctx_.reset();
  }
  stream_parser_.reset();
  body_done_ = true;
  body_hold_.Release();
  parser_.reset();  // made by ParseHeader when the header is not of the common form
  simple_ = false;
  header_timed_ = false;
  if (buffer_.size() > 0) return ParseHeader();  // a pipelined request is under way
  // Idle until the first byte: the idle timeout; from there the whole header is due within
  // the read timeout.
  idle_ = true;
  SetDeadline(server_->options.idle_timeout);
  ReadMoreHeader();
}

template <typename Stream>
void Session<Stream>::ReadMoreHeader() {
  size_t room = buffer_.max_size() - buffer_.size();
  auto on_read = [self = Self()](beast::error_code ec, size_t n) {
    self->buffer_.commit(n);  // counted when the parser takes it
    if (ec) {
      self->idle_ = false;
      // Beast's names for the end of the stream before or inside a request header.
      if (ec == asio::error::eof) {
        ec = self->buffer_.size() == 0 ? beast::error_code(beast_http::error::end_of_stream)
                                       : beast::error_code(beast_http::error::partial_message);
      }
      return self->OnHeader(ec, 0);
    }
    if (self->first_read_) {
      self->first_read_ = false;
      auto data = self->buffer_.cdata();
      std::string_view first(static_cast<const char*>(data.data()), data.size());
      if (!kTls && StartsWithH2Preface(first)) return self->HandOverToH2();
    }
    self->ParseHeader();
  };
  auto space = buffer_.prepare(std::min<size_t>(4096, room));
  if constexpr (kTls) {
    stream_.async_read_some(space, std::move(on_read));
  } else {
    // A plain socket: after a short read the next header read waits for readiness instead
    // of trying recv first (short_read.h) — the read after each answer usually finds nothing.
    AsyncReadShort(Lowest(), *reactor_, space, std::move(on_read));
  }
}

template <typename Stream>
void Session<Stream>::StartParser() {
  parser_.emplace();
  ApplyDecoderLimits(*parser_, server_->limits, chunk_limit_);
  // No body limit while the header is read: a streaming route takes any length. Others get
  // theirs once the route is known (OnHeader).
  parser_->body_limit(boost::none);
}

template <typename Stream>
void Session<Stream>::ParseHeader() {
  idle_ = false;
  if (!parser_) {
    // P-5: a whole header of the common form (a GET of a playlist or an object) is read
    // without Beast's parser; any other (or one not whole in the first read) goes to Beast,
    // from the same bytes.
    auto data = buffer_.cdata();
    std::string_view bytes(static_cast<const char*>(data.data()), data.size());
    if (size_t used = ReadSimpleRequestHead(bytes, server_->limits.header_bytes, simple_request_)) {
      buffer_.consume(used);
      simple_ = true;
      return OnHeader({}, used);
    }
    simple_request_.base().clear();  // what the reader filled before it declined
    simple_request_.target({});
    StartParser();
  }
  // Beast's parser works on the connection's buffer directly: no composed read operation
  // and no posted completion per request. It takes nothing until the header is whole (and
  // fails with header_limit past the limit).
  beast::error_code ec;
  size_t used = parser_->put(buffer_.data(), ec);
  buffer_.consume(used);
  if (ec == beast_http::error::need_more) {
    // A header that fills the buffer without ending is over the limit (the buffer is
    // sized for one header, see DecoderBufferBytes).
    if (buffer_.size() >= buffer_.max_size()) {
      return OnHeader(beast_http::error::header_limit, used);
    }
    server_->AddBytesIn(*worker_, used);
    if (!header_timed_) {
      header_timed_ = true;
      SetDeadline(server_->options.read_timeout);
    }
    return ReadMoreHeader();
  }
  OnHeader(ec, used);
}

template <typename Stream>
void Session<Stream>::OnHeaderError(beast::error_code ec) {
  if (ec == beast_http::error::header_limit) {
    WriteFinal(ErrorResponse(Status::request_header_fields_too_large, "invalid_argument",
                             "request header exceeds " +
                                 std::to_string(server_->options.header_limit_bytes) + " bytes"));
    return;
  }
  if (ec == beast_http::error::body_limit) {  // Beast checks Content-Length with the header
    WriteFinal(BodyTooLarge(server_->options.body_limit_bytes));
    return;
  }
  if (ec == beast_http::error::end_of_stream || ec == beast::error::timeout ||
      ec == asio::error::operation_aborted || ec == asio::error::connection_reset ||
      ec == asio::error::eof || ec == asio::error::bad_descriptor ||
      ec == asio::ssl::error::stream_truncated) {
    Close();
    return;
  }
  if (ec.category() == asio::error::get_ssl_category()) {
    CloseSocket();  // a broken TLS record: nothing sensible can be sent back
    return;
  }
  WriteFinal(
      ErrorResponse(Status::bad_request, "invalid_argument", "malformed request: " + ec.message()));
}

template <typename Stream>
void Session<Stream>::OnHeader(beast::error_code ec, size_t n) {
  idle_ = false;
  server_->AddBytesIn(*worker_, n);
  // P-5: a good header compares no error codes (nine comparisons cost ~100 instructions).
  if (ec) return OnHeaderError(ec);
  const Request& req = simple_ ? simple_request_ : parser_->get();
  // RFC 9112 §6: a body whose length is ambiguous is never read (no request smuggling).
  if (auto framing = CheckRequestFraming(req); !framing.ok()) {
    WriteFinal(ErrorResponse(framing));
    return;
  }
  {
    // Routed once: Dispatch uses this match when the body is in.
    std::string_view target = req.target();
    server_->router.Find(req.method(), target.substr(0, target.find('?')), match_);
    // Streaming routes take PUT and POST only (Router::AddStreaming), never read simply.
    if (match_.streaming) return StartStreaming(match_.streaming, std::move(match_.params));
  }
  // The common form has no body (no Content-Length, no Transfer-Encoding): to the handler.
  if (simple_) return Dispatch();
  // a body that no route takes, or that the route's gate refuses (an admin call without
  // a valid token), is refused before it holds any of the listener's body budget; the
  // connection closes with its body unread.
  if (parser_->chunked() || parser_->content_length().value_or(0) > 0) {
    // Until the body is taken: a refusal below leaves it unread, and lingers (a client that
    // waits for 100 Continue may send its body anyway after a while, RFC 9110 §10.1.1).
    unread_body_ = true;
    if (match_.result != Router::MatchResult::kFound) {
      std::string_view target = req.target();
      WriteFinal(NoRouteAnswer(match_, req.method_string(), target.substr(0, target.find('?'))));
      return;
    }
    if (match_.gate) {
      if (std::optional<Response> refusal = (*match_.gate)(req)) {
        WriteFinal(std::move(*refusal));
        return;
      }
    }
  }
  parser_->body_limit(server_->options.body_limit_bytes);
  auto length = parser_->content_length();
  if (length && *length > server_->options.body_limit_bytes) {
    WriteFinal(BodyTooLarge(server_->options.body_limit_bytes));
    return;
  }
  // The body will be held whole: its bytes (a chunked one: the limit) count against the
  // listener's cap until the handler has it.
  uint64_t hold = length ? *length : (parser_->chunked() ? server_->options.body_limit_bytes : 0);
  body_hold_ = BudgetHold(server_->body_budget.get());
  if (hold > 0 && !body_hold_.Grow(hold)) {
    WriteFinal(BudgetExceeded(server_->options.max_buffered_body_bytes));
    return;
  }
  unread_body_ = false;
  // No body (the common GET): straight to the handler, no body read to start and complete.
  if (parser_->is_done()) return Dispatch();
  if (ExpectsContinue(req)) {
    // Under the send deadline: a client that reads nothing (its window full of an earlier
    // answer) would otherwise hold the connection and its body's budget for good.
    SetDeadline(server_->options.send_timeout);
    asio::async_write(stream_, asio::buffer(kContinue.data(), kContinue.size()),
                      [self = Self()](beast::error_code ec, size_t n) {
                        self->ClearDeadline();
                        self->server_->AddBytesOut(*self->worker_, n);
                        if (ec) return self->Close();
                        self->ReadBody();
                      });
    return;
  }
  ReadBody();
}

template <typename Stream>
void Session<Stream>::StartStreaming(const StreamingHandler* handler,
                                     std::vector<std::string> params) {
  if (!ExpectsContinue(parser_->get())) return DispatchStreaming(handler, std::move(params));
  SetDeadline(server_->options.send_timeout);  // as above
  asio::async_write(
      stream_, asio::buffer(kContinue.data(), kContinue.size()),
      [self = Self(), handler, params = std::move(params)](beast::error_code ec, size_t n) mutable {
        self->ClearDeadline();
        self->server_->AddBytesOut(*self->worker_, n);
        if (ec) return self->Close();
        self->DispatchStreaming(handler, std::move(params));
      });
}

template <typename Stream>
void Session<Stream>::ReadBody() {
  SetDeadline(server_->options.read_timeout);
  beast_http::async_read(stream_, buffer_, *parser_,
                         [self = Self()](beast::error_code ec, size_t n) { self->OnBody(ec, n); });
}

template <typename Stream>
void Session<Stream>::OnBody(beast::error_code ec, size_t n) {
  server_->AddBytesIn(*worker_, n);
  if (ec == beast_http::error::body_limit) {
    unread_body_ = true;  // the rest of a chunked body is still coming
    WriteFinal(BodyTooLarge(server_->options.body_limit_bytes));
    return;
  }
  if (ec == beast::error::timeout || ec == beast_http::error::end_of_stream ||
      ec == asio::error::eof || ec == asio::error::connection_reset ||
      ec == asio::error::operation_aborted || ec == asio::ssl::error::stream_truncated) {
    Close();
    return;
  }
  if (ec && ec.category() == asio::error::get_ssl_category()) {
    CloseSocket();
    return;
  }
  if (ec) {
    unread_body_ = true;
    WriteFinal(ErrorResponse(Status::bad_request, "invalid_argument",
                             "malformed request body: " + ec.message()));
    return;
  }
  Dispatch();
}

bool FillRequestContext(RequestContext& ctx, Request&& request, Server::Impl& server,
                        const net::IpAddress& peer, uint16_t local_port,
                        asio::any_io_executor executor) {
  ctx.request = std::move(request);
  std::string_view target = ctx.request.target();
  size_t q = target.find('?');
  ctx.path = target.substr(0, q);
  ctx.query = q == std::string_view::npos ? std::string_view() : target.substr(q + 1);
  ctx.peer = peer;
  ctx.listener = server.options.name;
  ctx.scheme = server.options.scheme;
  ctx.local_port = local_port;
  ctx.executor = std::move(executor);
  const net::CidrSet* trusted = nullptr;
  if (server.options.trusted_proxies) trusted = server.options.trusted_proxies();
  ctx.peer_trusted = trusted && trusted->Contains(peer.Unmapped());
  if (ctx.peer_trusted) {
    // Only a trusted peer's X-Forwarded-For is read (T-2); anyone else is its own client.
    std::vector<std::string_view> xff;
    auto [first, last] = ctx.request.equal_range("X-Forwarded-For");
    for (auto it = first; it != last; ++it) xff.push_back(it->value());
    ctx.client = net::ResolveClientAddress(peer, *trusted, xff);
  } else {
    ctx.client = peer.Unmapped();
  }
  return !ctx.path.empty() && ctx.path.front() == '/';
}

template <typename Stream>
bool Session<Stream>::PrepareContext(Request&& request) {
  started_ = std::chrono::steady_clock::now();
  ClearDeadline();
  if (!ctx_) ctx_ = std::make_shared<RequestContext>();  // else reset by ReadHeader
  ctx_filled_ = true;
  method_ = request.method();
  method_text_ = std::string(request.method_string());
  keep_alive_ = request.keep_alive();
  http10_ = request.version() < 11;
  if (!FillRequestContext(*ctx_, std::move(request), *server_, peer_, local_port_,
                          stream_.get_executor())) {
    Write(ErrorResponse(Status::bad_request, "invalid_argument", "request target must be a path"));
    return false;
  }
  return true;
}

template <typename Stream>
void Session<Stream>::DispatchStreaming(const StreamingHandler* handler,
                                        std::vector<std::string> params) {
  Request header;
  header.base() = parser_->get().base();
  stream_parser_.emplace(std::move(*parser_));
  parser_.reset();
  ApplyDecoderLimits(*stream_parser_, server_->limits, chunk_limit_);
  stream_parser_->body_limit(boost::none);  // continuous uploads: bounded per chunk instead
  body_done_ = stream_parser_->is_done();
  if (!PrepareContext(std::move(header))) return;
  ctx_->params = std::move(params);
  ctx_->upload_budget = server_->body_budget.get();
  Responder responder(SessionSink::Share(Self(), &sink_));
  auto body = std::make_shared<SessionBodyReader>(Self());
  try {
    (*handler)(*ctx_, std::move(body), std::move(responder));
  } catch (const std::exception& e) {
    log::Error("http_handler_exception",
               {{"listener", server_->options.name}, {"path", ctx_->path}, {"what", e.what()}});
  }
}

template <typename Stream>
void Session<Stream>::ReadChunk(BodyReader::ChunkFn on_chunk) {
  if (body_done_ || !stream_parser_) {
    on_chunk(absl::OkStatus(), {}, true);
    return;
  }
  if (lingering_) {  // answered and closing: the rest of the body is drained, not read
    on_chunk(absl::CancelledError("the connection is closing"), {}, false);
    return;
  }
  if (!chunk_) {
    chunk_ = std::make_unique<uint8_t[]>(kBodyChunkBytes);
    // Beast reads at most the buffer's free capacity per read: without room, a large body
    // would arrive a few hundred bytes per read.
    buffer_.reserve(kBodyChunkBytes);
  }
  auto& body = stream_parser_->get().body();
  body.data = chunk_.get();
  body.size = kBodyChunkBytes;
  body.more = true;
  SetDeadline(server_->options.read_timeout);
  reading_body_ = true;
  beast_http::async_read_some(
      stream_, buffer_, *stream_parser_,
      [self = Self(), cb = std::move(on_chunk)](beast::error_code ec, size_t n) {
        self->reading_body_ = false;
        self->server_->AddBytesIn(*self->worker_, n);
        if (self->lingering_) {  // cancelled by CloseSocket: the deadline is Linger's now
          cb(absl::CancelledError("the connection is closing"), {}, false);
          return;
        }
        self->ClearDeadline();
        if (ec == beast_http::error::need_buffer) ec = {};
        if (ec) {
          self->body_done_ = true;
          self->keep_alive_ = false;
          cb(BodyReadError(ec), {}, false);
          return;
        }
        size_t got = kBodyChunkBytes - self->stream_parser_->get().body().size;
        bool done = self->stream_parser_->is_done();
        if (done) self->body_done_ = true;
        cb(absl::OkStatus(), std::span<const uint8_t>(self->chunk_.get(), got), done);
      });
}

template <typename Stream>
void Session<Stream>::Dispatch() {
  body_hold_.Release();
  bool path;
  if (simple_) {
    path = PrepareContext(std::move(simple_request_));  // moved once, into the context
  } else {
    Request request = parser_->release();
    parser_.reset();
    path = PrepareContext(std::move(request));
  }
  if (!path) return;
  RequestContext& ctx = *ctx_;
  Router::Match& match = match_;  // read before the handler runs; the next request refills it
  if (match.result != Router::MatchResult::kFound) {
    Write(NoRouteAnswer(match, method_text_, ctx.path));
    return;
  }
  ctx.params.swap(match.params);  // the capacities go round between the two
  const Handler* handler = match.handler;
  auto self = Self();  // the session outlives the handler's call whatever it does
  in_handler_ = true;
  try {
    (*handler)(ctx, Responder(SessionSink::Share(self, &sink_)));
  } catch (const std::exception& e) {
    server_->LogHandlerException(ctx.path, e.what());
    // The responder (if still held) answers 500 when it is dropped.
  }
  in_handler_ = false;
  if (deferred_) {
    Deferred done = *deferred_;
    deferred_.reset();
    FinishInline(done);
  }
}

// The members defined in this file, for both transports (the rest: session_write.cc).
template class Session<PlainStream>;
template class Session<TlsStream>;

}  // namespace meshwork::http::server_internal
