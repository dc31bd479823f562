// Internal to the HTTP server (server.h is the public API): one HTTP/2 connection (S-24).
// A plain connection whose first bytes are the HTTP/2 preface (h2c by prior knowledge), or a
// TLS connection that negotiated ALPN "h2", is handed over by its HTTP/1.1 Session to an
// H2Session, which reads frames into an H2Connection (h2_connection.h: framing, limits) and
// runs each request through the same router and handlers as HTTP/1.1. Each stream gets its
// own Responder sink: whole, scatter-gather (its chunks shared, a Range as a slice of them),
// file (read) and chunked answers all become stream data; a held request is one open stream.
//
// Threading: like Session, everything runs on the connection's worker; sinks and chunked
// writers hop there (asio::dispatch). Timeouts (R-3, ArmTimer): the read timeout from each
// request's HEADERS until the request has ended; the idle timeout while no stream is open;
// the send timeout while an answer is held back by the client's flow control and while a
// write makes no progress; none while streams only wait for their handlers (each bounds its
// own wait). Routes' HeadGates are not run over HTTP/2 (bodies there are bounded per
// connection instead). Streamed request bodies (AddStreaming routes, the publish listener's
// uploads) are not taken over HTTP/2: 501.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/http/byte_budget.h"
#include "common/http/h2_connection.h"
#include "common/http/listener.h"

namespace meshwork::http::server_internal {

template <typename Stream>
class H2Session final : public SessionBase {
 public:
  // Takes over `stream` (a connection the listener counts in `active`: this session gives
  // the slot back when it is destroyed) and the bytes already read from it.
  H2Session(Server::Impl* server, Worker* worker, std::shared_ptr<asio::ssl::context> tls,
            Stream stream, std::string already_read, net::IpAddress peer, uint16_t local_port);
  ~H2Session() override;

  // SessionBase: the connection-wide entry points. The per-request ones belong to a stream's
  // sink here and are never called on the session itself.
  void Start() override;
  void Shutdown() override;
  void Complete(Response) override { Unreachable(); }
  void CompleteBuffers(Response, SharedBuffers, uint64_t, uint64_t) override { Unreachable(); }
  void CompleteFile(Response, std::shared_ptr<const OpenFile>, uint64_t, uint64_t) override {
    Unreachable();
  }
  void ReadChunk(BodyReader::ChunkFn) override { Unreachable(); }
  bool BeginChunked(Response) override { Unreachable(); }
  void QueueChunk(std::shared_ptr<const std::string>) override { Unreachable(); }
  asio::any_io_executor executor() override { return stream_.get_executor(); }
  bool OnWorker() override { return stream_.get_executor().running_in_this_thread(); }

  // On the worker: what a stream's sink and chunked writer do.
  // With `length`: only [offset, offset+length) of `body` (a Range answer).
  void Answer(int32_t id, Response header, SharedBuffers body, uint64_t offset = 0,
              std::optional<uint64_t> length = std::nullopt);
  void AnswerFile(int32_t id, Response header, std::shared_ptr<const OpenFile> file,
                  uint64_t offset, uint64_t length);
  // `gone` is set when the stream ends before the answer does (the client reset it).
  void StartStream(int32_t id, Response header, std::shared_ptr<std::atomic<bool>> gone);
  void StreamData(int32_t id, std::shared_ptr<const std::string> chunk);
  bool StreamOpen(int32_t id) const { return h2_.StreamOpen(id); }

 private:
  [[noreturn]] static void Unreachable();
  std::shared_ptr<H2Session> Self() {
    return std::static_pointer_cast<H2Session>(this->shared_from_this());
  }
  PlainStream& Lowest() { return beast::get_lowest_layer(stream_); }
  void CancelIo() {
    beast::error_code ec;
    Lowest().cancel(ec);
  }
  void OnDeadline() override {
    armed_at_.reset();
    CancelIo();
  }
  void OnRequest(int32_t id, Request request);
  // The connection's own 431/413: answered like any other (Server, Date, counted, logged).
  void OnRefusal(int32_t id, std::string_view method, Response refusal);
  void CountAnswer(int32_t id, unsigned status, std::optional<uint64_t> bytes);
  void Read();
  bool Receive(std::string_view bytes);
  void Flush();
  void Close();
  // the connection's deadline by what it waits for, counted from when that wait began
  // (frames the client sends, and the server's own writes — PING ACKs — do not restart it):
  // no stream → idle_timeout; a request still arriving → read_timeout; an answer the
  // client's flow control holds back → send_timeout (restarted by each write that makes
  // progress: a window opened); only handlers at work (a held reload) → none. A write in
  // flight has send_timeout, re-armed by its progress (Flush).
  void ArmTimer();
  void ArmWriteDeadline();
  enum class Wait { kNone, kIdle, kRequest, kBlocked, kHandlers };
  // What the connection waits for now (wait_, from when: wait_began_) and when that wait
  // runs out; nullopt when only handlers are at work.
  std::optional<std::chrono::steady_clock::time_point> WaitDeadline();
  // Sets the deadline to `at` (nullopt: none) unless it is set there already: the wheel
  // counts a deadline from when it is set, so setting the same one again would push it back.
  void ArmAt(std::optional<std::chrono::steady_clock::time_point> at);

  Server::Impl* server_;
  Worker* worker_;
  std::shared_ptr<asio::ssl::context> tls_;  // before stream_, which refers to it
  Stream stream_;
  std::string pending_input_;
  net::IpAddress peer_;
  uint16_t local_port_;
  // The request bodies h2_ buffers, held against the listener's cap (kept equal after each
  // Receive).
  BudgetHold body_hold_;
  H2Connection h2_;
  // Each request until its answer is in: its context (handlers keep references to it) and
  // what meshwork_http_requests_total counts it by.
  struct Pending {
    std::shared_ptr<RequestContext> ctx;
    std::string method;
    std::chrono::steady_clock::time_point started;
    bool counted = false;
    // A streamed answer's flag for its writer's closed(): set when the stream is gone.
    std::shared_ptr<std::atomic<bool>> gone;
  };
  uint64_t resets_seen_ = 0;  // h2_.resets_received() when pending_ was last checked
  std::map<int32_t, Pending> pending_;
  std::string read_buffer_;
  H2Output writing_;  // the frames being written (kept alive for async_write)
  std::vector<asio::const_buffer> gather_;
  bool write_in_flight_ = false;
  bool write_carries_data_ = false;  // the write in flight holds DATA payload
  bool answered_ = false;            // an answer was submitted since the last write ended
  Wait wait_ = Wait::kNone;          // what the connection waits for (besides a write in flight)
  std::chrono::steady_clock::time_point wait_began_{};             // DeadlineNow() when it began
  std::optional<std::chrono::steady_clock::time_point> armed_at_;  // the deadline set now
  bool receiving_ = false;
  bool closing_ = false;
  bool closed_ = false;
};

// Whether `bytes` (the first bytes of a plain connection) begin the HTTP/2 client preface.
bool StartsWithH2Preface(std::string_view bytes);

extern template class H2Session<PlainStream>;
extern template class H2Session<TlsStream>;

}  // namespace meshwork::http::server_internal
