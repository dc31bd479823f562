#include "common/http/h2_session.h"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <limits>

#include "boost/asio/dispatch.hpp"
#include "common/http/response.h"
#include "common/http/session.h"
#include "common/log/log.h"

namespace meshwork::http::server_internal {

namespace {

constexpr std::string_view kPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
constexpr size_t kReadBytes = 16 * 1024;

// One stream's answer path: whatever thread the handler answers on, the work hops onto the
// connection's worker.
template <typename Stream>
class StreamSink final : public Responder::Sink {
 public:
  StreamSink(std::shared_ptr<H2Session<Stream>> session, int32_t id)
      : session_(std::move(session)), id_(id) {}

  void Complete(Response response) override {
    asio::dispatch(session_->executor(),
                   [s = session_, id = id_, r = std::move(response)]() mutable {
                     s->Answer(id, std::move(r), {});
                   });
  }
  void CompleteBuffers(Response header, SharedBuffers body, uint64_t offset,
                       uint64_t length) override {
    // A Range slice shares the body's chunks (R-3: a copy per stream multiplied one object
    // by the streams a client opened).
    asio::dispatch(session_->executor(), [s = session_, id = id_, h = std::move(header),
                                          b = std::move(body), offset, length]() mutable {
      s->Answer(id, std::move(h), std::move(b), offset, length);
    });
  }
  // the file is read a frame at a time as the stream's flow control lets it go, never
  // whole per stream (a client opening 100 streams on one archived segment held 100 copies).
  void CompleteFile(Response header, std::shared_ptr<const OpenFile> file, uint64_t offset,
                    uint64_t length) override {
    asio::dispatch(session_->executor(), [s = session_, id = id_, h = std::move(header),
                                          f = std::move(file), offset, length]() mutable {
      s->AnswerFile(id, std::move(h), std::move(f), offset, length);
    });
  }
  std::shared_ptr<ChunkedWriter> StartChunked(Response header) override;

 private:
  std::shared_ptr<H2Session<Stream>> session_;
  int32_t id_;
};

template <typename Stream>
class StreamWriter final : public ChunkedWriter {
 public:
  StreamWriter(std::shared_ptr<H2Session<Stream>> session, int32_t id,
               std::shared_ptr<const std::atomic<bool>> gone)
      : session_(std::move(session)), id_(id), gone_(std::move(gone)) {}
  ~StreamWriter() override { Finish(); }
  void Write(std::shared_ptr<const std::string> data) override {
    if (!data || finished_.load()) return;
    asio::dispatch(session_->executor(), [s = session_, id = id_, d = std::move(data)]() mutable {
      s->StreamData(id, std::move(d));
    });
  }
  void Finish() override {
    if (finished_.exchange(true)) return;
    asio::dispatch(session_->executor(), [s = session_, id = id_] { s->StreamData(id, nullptr); });
  }
  void Abort() override {
    if (finished_.exchange(true)) return;
    asio::dispatch(session_->executor(),
                   [s = session_, id = id_] { s->StreamData(id, AbortChunk()); });
  }
  // Approximate (read from the handler's thread): true once the connection is closed or the
  // stream is gone — the client reset it (RST_STREAM), seen when the session next reads.
  bool closed() const override { return session_->broken.load() || gone_->load(); }

 private:
  std::shared_ptr<H2Session<Stream>> session_;
  int32_t id_;
  std::shared_ptr<const std::atomic<bool>> gone_;  // set on the session's thread
  std::atomic<bool> finished_{false};
};

template <typename Stream>
std::shared_ptr<ChunkedWriter> StreamSink<Stream>::StartChunked(Response header) {
  auto gone = std::make_shared<std::atomic<bool>>(false);
  asio::dispatch(session_->executor(),
                 [s = session_, id = id_, h = std::move(header), gone]() mutable {
                   s->StartStream(id, std::move(h), std::move(gone));
                 });
  return std::make_shared<StreamWriter<Stream>>(session_, id_, std::move(gone));
}

}  // namespace

bool StartsWithH2Preface(std::string_view bytes) {
  return bytes.size() >= 14 &&
         kPreface.starts_with(bytes.substr(0, std::min(bytes.size(), kPreface.size())));
}

namespace {
// The listener's --http-* header and body limits, over HTTP/2 as over HTTP/1.1 (a
// connection's unfinished bodies together: twice one body's limit).
H2Limits LimitsOf(const ServerOptions& options) {
  H2Limits limits;
  constexpr uint64_t kMax = std::numeric_limits<uint32_t>::max() / 2;
  limits.max_header_list_bytes =
      static_cast<uint32_t>(std::min<uint64_t>(options.header_limit_bytes, kMax));
  limits.max_request_body_bytes =
      static_cast<uint32_t>(std::min<uint64_t>(options.body_limit_bytes, kMax));
  limits.max_connection_body_bytes = 2 * limits.max_request_body_bytes;
  return limits;
}
}  // namespace

template <typename Stream>
H2Session<Stream>::H2Session(Server::Impl* server, Worker* worker,
                             std::shared_ptr<asio::ssl::context> tls, Stream stream,
                             std::string already_read, net::IpAddress peer, uint16_t local_port)
    : server_(server),
      worker_(worker),
      tls_(std::move(tls)),
      stream_(std::move(stream)),
      pending_input_(std::move(already_read)),
      peer_(peer),
      local_port_(local_port),
      body_hold_(server->body_budget.get()),
      h2_(
          LimitsOf(server->options),
          [this](int32_t id, Request request) { OnRequest(id, std::move(request)); },
          [this](int32_t id, std::string_view method, Response refusal) {
            OnRefusal(id, method, std::move(refusal));
          }) {
  InitDeadlines(&worker->wheel, server->clock);
}

template <typename Stream>
H2Session<Stream>::~H2Session() {
  server_->SessionClosed();
}

template <typename Stream>
void H2Session<Stream>::Unreachable() {
  log::Error("http2_unreachable",
             {{"what", "an HTTP/1.1 entry point called on an HTTP/2 session"}});
  std::abort();
}

template <typename Stream>
void H2Session<Stream>::Start() {
  asio::dispatch(stream_.get_executor(), [self = Self()] {
    self->h2_.Start();
    std::string first = std::move(self->pending_input_);
    if (!first.empty()) {
      self->server_->AddBytesIn(*self->worker_, first.size());
      if (!self->Receive(first)) self->closing_ = true;
    }
    self->Flush();
    if (!self->closing_) self->Read();
  });
}

template <typename Stream>
void H2Session<Stream>::Shutdown() {
  closing_ = true;
  CancelIo();
}

template <typename Stream>
std::optional<std::chrono::steady_clock::time_point> H2Session<Stream>::WaitDeadline() {
  const auto arriving = h2_.oldest_incomplete_request();
  const Wait wait = h2_.open_streams() == 0 ? Wait::kIdle
                    : arriving              ? Wait::kRequest
                    : h2_.output_blocked()  ? Wait::kBlocked
                                            : Wait::kHandlers;
  // The same wait as before goes on from when it began (an answer's bytes going out, or a
  // request answered, start the next one: `wait_` is reset then).
  if (wait != wait_) {
    wait_ = wait;
    wait_began_ = DeadlineNow();
  }
  switch (wait) {
    case Wait::kIdle:
      return wait_began_ + server_->options.idle_timeout;
    case Wait::kRequest:  // each request has the read timeout from its own HEADERS on
      return *arriving + server_->options.read_timeout;
    case Wait::kBlocked:
      return wait_began_ + server_->options.send_timeout;
    default:
      return std::nullopt;  // handlers answer within their own deadlines
  }
}

template <typename Stream>
void H2Session<Stream>::ArmAt(std::optional<std::chrono::steady_clock::time_point> at) {
  if (at == armed_at_) return;  // a deadline is not pushed back by setting it again
  armed_at_ = at;
  if (!at) return ClearDeadline();
  SetDeadline(std::max(std::chrono::milliseconds(1),
                       std::chrono::duration_cast<std::chrono::milliseconds>(*at - DeadlineNow())));
}

template <typename Stream>
void H2Session<Stream>::ArmTimer() {
  if (write_in_flight_) return;  // the write's own deadline (ArmWriteDeadline)
  ArmAt(WaitDeadline());
}

template <typename Stream>
void H2Session<Stream>::ArmWriteDeadline() {
  // The write's progress deadline. A write of control frames only (a client flooding PINGs
  // keeps the server writing their ACKs, which answers no request) ends no later than the
  // wait it does not end; one that carries an answer's bytes is bounded by its progress alone
  // (its stream may already be closed for nghttp2, the bytes still on their way).
  auto at = DeadlineNow() + server_->options.send_timeout;
  if (auto wait = WaitDeadline(); !write_carries_data_ && wait) at = std::min(at, *wait);
  ArmAt(at);
}

template <typename Stream>
void H2Session<Stream>::Read() {
  if (closed_) return;
  read_buffer_.resize(kReadBytes);
  ArmTimer();
  stream_.async_read_some(asio::buffer(read_buffer_.data(), read_buffer_.size()),
                          [self = Self()](beast::error_code ec, size_t n) {
                            if (ec) return self->Close();
                            self->server_->AddBytesIn(*self->worker_, n);
                            if (!self->Receive(std::string_view(self->read_buffer_.data(), n))) {
                              // A protocol error (GOAWAY queued) or the listener's body cap:
                              // flush what is queued, then close.
                              self->closing_ = true;
                              return self->Flush();
                            }
                            self->Flush();
                            if (!self->closing_) self->Read();
                          });
}

template <typename Stream>
bool H2Session<Stream>::Receive(std::string_view bytes) {
  receiving_ = true;
  bool open = h2_.Receive(bytes);
  receiving_ = false;
  if (h2_.resets_received() != resets_seen_) {
    // A stream the client reset: its producer, if it streams, learns it (closed()).
    resets_seen_ = h2_.resets_received();
    for (auto& [id, pending] : pending_) {
      if (pending.gone && !h2_.StreamOpen(id)) pending.gone->store(true);
    }
  }
  // the bodies this connection buffers count against the listener's cap on unfinished
  // bodies, as HTTP/1.1's do; past it the connection is closed (what is queued is flushed
  // first), as an HTTP/1.1 upload past it is answered 503 and closed.
  const uint64_t buffered = h2_.buffered_body_bytes();
  if (buffered < body_hold_.bytes()) {
    body_hold_.Shrink(body_hold_.bytes() - buffered);
  } else if (buffered > body_hold_.bytes() && !body_hold_.Grow(buffered - body_hold_.bytes())) {
    log::Warn("h2_body_budget_exceeded", {{"peer", peer_.ToString()}, {"buffered", buffered}});
    return false;
  }
  return open;
}

template <typename Stream>
void H2Session<Stream>::Flush() {
  // Inside Receive (a handler that answered at once) nghttp2 may not be asked for output:
  // the read handler flushes when Receive returns.
  if (closed_ || write_in_flight_ || receiving_) return;
  h2_.TakeOutput(writing_);
  if (writing_.empty()) {
    if (closing_ || h2_.Finished()) return Close();
    ArmTimer();  // after TakeOutput: what nghttp2 could not send is now known
    return;
  }
  // One gather write: frame bytes and the answers' chunks, uncopied (TLS coalesces them
  // into records itself).
  gather_.clear();
  write_carries_data_ = false;
  for (const auto& piece : writing_.pieces) {
    std::string_view bytes = writing_.View(piece);
    gather_.push_back(asio::buffer(bytes.data(), bytes.size()));
    write_carries_data_ |= piece.chunk != nullptr;  // a DATA payload (an answer's bytes)
  }
  write_in_flight_ = true;
  ArmWriteDeadline();
  // The send deadline runs from the write's last progress, as over HTTP/1.1: a client that
  // keeps reading, however slowly, is never cut; one that stops is.
  size_t progressed = 0;
  auto progress = [self = Self(), progressed](const beast::error_code& ec,
                                              size_t done) mutable -> size_t {
    if (ec) return 0;
    if (done > progressed) {
      progressed = done;
      self->ArmWriteDeadline();
    }
    return 64 * 1024;
  };
  asio::async_write(stream_, gather_, std::move(progress),
                    [self = Self()](beast::error_code ec, size_t n) {
                      self->write_in_flight_ = false;
                      self->server_->AddBytesOut(*self->worker_, n);
                      self->writing_.Clear();  // lets the chunks go
                      if (ec) return self->Close();
                      // An answer's bytes are out (or a body-less answer's header): whatever
                      // the connection waits for next (an idle keep-alive, a blocked answer)
                      // starts now, not when nghttp2 let go of the stream.
                      if (self->write_carries_data_ || self->answered_) {
                        self->wait_ = Wait::kNone;
                      }
                      self->answered_ = false;
                      self->Flush();
                    });
}

template <typename Stream>
void H2Session<Stream>::Close() {
  if (closed_) return;
  closed_ = true;
  broken.store(true);
  armed_at_.reset();
  ClearDeadline();
  beast::error_code ec;
  Lowest().shutdown(tcp::socket::shutdown_both, ec);
  Lowest().close(ec);
}

template <typename Stream>
void H2Session<Stream>::OnRequest(int32_t id, Request request) {
  auto ctx = std::make_shared<RequestContext>();
  Pending& pending = pending_[id];
  pending.method = std::string(request.method_string());
  pending.started = std::chrono::steady_clock::now();
  if (!FillRequestContext(*ctx, std::move(request), *server_, peer_, local_port_,
                          stream_.get_executor())) {
    return Answer(
        id, ErrorResponse(Status::bad_request, "invalid_argument", "request target must be a path"),
        {});
  }
  Router::Match match = server_->router.Find(ctx->request.method(), ctx->path);
  if (match.streaming) {
    return Answer(id,
                  ErrorResponse(Status::not_implemented, "not_implemented",
                                "streamed uploads take HTTP/1.1 on this listener"),
                  {});
  }
  if (match.result == Router::MatchResult::kNoPath) {
    return Answer(id,
                  ErrorResponse(Status::not_found, "not_found",
                                "no such resource: " + std::string(ctx->path)),
                  {});
  }
  if (match.result == Router::MatchResult::kNoMethod) {
    Response res = ErrorResponse(Status::method_not_allowed, "method_not_allowed",
                                 std::string(ctx->request.method_string()) +
                                     " is not allowed here; allowed: " + match.allow);
    res.set(beast_http::field::allow, match.allow);
    return Answer(id, std::move(res), {});
  }
  ctx->params = std::move(match.params);
  // The context lives as long as the handler may use it: until the stream's answer is in.
  pending.ctx = ctx;
  Responder responder(std::make_shared<StreamSink<Stream>>(Self(), id));
  try {
    (*match.handler)(*ctx, std::move(responder));
  } catch (const std::exception& e) {
    server_->LogHandlerException(ctx->path, e.what());
  }
}

template <typename Stream>
void H2Session<Stream>::OnRefusal(int32_t id, std::string_view method, Response refusal) {
  Pending& pending = pending_[id];
  pending.method = std::string(method);
  pending.started = std::chrono::steady_clock::now();
  Answer(id, std::move(refusal), {});
}

template <typename Stream>
void H2Session<Stream>::CountAnswer(int32_t id, unsigned status, std::optional<uint64_t> bytes) {
  auto it = pending_.find(id);
  if (it == pending_.end() || it->second.counted) return;
  it->second.counted = true;
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - it->second.started).count();
  server_->CountRequest(*worker_, it->second.method, status, seconds);
  if (server_->access_log) {
    server_->LogAccess(it->second.ctx.get(), peer_, it->second.method, status, bytes, seconds,
                       "HTTP/2");
  }
}

template <typename Stream>
void H2Session<Stream>::Answer(int32_t id, Response header, SharedBuffers body, uint64_t offset,
                               std::optional<uint64_t> length) {
  CountAnswer(id, header.result_int(),
              length          ? *length
              : body.size > 0 ? body.size
                              : header.body().size());
  pending_.erase(id);
  if (closed_) return;
  header.set(beast_http::field::server, "meshwork");
  header.set(beast_http::field::date, server_->Date());
  h2_.Respond(id, std::move(header), std::move(body), offset, length);
  answered_ = true;
  Flush();
}

template <typename Stream>
void H2Session<Stream>::AnswerFile(int32_t id, Response header,
                                   std::shared_ptr<const OpenFile> file, uint64_t offset,
                                   uint64_t length) {
  CountAnswer(id, header.result_int(), length);
  pending_.erase(id);
  if (closed_) return;
  header.set(beast_http::field::server, "meshwork");
  header.set(beast_http::field::date, server_->Date());
  h2_.RespondFile(id, std::move(header), std::move(file), offset, length);
  answered_ = true;
  Flush();
}

template <typename Stream>
void H2Session<Stream>::StartStream(int32_t id, Response header,
                                    std::shared_ptr<std::atomic<bool>> gone) {
  CountAnswer(id, header.result_int(), std::nullopt);
  if (closed_) return;
  if (!h2_.StreamOpen(id)) {
    gone->store(true);  // reset before the answer began
  } else if (auto it = pending_.find(id); it != pending_.end()) {
    it->second.gone = gone;
  }
  header.set(beast_http::field::server, "meshwork");
  header.set(beast_http::field::date, server_->Date());
  // HEAD: the header is the whole answer; the producer may stop.
  if (!h2_.StartStream(id, std::move(header))) gone->store(true);
  answered_ = true;
  Flush();
}

template <typename Stream>
void H2Session<Stream>::StreamData(int32_t id, std::shared_ptr<const std::string> chunk) {
  if (!chunk || chunk == AbortChunk()) pending_.erase(id);
  if (closed_) return;
  if (chunk == AbortChunk()) {
    h2_.ResetStream(id);
  } else {
    h2_.StreamData(id, std::move(chunk));
  }
  Flush();
}

template class H2Session<PlainStream>;
template class H2Session<TlsStream>;

}  // namespace meshwork::http::server_internal
