// The server side of a TLS connection (T-6, S-24, P-15): OpenSSL over a worker's socket through
// a BIO of our own instead of asio::ssl::stream's memory-BIO pair.
//
// Why not asio/Beast's ssl_stream: it copies every record twice (SSL's buffer → the BIO pair →
// the engine's output buffer), sends each record with a write of its own, and Beast's flat_stream
// in front of it writes a gather's small first piece alone — an HTTP/2 DATA frame's 9-byte header
// became a TLS record and a send of its own before every 16 KiB payload. Here:
//   - a write packs the gather's pieces into whole records (16 KiB of plaintext each: small
//     pieces are copied together, a large piece's whole records are encrypted where it lies);
//   - the records are appended by the BIO to one output buffer, sent with one write per up to
//     kPackBytes of plaintext.
// Reads take ciphertext from the socket into a fixed input buffer that the BIO hands to OpenSSL.
//
// Contract: the same as an asio AsyncStream — at most one read and one write outstanding, no
// read or write during a handshake or shutdown. All of a connection's operations and handlers
// run on its worker's single thread (the socket's executor); completions that are ready at
// once are posted, never run inside the initiating call. Output that OpenSSL produces while
// reading (an alert) waits for the next write or shutdown. TLS 1.2 renegotiation is refused by
// the context (SSL_OP_NO_RENEGOTIATION); a peer that makes OpenSSL answer while it never reads
// (alerts to renegotiation attempts, key updates) fails its read once that unsent output
// passes kReadOutputBytes, and a read that takes kPackBytes of ciphertext without plaintext
// yields the worker before taking more. A shutdown or write while a send is in flight (a
// caller's bug) completes with asio::error::in_progress. Errors: the peer's close_notify reads as
// asio::error::eof, a TCP end without it as asio::ssl::error::stream_truncated, OpenSSL's
// failures as errors of asio's ssl category.
#pragma once

#include <openssl/ssl.h>

#include <cstddef>
#include <memory>
#include <string>
#include <utility>

#include "boost/asio.hpp"
#include "boost/asio/ssl.hpp"

namespace meshwork::http::tls_internal {

namespace asio = boost::asio;
using ErrorCode = boost::system::error_code;

// Plaintext per TLS record (RFC 8446 §5.1's maximum) and per write operation.
inline constexpr size_t kRecordBytes = 16384;
inline constexpr size_t kPackBytes = 4 * kRecordBytes;
// Output OpenSSL may produce while reading, unsent, before the read fails.
inline constexpr size_t kReadOutputBytes = kRecordBytes;

// OpenSSL's half: the SSL object, its BIO and the ciphertext buffers. Not movable (the BIO
// points at it); TlsStream holds it on the heap.
class TlsEngine {
 public:
  explicit TlsEngine(SSL_CTX* ctx);
  ~TlsEngine();
  TlsEngine(const TlsEngine&) = delete;
  TlsEngine& operator=(const TlsEngine&) = delete;

  SSL* ssl() const { return ssl_; }

  // One step of OpenSSL. `want_input`: it needs more ciphertext first (then `ec` is clear).
  struct Step {
    bool want_input = false;
    size_t bytes = 0;
    ErrorCode ec;
  };
  Step Handshake();
  Step Read(asio::mutable_buffer into);
  ErrorCode Shutdown();  // queues our close_notify

  // A write operation: StartPack(), then Pack() for each piece of its plaintext — which
  // encrypts into the output while the operation holds under kPackBytes and returns how much
  // it took —, then Seal(), which closes the last partial record.
  void StartPack() { packed_ = 0; }
  size_t Pack(const char* data, size_t size);
  ErrorCode Seal();
  size_t packed() const { return packed_; }

  // Ciphertext from the socket: the space to read into and how much was read.
  asio::mutable_buffer InputSpace();
  void Received(size_t n) { in_end_ += n; }

  // Ciphertext to the socket. TakeOutput moves what was produced into the sending buffer
  // (one send at a time: crashes if one is in flight) and returns it; InFlight is that buffer;
  // Sent forgets it.
  bool HasOutput() const { return !produced_.empty(); }
  const std::string& TakeOutput();
  const std::string& InFlight() const { return sending_; }
  bool SendInFlight() const { return in_flight_; }
  void Sent();

  // Lets go of the ciphertext buffers' memory while the connection waits for its peer with
  // nothing buffered (with SSL_MODE_RELEASE_BUFFERS, OpenSSL does the same with its own), so
  // a kept-alive or held connection costs about the SSL object alone.
  void TrimIdle();
  // The ciphertext buffers' memory now (tests).
  size_t BufferBytes() const;

  // Writes what is produced without waiting (a non-blocking send, best effort: the alert before
  // a close).
  void SendNowBestEffort(int fd);

 private:
  static int BioWrite(BIO* bio, const char* data, size_t size, size_t* written);
  static int BioRead(BIO* bio, char* data, size_t size, size_t* read);
  ErrorCode Failure(int ret);
  ErrorCode Encrypt(const char* data, size_t size);

  SSL* ssl_ = nullptr;
  std::unique_ptr<char[]> in_;  // kInputBytes, allocated at the first read
  size_t in_begin_ = 0, in_end_ = 0;
  std::string produced_;  // records OpenSSL wrote, not yet handed to the socket
  std::string sending_;   // records handed to the socket's one send in flight
  std::string staging_;   // plaintext of the record being packed (< kRecordBytes)
  size_t packed_ = 0;     // plaintext taken by the current write operation
  bool in_flight_ = false;
  ErrorCode error_;  // the first failure of a write operation (sticky)
};

// Posts `handler(args...)` to `ex`: completions never run inside their initiating call.
template <typename Executor, typename Handler, typename... Args>
void PostCompletion(const Executor& ex, Handler&& handler, Args... args) {
  asio::post(ex, [h = std::forward<Handler>(handler), args...]() mutable { h(args...); });
}

}  // namespace meshwork::http::tls_internal

namespace meshwork::http {

// A server-side TLS stream over a socket of type `Socket` (see the file comment).
template <typename Socket>
class BasicTlsStream {
 public:
  using executor_type = typename Socket::executor_type;
  using next_layer_type = Socket;
  using lowest_layer_type = Socket;
  using ErrorCode = tls_internal::ErrorCode;

  BasicTlsStream(Socket socket, boost::asio::ssl::context& ctx)
      : socket_(std::move(socket)),
        engine_(std::make_unique<tls_internal::TlsEngine>(ctx.native_handle())) {
    ErrorCode ignored;  // reads try the socket first (ReadOp); asio's own ops are unaffected
    socket_.non_blocking(true, ignored);
  }
  BasicTlsStream(BasicTlsStream&&) = default;  // only between operations

  executor_type get_executor() { return socket_.get_executor(); }
  Socket& next_layer() { return socket_; }
  SSL* native_handle() { return engine_->ssl(); }
  // The stream's own ciphertext buffers (not OpenSSL's), in bytes.
  size_t buffer_bytes() const { return engine_->BufferBytes(); }

  template <typename Handler>  // void(ErrorCode)
  void async_handshake(boost::asio::ssl::stream_base::handshake_type, Handler&& handler) {
    HandshakeOp<std::decay_t<Handler>>{this, std::forward<Handler>(handler)}.Next(true);
  }

  // Sends our close_notify; does not wait for the peer's (RFC 8446 §6.1 allows it).
  template <typename Handler>  // void(ErrorCode)
  void async_shutdown(Handler&& handler) {
    if (engine_->SendInFlight()) {  // a write is still sending: the caller closes instead
      return tls_internal::PostCompletion(get_executor(), std::forward<Handler>(handler),
                                          ErrorCode(boost::asio::error::in_progress));
    }
    ErrorCode ec = engine_->Shutdown();
    if (ec || !engine_->HasOutput()) {
      return tls_internal::PostCompletion(get_executor(), std::forward<Handler>(handler), ec);
    }
    SendOp<std::decay_t<Handler>, false>{this, std::forward<Handler>(handler), 0}.Start();
  }

  template <typename MutableBuffers, typename Handler>  // void(ErrorCode, size_t)
  void async_read_some(const MutableBuffers& buffers, Handler&& handler) {
    boost::asio::mutable_buffer into;
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers); ++it) {
      if (it->size() > 0) {
        into = *it;
        break;
      }
    }
    ReadOp<std::decay_t<Handler>>{this, into, std::forward<Handler>(handler)}.Next(true);
  }

  template <typename ConstBuffers, typename Handler>  // void(ErrorCode, size_t)
  void async_write_some(const ConstBuffers& buffers, Handler&& handler) {
    if (engine_->SendInFlight()) {  // a shutdown is sending: no more data after close_notify
      return tls_internal::PostCompletion(get_executor(), std::forward<Handler>(handler),
                                          ErrorCode(boost::asio::error::in_progress), size_t{0});
    }
    engine_->StartPack();
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers); ++it) {
      const auto* data = static_cast<const char*>(it->data());
      size_t size = it->size();
      size_t took = engine_->Pack(data, size);
      if (took < size) break;  // the operation is full
    }
    ErrorCode ec = engine_->Seal();
    size_t packed = engine_->packed();
    if (ec || !engine_->HasOutput()) {
      return tls_internal::PostCompletion(get_executor(), std::forward<Handler>(handler), ec,
                                          ec ? size_t{0} : packed);
    }
    SendOp<std::decay_t<Handler>, true>{this, std::forward<Handler>(handler), packed}.Start();
  }

 private:
  // Sends everything produced (also what a read produced meanwhile), then completes with
  // `bytes` (a write: void(ErrorCode, size_t)) or without (a shutdown: void(ErrorCode)).
  template <typename Handler, bool kWrite>
  struct SendOp {
    BasicTlsStream* s;
    Handler handler;
    size_t bytes;
    size_t offset = 0;

    void Start() {
      offset = 0;
      const std::string& out = s->engine_->TakeOutput();
      s->socket_.async_write_some(boost::asio::buffer(out), std::move(*this));
    }
    void operator()(ErrorCode ec, size_t n) {
      if (!ec) {
        offset += n;
        const std::string& out = s->engine_->InFlight();
        if (offset < out.size()) {
          auto rest = boost::asio::buffer(out.data() + offset, out.size() - offset);
          return s->socket_.async_write_some(rest, std::move(*this));
        }
        s->engine_->Sent();
        if (s->engine_->HasOutput()) return Start();
      } else {
        s->engine_->Sent();
      }
      if constexpr (kWrite) {
        handler(ec, ec ? size_t{0} : bytes);
      } else {
        handler(ec);
      }
    }
  };

  template <typename Handler>
  struct ReadOp {
    BasicTlsStream* s;
    boost::asio::mutable_buffer into;
    Handler handler;

    // Decrypts what is there; reads the socket (without waiting) when OpenSSL needs more
    // ciphertext, and only when it has none waits for it with no buffer held.
    void Next(bool initiating) {
      size_t taken = 0;  // ciphertext read by this call without plaintext coming out
      for (;;) {
        tls_internal::TlsEngine::Step step;
        if (into.size() > 0) step = s->engine_->Read(into);
        if (!step.want_input) return Complete(initiating, step.ec, step.bytes);
        if (taken >= tls_internal::kPackBytes) {
          // A peer that streams records with no data in them (alerts, handshake noise)
          // does not hold the worker: the rest waits behind the worker's other work.
          return boost::asio::post(s->get_executor(),
                                   [op = std::move(*this)]() mutable { op.Next(false); });
        }
        ErrorCode ec;
        size_t n = s->socket_.read_some(s->engine_->InputSpace(), ec);
        if (ec == boost::asio::error::would_block || ec == boost::asio::error::try_again) break;
        if (ec) return Complete(initiating, Truncated(ec), 0);
        s->engine_->Received(n);
        taken += n;
      }
      // An idle connection keeps no ciphertext buffers while it waits.
      s->engine_->TrimIdle();
      s->socket_.async_wait(Socket::wait_read, std::move(*this));
    }
    void Complete(bool initiating, ErrorCode ec, size_t n) {
      if (initiating) {
        return tls_internal::PostCompletion(s->get_executor(), std::move(handler), ec, n);
      }
      handler(ec, n);
    }
    void operator()(ErrorCode ec) {  // the socket is readable (or closed)
      if (ec) return handler(ec, size_t{0});
      Next(false);
    }
  };

  template <typename Handler>
  struct HandshakeOp {
    BasicTlsStream* s;
    Handler handler;

    void Next(bool initiating) {
      tls_internal::TlsEngine::Step step = s->engine_->Handshake();
      if (step.ec) {
        s->engine_->SendNowBestEffort(s->socket_.native_handle());  // the alert
        if (initiating) {
          return tls_internal::PostCompletion(s->get_executor(), std::move(handler), step.ec);
        }
        return handler(step.ec);
      }
      if (s->engine_->HasOutput()) return Send(step.want_input);
      if (!step.want_input) {
        if (initiating) {
          return tls_internal::PostCompletion(s->get_executor(), std::move(handler), ErrorCode{});
        }
        return handler(ErrorCode{});
      }
      Receive();
    }
    // Our flight goes out whole before we read the peer's next one (or complete).
    void Send(bool then_receive) {
      pending_input = then_receive;
      SendOp<HandshakeOp, false>{s, std::move(*this), 0}.Start();
    }
    void Receive() { s->socket_.async_read_some(s->engine_->InputSpace(), std::move(*this)); }
    void operator()(ErrorCode ec) {  // our flight is sent
      if (ec) return handler(Truncated(ec));
      if (pending_input) return Receive();
      handler(ErrorCode{});
    }
    void operator()(ErrorCode ec, size_t n) {  // the peer's bytes arrived
      if (ec) return handler(Truncated(ec));
      s->engine_->Received(n);
      Next(false);
    }
    bool pending_input = false;
  };

  // A TCP end in the middle of the TLS stream is a truncation (as asio::ssl reports it).
  static ErrorCode Truncated(ErrorCode ec) {
    if (ec == boost::asio::error::eof) return boost::asio::ssl::error::stream_truncated;
    return ec;
  }

  Socket socket_;
  std::unique_ptr<tls_internal::TlsEngine> engine_;
};

}  // namespace meshwork::http
