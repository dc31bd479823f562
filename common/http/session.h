// Internal to the HTTP server (server.h is the public API): one HTTP/1.1 connection.
//
// Threading: a Session lives on one worker's io_context for its whole life and every member
// function runs there (SessionBase's entry points are reached through session_bridge.h,
// which hops onto that worker). Only `broken` and the registry links are touched elsewhere.
// Its destructor may run on any thread: it only gives its slot back to the listener.
//
// Reading (session_read.cc): the TLS handshake, the request header under the idle and read
// timeouts, buffered bodies against the listener's byte budget, streamed bodies chunk by
// chunk, routing and the handler call. Writing (session_write.cc): whole answers, scatter-
// gather answers from shared chunks, chunked answers; a write is cut only when the client
// takes nothing for `send_timeout`. Both files instantiate the two transports explicitly.
#pragma once

#include <array>
#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "common/http/listener.h"
#include "common/http/session_bridge.h"
#include "common/http/short_read.h"
#include "common/net/ip_address.h"

namespace meshwork::http::server_internal {

// The size of a streamed body's read buffer (and of each chunk handed to a BodyReader).
inline constexpr size_t kBodyChunkBytes = 64 * 1024;

net::IpAddress ToIpAddress(const asio::ip::address& a);

// Appends the HTTP/1.1 header of an answer to `out` with one allocation at most: the status
// line, `head`'s fields except those the session owns (Content-Length, Transfer-Encoding,
// Connection, Server, Date), then Server, `date`, Content-Length (chunked when none; neither
// for 1xx, 204 and 304, which have no body) and `Connection: close` unless `keep`.
void AppendResponseHead(const beast_http::response_header<>& head, std::string_view date,
                        std::optional<uint64_t> content_length, bool keep, std::string& out);

// Fills `ctx` for `request` (moved into it) arriving on `server` from `peer` (path and query,
// listener, scheme, the client address through the trusted proxies); false when the target is
// not a path. Shared by HTTP/1.1 and HTTP/2 sessions.
bool FillRequestContext(RequestContext& ctx, Request&& request, Server::Impl& server,
                        const net::IpAddress& peer, uint16_t local_port,
                        asio::any_io_executor executor);

// One connection over `Stream` (PlainStream or TlsStream).
template <typename Stream>
class Session final : public SessionBase {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  // `worker` is the one whose io_context `args` (the socket) belong to; `tls` is the context
  // a TlsStream is built on (null for plain); `args` build the stream. The listener has
  // already counted this connection in `active`; the destructor gives it back.
  template <typename... Args>
  Session(Server::Impl* server, Worker* worker, std::shared_ptr<asio::ssl::context> tls,
          Args&&... args)
      : server_(server),
        worker_(worker),
        tls_(std::move(tls)),
        stream_(std::forward<Args>(args)...),
        buffer_(DecoderBufferBytes(server->limits, kBodyChunkBytes)),
        chunk_limit_(server->limits) {
    InitDeadlines(&worker->wheel, server->clock);
    boost::system::error_code ec;
    auto remote = Lowest().remote_endpoint(ec);
    if (!ec) peer_ = ToIpAddress(remote.address());
    auto local = Lowest().local_endpoint(ec);
    if (!ec) local_port_ = local.port();
    if constexpr (!kTls) {  // else its reads are Asio's (short_read.h)
      EnableShortReads(Lowest());
      reactor_ = &ShortReadReactorOf(Lowest());
    }
  }
  ~Session() override { server_->SessionClosed(); }

  // SessionBase
  void Start() override {
    asio::dispatch(stream_.get_executor(), [self = Self()] {
      if constexpr (kTls) {
        self->Handshake();
      } else {
        self->ReadHeader();
      }
    });
  }
  void Shutdown() override {
    close_after_response_ = true;
    // An idle connection waits in a header read (a new TLS one in its handshake), a closing
    // one drains what its client still sends: cancel it, and its handler closes.
    if (idle_ || handshaking_ || lingering_) CancelIo();
  }
  void Complete(Response response) override { Write(std::move(response)); }
  void CompleteBuffers(Response header, SharedBuffers body, uint64_t offset,
                       uint64_t length) override;
  void CompleteFile(Response header, std::shared_ptr<const OpenFile> file, uint64_t offset,
                    uint64_t length) override;
  void CompletePrepared(std::shared_ptr<const PreparedAnswer> answer,
                        const AnswerFields& extra) override;
  void ReadChunk(BodyReader::ChunkFn on_chunk) override;
  bool BeginChunked(Response header) override;
  void QueueChunk(std::shared_ptr<const std::string> data) override;
  asio::any_io_executor executor() override { return stream_.get_executor(); }
  bool OnWorker() override { return stream_.get_executor().running_in_this_thread(); }

 private:
  std::shared_ptr<Session> Self() {
    return std::static_pointer_cast<Session>(this->shared_from_this());
  }
  PlainStream& Lowest() { return beast::get_lowest_layer(stream_); }
  void CancelIo() {
    beast::error_code ec;
    Lowest().cancel(ec);
  }
  void OnDeadline() override { CancelIo(); }
  // Puts the socket in non-blocking mode for writes of our own (asio's reads already did,
  // as a rule: then no system call).
  void EnsureNonBlocking(beast::error_code& ec) {
    if (!Lowest().native_non_blocking()) Lowest().native_non_blocking(true, ec);
  }

  // session_read.cc
  void Handshake();
  // S-24: gives the connection (and the bytes read so far) to an HTTP/2 session.
  void HandOverToH2();
  void ReadHeader();
  // Reads more of a request header into buffer_ (the idle or read deadline already set).
  void ReadMoreHeader();
  // Reads the header in buffer_: the common form at once (request_head.h), else with
  // Beast's parser: the header whole → OnHeader; else reads more.
  void ParseHeader();
  // Makes parser_ for the request being read (the header limit, no body limit yet).
  void StartParser();
  void OnHeader(beast::error_code ec, size_t n);
  void OnHeaderError(beast::error_code ec);  // OnHeader's answer to a read that failed
  // A streamed route's header is complete: answers 100 Continue if asked, then calls it.
  void StartStreaming(const StreamingHandler* handler, std::vector<std::string> params);
  void ReadBody();
  void OnBody(beast::error_code ec, size_t n);
  void Dispatch();
  // Fills ctx_ from the request header; false when the target is not a path (answered).
  bool PrepareContext(Request&& request);
  void DispatchStreaming(const StreamingHandler* handler, std::vector<std::string> params);
  void Close();
  // Shuts the send side and closes — after Linger() when a request body was left unread (a
  // refusal before it was read, or an answer before a streamed body's end).
  void CloseSocket() {
    beast::error_code ec;
    ClearDeadline();
    Lowest().shutdown(tcp::socket::shutdown_send, ec);
    if ((unread_body_ || !body_done_) && !lingering_ && !ec && !server_->stopping.load()) {
      lingering_ = true;
      if (reading_body_) CancelIo();  // its completion sees lingering_ and leaves the deadline
      return Linger(0);
    }
    Lowest().close(ec);
  }
  // RFC 9112 §9.6: a socket closed with bytes unread answers the client's further bytes with
  // a reset, which can take our answer with it before the client reads it (a 401, 404 or 413
  // sent before the body it refused). So, send side shut, what arrives is read into a
  // per-thread scratch buffer and dropped until the client closes, for at most kLingerTime
  // (or the read timeout) and kLingerBytes; a server stopping cancels it (Shutdown).
  void Linger(uint64_t drained);

  // session_write.cc
  void WriteFinal(Response response);  // answers a transport error and closes
  void Write(Response response);
  // Writes all of `buffers` (kept alive by the caller until `done` runs), re-arming the send
  // deadline whenever bytes move; then `done(ec, bytes_written)`.
  template <typename Buffers, typename Done>
  void SendAll(const Buffers& buffers, Done done);
  // Sends whole_ (a whole answer's header and body), then FinishWhole.
  void SendWhole(bool keep);
  // After a whole answer: lets its body go; reads the next request or closes.
  void FinishWhole(beast::error_code ec, size_t n, bool keep);
  struct Deferred {
    beast::error_code ec;
    size_t n = 0;
    bool keep = false;
  };
  // FinishWhole for an answer sent at once inside its handler's call, run when the handler
  // has returned (Dispatch); posted now and then (a stack bound).
  void FinishInline(Deferred done);
  void PumpChunks();
  // Sends bytes of `file` from `offset` with sendfile(2) (plain connections).
  void SendFileBody(std::shared_ptr<const OpenFile> file, uint64_t offset, uint64_t length,
                    bool keep);
  // Whether the connection stays open after the answer now being written.
  bool KeepAfterAnswer() const {
    return keep_alive_ && body_done_ && !close_after_response_ && !server_->stopping.load();
  }
  // Counts the answer now starting for the request started at `started_`.
  // (and logs it when the listener keeps an access log; `bytes` unknown for chunked answers).
  void CountAnswer(unsigned status, std::optional<uint64_t> bytes);

  Server::Impl* server_;
  Worker* worker_;
  std::shared_ptr<asio::ssl::context> tls_;  // before stream_, which refers to it
  Stream stream_;
  beast::flat_buffer buffer_;     // capped: see DecoderBufferBytes
  ChunkHeaderLimit chunk_limit_;  // the parsers refer to it
  BudgetHold body_hold_;          // a buffered body's bytes against the listener's cap
  // A request header is read by ReadSimpleRequestHead (request_head.h) into simple_request_
  // (simple_ true) when it has the common form, else by parser_ (made for that request).
  std::optional<beast_http::request_parser<beast_http::string_body>> parser_;
  Request simple_request_;
  bool simple_ = false;
  // A streamed body (Router::AddStreaming): its parser, chunk buffer and state.
  std::optional<beast_http::request_parser<beast_http::buffer_body>> stream_parser_;
  std::unique_ptr<uint8_t[]> chunk_;
  bool body_done_ = true;
  // The header being written (its capacity is kept from answer to answer) and a whole
  // answer's body (or prepared_'s); the buffers of a whole answer point into both.
  std::string head_;
  std::string body_;
  std::array<asio::const_buffer, 2> whole_;
  std::shared_ptr<const PreparedAnswer> prepared_;  // a prepared answer's body being written
  // A scatter-gather answer in flight: its buffer list (header, then pieces of the chunks)
  // and the chunks it points into.
  std::vector<asio::const_buffer> gather_;
  SharedBuffers gather_body_;
  // A chunked response in progress, and the chunks waiting (null = the end).
  bool chunked_active_ = false;
  std::deque<std::shared_ptr<const std::string>> chunks_;
  bool chunk_writing_ = false;
  bool chunked_keep_ = false;
  // How the answer's body goes (RFC 9112): in chunks; not at all (HEAD: the header GET would
  // have, then the next request); or as raw bytes ended by closing (an HTTP/1.0 client, to
  // which Transfer-Encoding must not be sent).
  enum class ChunkMode { kChunked, kHeaderOnly, kUntilClose } chunk_mode_ = ChunkMode::kChunked;
  bool http10_ = false;  // the request being answered is HTTP/1.0
  // The request being answered; reused from request to request when no one else holds it.
  std::shared_ptr<RequestContext> ctx_;
  bool ctx_filled_ = false;  // ctx_ describes the request being answered (PrepareContext ran)
  // What every Responder of this connection answers through (SessionSink::Share).
  SessionSink sink_{this};
  // A handler is running (Dispatch): an answer it sent whole at once is finished when it
  // returns (deferred_), never inside its call.
  bool in_handler_ = false;
  std::optional<Deferred> deferred_;
  unsigned inline_finishes_ = 0;
  Router::Match match_;  // the route OnHeader found for the request being read
  net::IpAddress peer_;
  uint16_t local_port_ = 0;
  bool idle_ = false;
  bool header_timed_ = false;  // the read deadline of the header being read is set
  bool handshaking_ = false;
  bool handshake_done_ = false;
  bool first_read_ = true;               // h2c by prior knowledge shows in the first bytes only
  ShortReadReactor* reactor_ = nullptr;  // a plain socket's, for AsyncReadShort
  bool close_after_response_ = false;
  bool unread_body_ = false;   // closing leaves a request body unread: Linger() first
  bool lingering_ = false;     // Linger() runs: no other read, its deadline is the only one
  bool reading_body_ = false;  // a ReadChunk read is in flight
  bool keep_alive_ = true;
  Verb method_ = Verb::unknown;
  std::string method_text_;
  std::chrono::steady_clock::time_point started_;
};

// Instantiated in session_read.cc and session_write.cc, each for the members it defines.
extern template class Session<PlainStream>;
extern template class Session<TlsStream>;

}  // namespace meshwork::http::server_internal
