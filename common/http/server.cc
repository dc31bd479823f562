#include "common/http/server.h"

#include <openssl/ssl.h>

#include <charconv>
#include <deque>
#include <list>
#include <optional>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "boost/asio.hpp"
#include "boost/asio/ssl.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/ssl.hpp"
#include "common/http/byte_budget.h"
#include "common/http/framing.h"
#include "common/http/response.h"
#include "common/http/tls.h"
#include "common/log/log.h"
#include "common/metrics/metrics.h"
#include "common/net/client_address.h"
#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"

namespace meshwork::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;

namespace {

net::IpAddress ToIpAddress(const asio::ip::address& a) {
  if (a.is_v4()) return net::IpAddress::V4(a.to_v4().to_uint());
  return net::IpAddress::V6(a.to_v6().to_bytes());
}

// The canned answer for a connection above max_connections, written without a session.
const std::string& BusyResponse() {
  static const std::string text = [] {
    std::string body =
        R"({"error":{"status":503,"code":"unavailable","message":"too many connections"}})";
    return absl::StrCat(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
        "Retry-After: 1\r\nConnection: close\r\nContent-Length: ",
        body.size(), "\r\n\r\n", body);
  }();
  return text;
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

}  // namespace

absl::StatusOr<std::pair<std::string, uint16_t>> SplitHostPort(std::string_view listen) {
  size_t colon = listen.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == listen.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", std::string(listen), "\" is not ADDR:PORT"));
  }
  std::string_view host = listen.substr(0, colon);
  std::string_view port_text = listen.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  unsigned port = 0;
  auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || ptr != port_text.data() + port_text.size() || port > 65535 ||
      host.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", std::string(listen), "\" is not ADDR:PORT"));
  }
  return std::make_pair(std::string(host), static_cast<uint16_t>(port));
}

std::string RequestContext::ViewerScheme() const {
  if (peer_trusted) {
    auto it = request.find("X-Forwarded-Proto");
    if (it != request.end() && absl::AsciiStrToLower(absl::string_view(
                                   it->value().data(), it->value().size())) == "https") {
      return "https";
    }
  }
  return scheme;
}

std::optional<std::string> RequestContext::QueryParam(std::string_view name) const {
  std::string_view q = query;
  while (!q.empty()) {
    size_t amp = q.find('&');
    std::string_view pair = q.substr(0, amp);
    size_t eq = pair.find('=');
    std::string_view key = pair.substr(0, eq);
    if (key == name) {
      std::string_view raw = eq == std::string_view::npos ? "" : pair.substr(eq + 1);
      std::string out;
      for (size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] == '+') {
          out.push_back(' ');
        } else if (raw[i] == '%' && i + 2 < raw.size() + 0 && std::isxdigit(raw[i + 1]) &&
                   std::isxdigit(raw[i + 2])) {
          out.push_back(
              static_cast<char>(std::stoi(std::string(raw.substr(i + 1, 2)), nullptr, 16)));
          i += 2;
        } else {
          out.push_back(raw[i]);
        }
      }
      return out;
    }
    if (amp == std::string_view::npos) break;
    q.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

Responder::~Responder() {
  if (sink_) {
    sink_->Complete(ErrorResponse(Status::internal_server_error, "internal",
                                  "the request was dropped without an answer"));
  }
}

void Responder::Send(Response response) {
  if (!sink_) return;  // already answered; a second answer is a no-op
  auto sink = std::move(sink_);
  sink_ = nullptr;
  sink->Complete(std::move(response));
}

std::shared_ptr<ChunkedWriter> Responder::StartChunked(Response header) {
  if (!sink_) return nullptr;
  auto sink = std::move(sink_);
  sink_ = nullptr;
  return sink->StartChunked(std::move(header));
}

void Responder::SendBuffers(Response header, SharedBuffers body, uint64_t offset, uint64_t length) {
  if (!sink_) return;
  auto sink = std::move(sink_);
  sink_ = nullptr;
  // Cut the slice to the bytes the chunks really hold, so Content-Length never promises more.
  uint64_t held = 0;
  for (const auto& chunk : body.chunks) {
    if (chunk) held += chunk->size();
  }
  body.size = held;
  offset = std::min(offset, held);
  length = std::min(length, held - offset);
  sink->CompleteBuffers(std::move(header), std::move(body), offset, length);
}

void Responder::Sink::CompleteBuffers(Response header, SharedBuffers body, uint64_t offset,
                                      uint64_t length) {
  std::string joined;
  joined.reserve(static_cast<size_t>(length));
  body.ForEachPiece(offset, length, [&joined](std::string_view piece) { joined.append(piece); });
  header.erase(beast_http::field::transfer_encoding);
  header.body() = std::move(joined);
  header.content_length(header.body().size());
  Complete(std::move(header));
}

// What the server knows of a connection, whatever its transport.
class SessionBase {
 public:
  virtual ~SessionBase() = default;
  virtual void Start() = 0;
  // Called (on this session's executor) when the server stops.
  virtual void Shutdown() = 0;
  // Answers the current request (on this session's executor).
  virtual void Complete(Response response) = 0;
  // Answers the current request with a body written from shared chunks (scatter-gather).
  virtual void CompleteBuffers(Response header, SharedBuffers body, uint64_t offset,
                               uint64_t length) = 0;
  // Reads the next chunk of a streamed request body (on this session's executor).
  virtual void ReadChunk(BodyReader::ChunkFn on_chunk) = 0;
  // Chunked responses (on this session's executor): the header, then chunks in order; a
  // null chunk is the end.
  virtual void BeginChunked(Response header) = 0;
  virtual void QueueChunk(std::shared_ptr<const std::string> data) = 0;
  std::atomic<bool> broken{false};  // the connection failed during a chunked response
  virtual asio::any_io_executor executor() = 0;
};

class Server::Impl {
 public:
  Impl(ServerOptions options, Router router)
      : options(std::move(options)), router(std::move(router)) {}

  // Declared first so they outlive the io_contexts (sessions still queued there touch them
  // while the contexts are destroyed).
  ServerOptions options;
  const Router router;
  ServerCounters counters;
  absl::Mutex mu;
  std::list<std::weak_ptr<SessionBase>> sessions ABSL_GUARDED_BY(mu);
  size_t active ABSL_GUARDED_BY(mu) = 0;
  std::atomic<bool> stopping{false};

  // The TLS context for new connections; null for a plain listener. Each TLS session holds
  // its own reference, so a reload never pulls a context from under an open connection.
  absl::Mutex tls_mu;
  std::shared_ptr<asio::ssl::context> tls ABSL_GUARDED_BY(tls_mu);
  bool tls_enabled = false;

  prometheus::Family<prometheus::Counter>* requests = nullptr;
  prometheus::Histogram* latency = nullptr;
  prometheus::Gauge* connections_gauge = nullptr;
  prometheus::Counter* bytes_in_counter = nullptr;
  prometheus::Counter* bytes_out_counter = nullptr;
  prometheus::Counter* refused_counter = nullptr;
  prometheus::Counter* accept_failures = nullptr;
  std::unique_ptr<ByteBudget> body_budget;  // R-3: unfinished bodies of the whole listener
  DecoderLimits limits;
  const Clock* clock = nullptr;

  std::vector<std::unique_ptr<asio::io_context>> contexts;
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards;
  std::unique_ptr<tcp::acceptor> acceptor;
  // On worker 0, like the acceptor; both declared after `contexts`, so destroyed before them.
  std::unique_ptr<asio::steady_timer> accept_backoff;
  std::vector<std::thread> threads;
  size_t next_worker = 0;

  void SetUpMetrics();
  void Accept();
  // The Date field for a response sent now (RFC 9110 §6.6.1), formatted once a second per
  // worker thread.
  const std::string& Date() const {
    thread_local int64_t cached_second = -1;
    thread_local std::string cached;
    int64_t now =
        std::chrono::duration_cast<std::chrono::seconds>(clock->Now().time_since_epoch()).count();
    if (now != cached_second) {
      cached = HttpDate(now);
      cached_second = now;
    }
    return cached;
  }
  std::shared_ptr<asio::ssl::context> CurrentTls() {
    absl::MutexLock lock(&tls_mu);
    return tls;
  }
  // Counters by (method, status), looked up once each: Family::Add hashes label maps.
  absl::Mutex counter_mu;
  absl::flat_hash_map<std::pair<std::string, unsigned>, prometheus::Counter*> counter_cache
      ABSL_GUARDED_BY(counter_mu);
  void CountRequest(std::string_view method, unsigned status, double seconds) {
    if (!requests) return;
    prometheus::Counter* counter = nullptr;
    {
      absl::MutexLock lock(&counter_mu);
      auto key = std::make_pair(std::string(method), status);
      auto it = counter_cache.find(key);
      if (it == counter_cache.end()) {
        counter = &requests->Add({{"listener", options.name},
                                  {"method", key.first},
                                  {"status", std::to_string(status)}});
        counter_cache.emplace(std::move(key), counter);
      } else {
        counter = it->second;
      }
    }
    counter->Increment();
    latency->Observe(seconds);
  }
  void AddBytesIn(uint64_t n) {
    counters.bytes_in.fetch_add(n, std::memory_order_relaxed);
    if (bytes_in_counter) bytes_in_counter->Increment(static_cast<double>(n));
  }
  void AddBytesOut(uint64_t n) {
    counters.bytes_out.fetch_add(n, std::memory_order_relaxed);
    if (bytes_out_counter) bytes_out_counter->Increment(static_cast<double>(n));
  }
};

namespace {

// Connections use the worker's concrete executor type rather than the type-erased
// any_io_executor: every completion of every request goes through it, and the erased form
// costs a copy and an indirect call each time.
using WorkerExecutor = asio::io_context::executor_type;
using WorkerSocket = asio::basic_stream_socket<tcp, WorkerExecutor>;
using PlainStream = beast::basic_stream<tcp, WorkerExecutor, beast::unlimited_rate_policy>;
using TlsStream = beast::ssl_stream<PlainStream>;

// How long the listener pauses after a failed accept (EMFILE, ENFILE, ENOBUFS).
constexpr std::chrono::milliseconds kAcceptBackoff{100};

// How long a closing TLS connection may take to send its close_notify.
constexpr std::chrono::milliseconds kTlsShutdownTimeout{1000};

// A chunked response: each call hops onto the connection's worker.
class SessionChunkedWriter final : public ChunkedWriter {
 public:
  explicit SessionChunkedWriter(std::shared_ptr<SessionBase> session)
      : session_(std::move(session)) {}
  ~SessionChunkedWriter() override { Finish(); }
  void Write(std::shared_ptr<const std::string> data) override {
    if (finished_.load() || !data || data->empty()) return;
    auto session = session_;
    asio::dispatch(session->executor(),
                   [session, data = std::move(data)]() mutable { session->QueueChunk(data); });
  }
  void Finish() override {
    if (finished_.exchange(true)) return;
    auto session = session_;
    asio::dispatch(session->executor(), [session] { session->QueueChunk(nullptr); });
  }
  bool closed() const override { return session_->broken.load(); }

 private:
  std::shared_ptr<SessionBase> session_;
  std::atomic<bool> finished_{false};
};

// The Responder's sink: hops back onto the session's worker.
class SessionSink final : public Responder::Sink {
 public:
  explicit SessionSink(std::shared_ptr<SessionBase> session) : session_(std::move(session)) {}
  std::shared_ptr<ChunkedWriter> StartChunked(Response header) override {
    auto session = session_;
    asio::dispatch(session->executor(), [session, h = std::move(header)]() mutable {
      session->BeginChunked(std::move(h));
    });
    return std::make_shared<SessionChunkedWriter>(session_);
  }
  void Complete(Response response) override {
    auto session = session_;
    // Inline when already on the connection's worker (the common case), else posted there.
    asio::dispatch(session->executor(), [session, r = std::move(response)]() mutable {
      session->Complete(std::move(r));
    });
  }
  void CompleteBuffers(Response header, SharedBuffers body, uint64_t offset,
                       uint64_t length) override {
    auto session = session_;
    asio::dispatch(session->executor(),
                   [session, h = std::move(header), b = std::move(body), offset, length]() mutable {
                     session->CompleteBuffers(std::move(h), std::move(b), offset, length);
                   });
  }

 private:
  std::shared_ptr<SessionBase> session_;
};

// A streamed body: each Read hops onto the connection's worker.
class SessionBodyReader final : public BodyReader {
 public:
  explicit SessionBodyReader(std::shared_ptr<SessionBase> session) : session_(std::move(session)) {}
  void Read(ChunkFn on_chunk) override {
    auto session = session_;
    asio::dispatch(session->executor(), [session, cb = std::move(on_chunk)]() mutable {
      session->ReadChunk(std::move(cb));
    });
  }

 private:
  std::shared_ptr<SessionBase> session_;
};

constexpr size_t kBodyChunkBytes = 64 * 1024;

// One connection over `Stream` (PlainStream or TlsStream). Lives on one worker's
// io_context; every member function below runs there.
template <typename Stream>
class Session final : public SessionBase, public std::enable_shared_from_this<Session<Stream>> {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  // `tls` is the context a TlsStream is built on (null for plain); `args` build the stream.
  template <typename... Args>
  Session(Server::Impl* server, std::shared_ptr<asio::ssl::context> tls, Args&&... args)
      : server_(server),
        tls_(std::move(tls)),
        stream_(std::forward<Args>(args)...),
        buffer_(DecoderBufferBytes(server->limits, kBodyChunkBytes)),
        extension_limit_(server->limits.chunk_extension_bytes) {
    boost::system::error_code ec;
    auto remote = Lowest().socket().remote_endpoint(ec);
    if (!ec) peer_ = ToIpAddress(remote.address());
    auto local = Lowest().socket().local_endpoint(ec);
    if (!ec) local_port_ = local.port();
  }
  ~Session() override {
    absl::MutexLock lock(&server_->mu);
    --server_->active;
    server_->counters.connections.fetch_sub(1, std::memory_order_relaxed);
    if (server_->connections_gauge) server_->connections_gauge->Decrement();
  }

  void Start() override {
    asio::dispatch(stream_.get_executor(), [self = this->shared_from_this()] {
      if constexpr (kTls) {
        self->Handshake();
      } else {
        self->ReadHeader();
      }
    });
  }

  void Shutdown() override {
    close_after_response_ = true;
    // An idle connection waits in a header read (a new TLS one in its handshake): cancel
    // it, and its handler closes.
    if (idle_ || handshaking_) Lowest().cancel();
  }

  void Complete(Response response) override { Write(std::move(response)); }
  void CompleteBuffers(Response header, SharedBuffers body, uint64_t offset,
                       uint64_t length) override;
  void ReadChunk(BodyReader::ChunkFn on_chunk) override;
  void BeginChunked(Response header) override;
  void QueueChunk(std::shared_ptr<const std::string> data) override;

  asio::any_io_executor executor() override { return stream_.get_executor(); }

 private:
  PlainStream& Lowest() { return beast::get_lowest_layer(stream_); }
  void Handshake();
  void ReadHeader();
  void OnHeader(beast::error_code ec, size_t n);
  void ReadBody();
  void OnBody(beast::error_code ec, size_t n);
  void Dispatch();
  // Fills ctx_ from the request header; false when the target is not a path (answered).
  bool PrepareContext(Request request);
  void DispatchStreaming(const StreamingHandler* handler, std::vector<std::string> params);
  void WriteFinal(Response response);  // answers a transport error and closes
  void Write(Response response);
  void WriteSerialized(bool keep);
  void StartHeaderRead();
  // Writes all of `buffers` (kept alive by the caller until `done` runs), re-arming the send
  // deadline whenever bytes move; then `done(ec, bytes_written)`.
  template <typename Buffers, typename Done>
  void SendAll(const Buffers& buffers, Done done);
  void Close();
  void CloseSocket() {
    beast::error_code ec;
    Lowest().socket().shutdown(tcp::socket::shutdown_send, ec);
    Lowest().close();
  }

  Server::Impl* server_;
  std::shared_ptr<asio::ssl::context> tls_;  // before stream_, which refers to it
  Stream stream_;
  beast::flat_buffer buffer_;            // capped: see DecoderBufferBytes
  ChunkExtensionLimit extension_limit_;  // the parsers refer to it
  BudgetHold body_hold_;                 // a buffered body's bytes against the listener's cap
  std::optional<beast_http::request_parser<beast_http::string_body>> parser_;
  std::optional<beast_http::response_serializer<beast_http::string_body>> serializer_;
  // A streamed body (Router::AddStreaming): its parser, chunk buffer and state.
  std::optional<beast_http::request_parser<beast_http::buffer_body>> stream_parser_;
  std::unique_ptr<uint8_t[]> chunk_;
  bool body_done_ = true;
  // A chunked response in progress: its header, the chunks waiting (null = the end).
  std::shared_ptr<beast_http::response<beast_http::empty_body>> chunked_header_;
  std::optional<beast_http::response_serializer<beast_http::empty_body>> chunked_serializer_;
  std::deque<std::shared_ptr<const std::string>> chunks_;
  bool chunk_writing_ = false;
  bool chunked_keep_ = false;
  void PumpChunks();
  std::shared_ptr<RequestContext> ctx_;
  std::shared_ptr<Response> out_;
  net::IpAddress peer_;
  uint16_t local_port_ = 0;
  bool idle_ = false;
  bool handshaking_ = false;
  bool handshake_done_ = false;
  bool close_after_response_ = false;
  bool keep_alive_ = true;
  Verb method_ = Verb::unknown;
  std::string method_text_;
  std::chrono::steady_clock::time_point started_;
};

template <typename Stream>
void Session<Stream>::Handshake() {
  if constexpr (kTls) {
    if (server_->stopping.load()) return CloseSocket();
    handshaking_ = true;
    Lowest().expires_after(server_->options.read_timeout);
    stream_.async_handshake(
        asio::ssl::stream_base::server, [self = this->shared_from_this()](beast::error_code ec) {
          self->handshaking_ = false;
          if (ec) {
            // Not TLS, a failed negotiation, or too slow: just drop it.
            log::Debug("http_tls_handshake_failed", {{"listener", self->server_->options.name},
                                                     {"peer", self->peer_.ToString()},
                                                     {"error", ec.message()}});
            return self->CloseSocket();
          }
          self->handshake_done_ = true;
          self->ReadHeader();
        });
  }
}

template <typename Stream>
void Session<Stream>::Close() {
  if constexpr (kTls) {
    if (handshake_done_ && Lowest().socket().is_open()) {
      handshake_done_ = false;  // closes once
      // Send our close_notify but do not wait for the peer's (RFC 8446 §6.1 allows it), so
      // an idle peer cannot hold a stopping server; the deadline bounds the send.
      SSL* ssl = stream_.native_handle();
      SSL_set_shutdown(ssl, SSL_get_shutdown(ssl) | SSL_RECEIVED_SHUTDOWN);
      Lowest().expires_after(
          std::min<std::chrono::milliseconds>(kTlsShutdownTimeout, server_->options.read_timeout));
      stream_.async_shutdown(
          [self = this->shared_from_this()](beast::error_code) { self->CloseSocket(); });
      return;
    }
  }
  CloseSocket();
}

template <typename Stream>
void Session<Stream>::ReadHeader() {
  if (close_after_response_ || server_->stopping.load()) {
    Close();
    return;
  }
  ctx_.reset();
  stream_parser_.reset();
  body_done_ = true;
  body_hold_.Release();
  parser_.emplace();
  ApplyDecoderLimits(*parser_, server_->limits, extension_limit_);
  // No body limit while the header is read: a streaming route takes any length. Others get
  // theirs once the route is known (OnHeader).
  parser_->body_limit(boost::none);
  if (buffer_.size() > 0) return StartHeaderRead();  // a pipelined request is under way
  // Idle until the first byte: the idle timeout; from there the whole header is due within
  // the read timeout.
  idle_ = true;
  Lowest().expires_after(server_->options.idle_timeout);
  stream_.async_read_some(buffer_.prepare(std::min<size_t>(4096, buffer_.max_size())),
                          [self = this->shared_from_this()](beast::error_code ec, size_t n) {
                            self->buffer_.commit(n);  // counted when the parser takes it
                            if (ec) {
                              self->idle_ = false;
                              return self->OnHeader(ec, 0);
                            }
                            self->StartHeaderRead();
                          });
}

template <typename Stream>
void Session<Stream>::StartHeaderRead() {
  idle_ = false;
  Lowest().expires_after(server_->options.read_timeout);
  beast_http::async_read_header(
      stream_, buffer_, *parser_,
      [self = this->shared_from_this()](beast::error_code ec, size_t n) { self->OnHeader(ec, n); });
}

template <typename Stream>
void Session<Stream>::OnHeader(beast::error_code ec, size_t n) {
  idle_ = false;
  server_->AddBytesIn(n);
  if (ec == beast_http::error::header_limit) {
    WriteFinal(ErrorResponse(Status::request_header_fields_too_large, "invalid_argument",
                             "request header exceeds " +
                                 std::to_string(server_->options.header_limit_bytes) + " bytes"));
    return;
  }
  if (ec == beast_http::error::body_limit) {  // Beast checks Content-Length with the header
    WriteFinal(ErrorResponse(
        Status::payload_too_large, "invalid_argument",
        "request body exceeds " + std::to_string(server_->options.body_limit_bytes) + " bytes"));
    return;
  }
  if (ec == beast_http::error::end_of_stream || ec == beast::error::timeout ||
      ec == asio::error::operation_aborted || ec == asio::error::connection_reset ||
      ec == asio::error::eof || ec == asio::error::bad_descriptor ||
      ec == asio::ssl::error::stream_truncated) {
    Close();
    return;
  }
  if (ec && ec.category() == asio::error::get_ssl_category()) {
    CloseSocket();  // a broken TLS record: nothing sensible can be sent back
    return;
  }
  if (ec) {
    WriteFinal(ErrorResponse(Status::bad_request, "invalid_argument",
                             "malformed request: " + ec.message()));
    return;
  }
  const auto& req = parser_->get();
  // RFC 9112 §6: a body whose length is ambiguous is never read (no request smuggling).
  if (auto framing = CheckRequestFraming(req); !framing.ok()) {
    WriteFinal(ErrorResponse(framing));
    return;
  }
  {
    std::string_view target = req.target();
    Router::Match match = server_->router.Find(req.method(), target.substr(0, target.find('?')));
    if (match.streaming) {
      const StreamingHandler* handler = match.streaming;
      auto params = std::move(match.params);
      auto start = [self = this->shared_from_this(), handler, params]() mutable {
        self->DispatchStreaming(handler, std::move(params));
      };
      auto expect = req.find(beast_http::field::expect);
      if (expect != req.end() && beast::iequals(expect->value(), "100-continue")) {
        static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
        asio::async_write(stream_, asio::buffer(kContinue.data(), kContinue.size()),
                          [self = this->shared_from_this(), start = std::move(start)](
                              beast::error_code ec, size_t n) mutable {
                            self->server_->AddBytesOut(n);
                            if (ec) return self->Close();
                            start();
                          });
        return;
      }
      start();
      return;
    }
  }
  parser_->body_limit(server_->options.body_limit_bytes);
  auto length = parser_->content_length();
  if (length && *length > server_->options.body_limit_bytes) {
    WriteFinal(ErrorResponse(
        Status::payload_too_large, "invalid_argument",
        "request body exceeds " + std::to_string(server_->options.body_limit_bytes) + " bytes"));
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
  auto expect = req.find(beast_http::field::expect);
  if (expect != req.end() && beast::iequals(expect->value(), "100-continue")) {
    static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    asio::async_write(stream_, asio::buffer(kContinue.data(), kContinue.size()),
                      [self = this->shared_from_this()](beast::error_code ec, size_t n) {
                        self->server_->AddBytesOut(n);
                        if (ec) return self->Close();
                        self->ReadBody();
                      });
    return;
  }
  ReadBody();
}

template <typename Stream>
void Session<Stream>::ReadBody() {
  Lowest().expires_after(server_->options.read_timeout);
  beast_http::async_read(
      stream_, buffer_, *parser_,
      [self = this->shared_from_this()](beast::error_code ec, size_t n) { self->OnBody(ec, n); });
}

template <typename Stream>
void Session<Stream>::OnBody(beast::error_code ec, size_t n) {
  server_->AddBytesIn(n);
  if (ec == beast_http::error::body_limit) {
    WriteFinal(ErrorResponse(
        Status::payload_too_large, "invalid_argument",
        "request body exceeds " + std::to_string(server_->options.body_limit_bytes) + " bytes"));
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
    WriteFinal(ErrorResponse(Status::bad_request, "invalid_argument",
                             "malformed request body: " + ec.message()));
    return;
  }
  Dispatch();
}

template <typename Stream>
bool Session<Stream>::PrepareContext(Request request) {
  started_ = std::chrono::steady_clock::now();
  Lowest().expires_never();
  ctx_ = std::make_shared<RequestContext>();
  RequestContext& ctx = *ctx_;
  ctx.request = std::move(request);
  method_ = ctx.request.method();
  method_text_ = std::string(ctx.request.method_string());
  keep_alive_ = ctx.request.keep_alive();
  std::string_view target = ctx.request.target();
  size_t q = target.find('?');
  ctx.path = target.substr(0, q);
  ctx.query = q == std::string_view::npos ? std::string_view() : target.substr(q + 1);
  ctx.peer = peer_;
  ctx.listener = server_->options.name;
  ctx.scheme = server_->options.scheme;
  ctx.local_port = local_port_;
  ctx.executor = stream_.get_executor();
  std::shared_ptr<const net::CidrSet> trusted;
  if (server_->options.trusted_proxies) trusted = server_->options.trusted_proxies();
  if (trusted) {
    ctx.peer_trusted = trusted->Contains(peer_.Unmapped());
    std::vector<std::string_view> xff;
    auto [first, last] = ctx.request.equal_range("X-Forwarded-For");
    for (auto it = first; it != last; ++it) xff.push_back(it->value());
    ctx.client = net::ResolveClientAddress(peer_, *trusted, xff);
  } else {
    ctx.client = peer_.Unmapped();
  }
  if (ctx.path.empty() || ctx.path.front() != '/') {
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
  ApplyDecoderLimits(*stream_parser_, server_->limits, extension_limit_);
  stream_parser_->body_limit(boost::none);  // continuous uploads: bounded per chunk instead
  body_done_ = stream_parser_->is_done();
  if (!PrepareContext(std::move(header))) return;
  ctx_->params = std::move(params);
  ctx_->upload_budget = server_->body_budget.get();
  Responder responder(std::make_shared<SessionSink>(this->shared_from_this()));
  auto body = std::make_shared<SessionBodyReader>(this->shared_from_this());
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
  Lowest().expires_after(server_->options.read_timeout);
  beast_http::async_read_some(
      stream_, buffer_, *stream_parser_,
      [self = this->shared_from_this(), cb = std::move(on_chunk)](beast::error_code ec, size_t n) {
        self->server_->AddBytesIn(n);
        self->Lowest().expires_never();
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
  Request request = parser_->release();
  parser_.reset();
  body_hold_.Release();
  if (!PrepareContext(std::move(request))) return;
  RequestContext& ctx = *ctx_;
  Router::Match match = server_->router.Find(method_, ctx.path);
  if (match.result == Router::MatchResult::kNoPath) {
    Write(ErrorResponse(Status::not_found, "not_found",
                        "no such resource: " + std::string(ctx.path)));
    return;
  }
  if (match.result == Router::MatchResult::kNoMethod) {
    Response res = ErrorResponse(Status::method_not_allowed, "method_not_allowed",
                                 method_text_ + " is not allowed here; allowed: " + match.allow);
    res.set(beast_http::field::allow, match.allow);
    Write(std::move(res));
    return;
  }
  ctx.params = std::move(match.params);
  Responder responder(std::make_shared<SessionSink>(this->shared_from_this()));
  try {
    (*match.handler)(ctx, std::move(responder));
  } catch (const std::exception& e) {
    log::Error("http_handler_exception",
               {{"listener", server_->options.name}, {"path", ctx.path}, {"what", e.what()}});
    // The responder (if still held) answers 500 when it is dropped.
  }
}

template <typename Stream>
void Session<Stream>::Write(Response response) {
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  server_->CountRequest(method_text_, static_cast<unsigned>(response.result_int()), seconds);
  response.version(11);
  if (!response.has_content_length() && !response.chunked()) response.prepare_payload();
  response.set(beast_http::field::server, "meshwork");
  response.set(beast_http::field::date, server_->Date());
  // An answer before the end of a streamed body leaves unread bytes: close after it.
  bool keep = keep_alive_ && body_done_ && !close_after_response_ && !server_->stopping.load();
  response.keep_alive(keep);
  if (method_ == Verb::head) {
    auto length = response.body().size();
    response.body().clear();
    response.content_length(length);
  }
  // ctx_ stays alive until the next request: a handler that answered inline may still use it.
  out_ = std::make_shared<Response>(std::move(response));
  serializer_.emplace(*out_);
  WriteSerialized(keep);
}

template <typename Stream>
void Session<Stream>::WriteSerialized(bool keep) {
  // Some bytes at a time, so the deadline measures progress, not the whole response.
  Lowest().expires_after(server_->options.send_timeout);
  beast_http::async_write_some(
      stream_, *serializer_,
      [self = this->shared_from_this(), keep](beast::error_code ec, size_t n) {
        self->server_->AddBytesOut(n);
        if (!ec && !self->serializer_->is_done()) return self->WriteSerialized(keep);
        self->Lowest().expires_never();
        self->serializer_.reset();
        self->out_.reset();
        if (ec || !keep) return self->Close();
        self->ReadHeader();
      });
}

template <typename Stream>
template <typename Buffers, typename Done>
void Session<Stream>::SendAll(const Buffers& buffers, Done done) {
  struct Op {
    std::shared_ptr<Session> self;
    std::shared_ptr<beast::buffers_suffix<Buffers>> rest;
    Done done;
    size_t total = 0;
    void Next() {
      self->Lowest().expires_after(self->server_->options.send_timeout);
      auto& stream = self->stream_;
      auto& pending = *rest;
      stream.async_write_some(pending, std::move(*this));
    }
    void operator()(beast::error_code ec, size_t n) {
      total += n;
      if (!ec) {
        rest->consume(n);
        if (beast::buffer_bytes(*rest) > 0) return Next();
      }
      self->Lowest().expires_never();
      done(ec, total);
    }
  };
  Op op{this->shared_from_this(), std::make_shared<beast::buffers_suffix<Buffers>>(buffers),
        std::move(done)};
  op.Next();
}

// A scatter-gather answer in flight: the serialized header, the chunks it points into and
// the buffer list handed to the write. Held by the write's handler until it completes.
struct GatherWrite {
  std::string header;
  SharedBuffers body;
  std::vector<asio::const_buffer> buffers;
};

template <typename Stream>
void Session<Stream>::CompleteBuffers(Response header, SharedBuffers body, uint64_t offset,
                                      uint64_t length) {
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  server_->CountRequest(method_text_, static_cast<unsigned>(header.result_int()), seconds);
  bool keep = keep_alive_ && body_done_ && !close_after_response_ && !server_->stopping.load();
  beast_http::response<beast_http::empty_body> head(std::move(header.base()));
  head.version(11);
  head.erase(beast_http::field::transfer_encoding);
  head.content_length(length);
  head.set(beast_http::field::server, "meshwork");
  head.set(beast_http::field::date, server_->Date());
  head.keep_alive(keep);

  auto out = std::make_shared<GatherWrite>();
  {
    std::ostringstream text;
    text << head.base();  // the status line, the fields and the blank line
    out->header = std::move(text).str();
  }
  out->buffers.reserve(body.chunks.size() + 1);
  out->buffers.push_back(asio::buffer(out->header));
  if (method_ != Verb::head) {  // HEAD: the header alone; the chunks are let go now
    body.ForEachPiece(offset, length, [&out](std::string_view piece) {
      out->buffers.push_back(asio::buffer(piece.data(), piece.size()));
    });
    out->body = std::move(body);  // moves the pointers only: the views above stay valid
  }
  // ctx_ stays alive until the next request, as with Write.
  SendAll(out->buffers,
          [self = this->shared_from_this(), out, keep](beast::error_code ec, size_t n) {
            self->server_->AddBytesOut(n);
            if (ec || !keep) return self->Close();
            self->ReadHeader();
          });
}

template <typename Stream>
void Session<Stream>::BeginChunked(Response header) {
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  server_->CountRequest(method_text_, static_cast<unsigned>(header.result_int()), seconds);
  chunked_keep_ = keep_alive_ && body_done_ && !close_after_response_ && !server_->stopping.load();
  chunked_header_ =
      std::make_shared<beast_http::response<beast_http::empty_body>>(header.result(), 11);
  for (const auto& field : header) {
    if (field.name() == beast_http::field::content_length) continue;
    chunked_header_->set(field.name_string(), field.value());
  }
  chunked_header_->set(beast_http::field::server, "meshwork");
  chunked_header_->set(beast_http::field::date, server_->Date());
  chunked_header_->chunked(true);
  chunked_header_->keep_alive(chunked_keep_);
  chunked_serializer_.emplace(*chunked_header_);
  chunk_writing_ = true;
  Lowest().expires_after(server_->options.send_timeout);
  beast_http::async_write_header(stream_, *chunked_serializer_,
                                 [self = this->shared_from_this()](beast::error_code ec, size_t n) {
                                   self->server_->AddBytesOut(n);
                                   self->chunk_writing_ = false;
                                   if (ec) {
                                     self->broken.store(true);
                                     return self->Close();
                                   }
                                   self->PumpChunks();
                                 });
}

template <typename Stream>
void Session<Stream>::QueueChunk(std::shared_ptr<const std::string> data) {
  if (broken.load()) return;
  chunks_.push_back(std::move(data));
  PumpChunks();
}

template <typename Stream>
void Session<Stream>::PumpChunks() {
  if (chunk_writing_ || chunks_.empty() || !chunked_serializer_) return;
  auto data = std::move(chunks_.front());
  chunks_.pop_front();
  chunk_writing_ = true;
  auto self = this->shared_from_this();
  if (!data) {  // the end
    SendAll(beast_http::make_chunk_last(), [self](beast::error_code ec, size_t n) {
      self->server_->AddBytesOut(n);
      self->chunk_writing_ = false;
      self->chunked_serializer_.reset();
      self->chunked_header_.reset();
      self->chunks_.clear();
      if (ec || !self->chunked_keep_) return self->Close();
      self->ReadHeader();
    });
    return;
  }
  SendAll(beast_http::make_chunk(asio::buffer(*data)),
          [self, data](beast::error_code ec, size_t n) {
            self->server_->AddBytesOut(n);
            self->chunk_writing_ = false;
            if (ec) {
              self->broken.store(true);
              self->chunks_.clear();
              return self->Close();
            }
            self->PumpChunks();
          });
}

template <typename Stream>
void Session<Stream>::WriteFinal(Response response) {
  keep_alive_ = false;
  method_ = Verb::unknown;
  method_text_ = "INVALID";
  started_ = std::chrono::steady_clock::now();
  Write(std::move(response));
}

}  // namespace

void Server::Impl::SetUpMetrics() {
  limits.header_bytes = options.header_limit_bytes;
  limits.chunk_extension_bytes = options.chunk_extension_limit_bytes;
  clock = options.clock ? options.clock : &RealClock::Get();
  if (!options.registry) {
    body_budget = std::make_unique<ByteBudget>(options.max_buffered_body_bytes);
    return;
  }
  auto& reg = *options.registry;
  requests = &prometheus::BuildCounter()
                  .Name("meshwork_http_requests_total")
                  .Help("HTTP requests answered, by listener, method and status")
                  .Register(reg);
  latency = &prometheus::BuildHistogram()
                 .Name("meshwork_http_request_duration_seconds")
                 .Help("Time from a complete request to its response, by listener")
                 .Register(reg)
                 .Add({{"listener", options.name}}, metrics::LatencyBuckets());
  connections_gauge = &prometheus::BuildGauge()
                           .Name("meshwork_http_connections")
                           .Help("Open HTTP connections, by listener")
                           .Register(reg)
                           .Add({{"listener", options.name}});
  bytes_in_counter = &prometheus::BuildCounter()
                          .Name("meshwork_http_received_bytes_total")
                          .Help("Bytes received on HTTP listeners")
                          .Register(reg)
                          .Add({{"listener", options.name}});
  bytes_out_counter = &prometheus::BuildCounter()
                           .Name("meshwork_http_sent_bytes_total")
                           .Help("Bytes sent on HTTP listeners")
                           .Register(reg)
                           .Add({{"listener", options.name}});
  refused_counter = &prometheus::BuildCounter()
                         .Name("meshwork_http_refused_connections_total")
                         .Help("Connections refused with 503 above max_connections")
                         .Register(reg)
                         .Add({{"listener", options.name}});
  accept_failures = &prometheus::BuildCounter()
                         .Name("meshwork_http_accept_failures_total")
                         .Help("Failed accepts (out of descriptors or memory), by listener")
                         .Register(reg)
                         .Add({{"listener", options.name}});
  body_budget = std::make_unique<ByteBudget>(
      options.max_buffered_body_bytes,
      &prometheus::BuildGauge()
           .Name("meshwork_http_buffered_body_bytes")
           .Help("Bytes held for request bodies still arriving, by listener")
           .Register(reg)
           .Add({{"listener", options.name}}),
      &prometheus::BuildCounter()
           .Name("meshwork_http_body_budget_refusals_total")
           .Help("Requests answered 503 because the listener's buffered-body cap was reached")
           .Register(reg)
           .Add({{"listener", options.name}}));
  prometheus::BuildGauge()
      .Name("meshwork_http_buffered_body_limit_bytes")
      .Help("The listener's cap on bytes held for request bodies still arriving")
      .Register(reg)
      .Add({{"listener", options.name}})
      .Set(static_cast<double>(options.max_buffered_body_bytes));
}

void Server::Impl::Accept() {
  auto& worker = *contexts[next_worker];
  next_worker = (next_worker + 1) % contexts.size();
  acceptor->async_accept(worker.get_executor(), [this](beast::error_code ec, WorkerSocket socket) {
    if (ec) {
      if (ec == asio::error::operation_aborted || stopping.load()) return;
      // Out of descriptors or memory: accepting again at once would spin on the same error.
      if (accept_failures) accept_failures->Increment();
      log::Warn("http_accept_failed", {{"listener", options.name}, {"error", ec.message()}});
      accept_backoff->expires_after(kAcceptBackoff);
      accept_backoff->async_wait([this](beast::error_code wait_ec) {
        if (!wait_ec && !stopping.load()) Accept();
      });
      return;
    } else {
      bool admit = false;
      std::shared_ptr<SessionBase> session;
      {
        absl::MutexLock lock(&mu);
        if (active < options.max_connections) {
          admit = true;
          ++active;
        }
      }
      std::shared_ptr<asio::ssl::context> tls_context;
      if (admit && tls_enabled) tls_context = CurrentTls();
      if (admit) {
        counters.connections.fetch_add(1, std::memory_order_relaxed);
        if (connections_gauge) connections_gauge->Increment();
        if (tls_enabled) {
          asio::ssl::context& ref = *tls_context;
          session = std::make_shared<Session<TlsStream>>(this, std::move(tls_context),
                                                         std::move(socket), ref);
        } else {
          session = std::make_shared<Session<PlainStream>>(this, nullptr, std::move(socket));
        }
        {
          absl::MutexLock lock(&mu);
          // Drop registry entries of finished sessions as we go.
          for (auto it = sessions.begin(); it != sessions.end();) {
            it = it->expired() ? sessions.erase(it) : std::next(it);
          }
          sessions.push_back(session);
        }
        session->Start();
      } else if (tls_enabled) {
        // No answer is possible before a handshake; refuse by closing.
        if (refused_counter) refused_counter->Increment();
        beast::error_code ignored;
        socket.shutdown(tcp::socket::shutdown_both, ignored);
        socket.close(ignored);
      } else {
        if (refused_counter) refused_counter->Increment();
        auto sock = std::make_shared<WorkerSocket>(std::move(socket));
        asio::async_write(*sock, asio::buffer(BusyResponse()), [sock](beast::error_code, size_t) {
          beast::error_code ignored;
          sock->shutdown(tcp::socket::shutdown_both, ignored);
          sock->close(ignored);
        });
      }
    }
    if (!stopping.load()) Accept();
  });
}

absl::StatusOr<std::unique_ptr<Server>> Server::Start(ServerOptions options, Router router) {
  auto host_port = SplitHostPort(options.listen);
  if (!host_port.ok()) return host_port.status();
  beast::error_code ec;
  auto address = asio::ip::make_address(host_port->first, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("listen address \"", options.listen, "\": ", ec.message()));
  }
  std::shared_ptr<asio::ssl::context> tls;
  if (!options.tls_cert_file.empty() || !options.tls_key_file.empty()) {
    if (options.tls_cert_file.empty() || options.tls_key_file.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "listener ", options.name, ": TLS needs both a certificate file and a key file"));
    }
    if (options.scheme != "https") {
      return absl::InvalidArgumentError(absl::StrCat(
          "listener ", options.name, ": a TLS listener has scheme https, not ", options.scheme));
    }
    auto loaded = LoadServerTlsContext(options.tls_cert_file, options.tls_key_file);
    if (!loaded.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("listener ", options.name, ": ", loaded.status().message()));
    }
    tls = *std::move(loaded);
  }
  std::unique_ptr<Server> server(new Server());
  server->options_ = options;
  auto impl = std::make_shared<Impl>(std::move(options), std::move(router));
  if (tls) {
    impl->tls_enabled = true;
    absl::MutexLock lock(&impl->tls_mu);
    impl->tls = std::move(tls);
  }
  int threads = std::max(1, impl->options.threads);
  for (int i = 0; i < threads; ++i) {
    impl->contexts.push_back(std::make_unique<asio::io_context>(1));
    impl->guards.push_back(asio::make_work_guard(*impl->contexts.back()));
  }
  // Each worker's socket service (and its epoll descriptors) is made now: made lazily, at
  // the first connection a worker takes, it could fail with EMFILE inside a handler.
  for (auto& ctx : impl->contexts) WorkerSocket warm(ctx->get_executor());
  impl->acceptor = std::make_unique<tcp::acceptor>(*impl->contexts[0]);
  impl->accept_backoff = std::make_unique<asio::steady_timer>(*impl->contexts[0]);
  tcp::endpoint endpoint(address, host_port->second);
  impl->acceptor->open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor->bind(endpoint, ec);
  if (!ec) impl->acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", impl->options.listen, ": ", ec.message()));
  }
  auto bound = impl->acceptor->local_endpoint();
  server->port_ = bound.port();
  server->bound_ = bound.address().is_v6()
                       ? absl::StrCat("[", bound.address().to_string(), "]:", bound.port())
                       : absl::StrCat(bound.address().to_string(), ":", bound.port());
  impl->SetUpMetrics();
  impl->Accept();
  for (auto& ctx : impl->contexts) {
    impl->threads.emplace_back([c = ctx.get()] { c->run(); });
  }
  server->impl_ = std::move(impl);
  log::Info("http_listening", {{"listener", server->options_.name},
                               {"scheme", server->options_.scheme},
                               {"address", server->bound_}});
  return server;
}

absl::Status Server::ReloadTls() {
  if (!impl_ || !impl_->tls_enabled) {
    return absl::FailedPreconditionError(
        absl::StrCat("listener ", options_.name, " does not speak TLS"));
  }
  auto loaded = LoadServerTlsContext(options_.tls_cert_file, options_.tls_key_file);
  if (!loaded.ok()) {
    log::Warn("http_tls_reload_failed",
              {{"listener", options_.name}, {"error", loaded.status().message()}});
    return loaded.status();
  }
  {
    absl::MutexLock lock(&impl_->tls_mu);
    impl_->tls = *std::move(loaded);
  }
  log::Info("http_tls_reloaded",
            {{"listener", options_.name}, {"certificate", options_.tls_cert_file}});
  return absl::OkStatus();
}

const ServerCounters& Server::counters() const { return impl_->counters; }

void Server::Stop(std::chrono::milliseconds grace) {
  if (!impl_ || impl_->stopping.exchange(true)) return;
  Impl& impl = *impl_;
  asio::post(*impl.contexts[0], [&impl] {
    beast::error_code ec;
    impl.acceptor->close(ec);
    impl.accept_backoff->cancel();
  });
  std::vector<std::shared_ptr<SessionBase>> live;
  {
    absl::MutexLock lock(&impl.mu);
    for (auto& weak : impl.sessions) {
      if (auto s = weak.lock()) live.push_back(std::move(s));
    }
  }
  for (auto& s : live) {
    asio::post(s->executor(), [s] { s->Shutdown(); });
  }
  live.clear();
  {
    absl::MutexLock lock(&impl.mu);
    auto drained = [&impl]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(impl.mu) { return impl.active == 0; };
    impl.mu.AwaitWithTimeout(absl::Condition(&drained),
                             absl::Milliseconds(static_cast<int64_t>(grace.count())));
  }
  for (auto& g : impl.guards) g.reset();
  for (auto& c : impl.contexts) c->stop();
  for (auto& t : impl.threads) t.join();
  impl.threads.clear();
  log::Info("http_stopped", {{"listener", options_.name}});
}

Server::~Server() { Stop(std::chrono::milliseconds(0)); }

}  // namespace meshwork::http
