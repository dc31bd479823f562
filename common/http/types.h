// The request/response types every Meshwork HTTP handler sees.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "boost/asio/any_io_executor.hpp"
#include "boost/beast/http.hpp"
#include "common/net/ip_address.h"

namespace meshwork::http {

class ByteBudget;
class AnswerFields;
class PreparedAnswer;

namespace beast_http = boost::beast::http;
using Request = beast_http::request<beast_http::string_body>;
using Response = beast_http::response<beast_http::string_body>;
using Status = beast_http::status;
using Verb = beast_http::verb;

// What a handler knows about the request besides its bytes. Owned by the connection; valid
// until the handler's Responder has been used. A connection reuses one for its requests: a
// field added here is also reset in Session::ReadHeader (a static_assert on the size there
// catches most additions, not one that fits in padding).
struct RequestContext {
  Request request;
  std::string_view path;            // the target without the query, percent-encoding kept
  std::string_view query;           // without the '?'
  std::vector<std::string> params;  // captured {name} segments of the matched route, in order
  net::IpAddress peer;              // the socket peer
  net::IpAddress client;            // per T-2: the peer, or the last X-Forwarded-For element
  bool peer_trusted = false;        // the peer is inside the cluster's trusted proxies
  std::string listener;             // listener name ("http", "publish", ...)
  std::string scheme;               // the listener's own scheme ("http" or "https")
  uint16_t local_port = 0;
  // The connection's worker: where a handler that waits (hold-until-publish) schedules its
  // timers and completions.
  boost::asio::any_io_executor executor;
  // The listener's cap on bytes held by unfinished uploads (byte_budget.h): a streaming
  // handler that keeps the body it reads reserves against it. Null when uncapped.
  ByteBudget* upload_budget = nullptr;

  // The scheme the viewer used: the listener's, or `https` when a trusted peer says so with
  // X-Forwarded-Proto (T-6, O-13).
  std::string ViewerScheme() const;
  // Value of query parameter `name` (not decoded beyond '+'/'%XX'); empty optional if absent.
  std::optional<std::string> QueryParam(std::string_view name) const;
  // The same without a copy: a view into the query, or into `*storage` when the value had to
  // be decoded; valid while both are.
  std::optional<std::string_view> QueryParam(std::string_view name, std::string* storage) const;
};

// A response sent in pieces with chunked transfer (Responder::StartChunked), for objects
// still being produced (the DASH segment in progress, S-16). Thread-safe: calls hop onto the
// connection's worker and are written in order. Finish() ends the response; a writer dropped
// without it finishes too. After the connection breaks, writes are dropped and closed()
// turns true, so the producer can stop. Abort() ends it as broken instead — HTTP/1.1 closes
// the connection after what was queued, without the last chunk; h2 resets the stream — so a
// client never takes a body cut short (an upstream that failed mid-object) for a whole one.
class ChunkedWriter {
 public:
  virtual ~ChunkedWriter() = default;
  virtual void Write(std::shared_ptr<const std::string> data) = 0;
  virtual void Finish() = 0;
  virtual void Abort() = 0;
  virtual bool closed() const = 0;
};

// The chunk a writer queues for Abort() (compared by address; never sent).
const std::shared_ptr<const std::string>& AbortChunk();

// A body kept as a list of shared chunks (media objects stored in 256 KiB pieces), sent by
// Responder::SendBuffers straight from the chunks without joining them. `size` is the sum of
// the chunk sizes; Append keeps it so.
struct SharedBuffers {
  std::vector<std::shared_ptr<const std::string>> chunks;
  uint64_t size = 0;

  void Append(std::shared_ptr<const std::string> chunk) {
    if (!chunk) return;
    size += chunk->size();
    chunks.push_back(std::move(chunk));
  }
  // Calls fn(std::string_view) for each contiguous piece of bytes [offset, offset+length),
  // in order; pieces past the end of the chunks are not visited. Null chunks count as empty.
  template <typename Fn>
  void ForEachPiece(uint64_t offset, uint64_t length, Fn&& fn) const {
    for (const auto& chunk : chunks) {
      if (length == 0) return;
      if (!chunk) continue;
      uint64_t n = chunk->size();
      if (offset >= n) {
        offset -= n;
        continue;
      }
      uint64_t take = std::min(n - offset, length);
      fn(std::string_view(chunk->data() + offset, static_cast<size_t>(take)));
      offset = 0;
      length -= take;
    }
  }
};

// A file a response body is sent from (Responder::SendFile), open for reading; closes the
// descriptor when the last reference goes. Immutable: any thread may share it.
class OpenFile {
 public:
  // Takes ownership of `fd` (from open(2)); `size` is its size as the caller found it.
  OpenFile(int fd, uint64_t size) : fd_(fd), size_(size) {}
  ~OpenFile();
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  int fd() const { return fd_; }
  uint64_t size() const { return size_; }

 private:
  int fd_;
  uint64_t size_;
};

// Completes one request. Move-only; Send() may be called once from any thread: the
// response is posted to the connection's own worker. A Responder dropped without Send()
// answers 500, so a forgotten path never hangs a client.
class Responder {
 public:
  class Sink {
   public:
    virtual ~Sink() = default;
    virtual void Complete(Response response) = 0;
    // Sends `header` (status and fields; its body is ignored) with chunked transfer.
    virtual std::shared_ptr<ChunkedWriter> StartChunked(Response header) { return nullptr; }
    // Sends `header` (status and fields; its body is ignored) with bytes [offset,
    // offset+length) of `body`, already clamped to the chunks. The default copies the bytes
    // into a string body and calls Complete; the server's sink writes the chunks directly.
    virtual void CompleteBuffers(Response header, SharedBuffers body, uint64_t offset,
                                 uint64_t length);
    // Sends `header` with bytes [offset, offset+length) of `file`, already clamped to its
    // size. The default reads them (pread) and calls CompleteBuffers; the server's sink
    // sends them with sendfile(2) on plain connections.
    virtual void CompleteFile(Response header, std::shared_ptr<const OpenFile> file,
                              uint64_t offset, uint64_t length);
    // Sends a prepared answer with `extra` fields. The default sends its Response form
    // through Complete, or CompleteBuffers for a shared body (CompleteAsResponse); the
    // server's HTTP/1.1 sink writes the prepared bytes.
    virtual void CompletePrepared(std::shared_ptr<const PreparedAnswer> answer,
                                  const AnswerFields& extra);
  };
  explicit Responder(std::shared_ptr<Sink> sink) : sink_(std::move(sink)) {}
  Responder(Responder&&) = default;
  Responder& operator=(Responder&&) = default;
  Responder(const Responder&) = delete;
  Responder& operator=(const Responder&) = delete;
  ~Responder();

  void Send(Response response);
  // Answers with `header` and a chunked body written through the returned writer (instead of
  // Send). Null when this responder cannot stream (already answered).
  std::shared_ptr<ChunkedWriter> StartChunked(Response header);
  // Answers (instead of Send) with `header` (status and fields; its string body is ignored)
  // and Content-Length `length`, the body being bytes [offset, offset+length) of `body`,
  // written from the chunks themselves (scatter-gather, L-17): the payload is not copied, and
  // the chunks are held until the write completes. A slice past the end of the chunks is cut
  // to what they hold. A HEAD request gets the header alone, with that Content-Length.
  void SendBuffers(Response header, SharedBuffers body, uint64_t offset, uint64_t length);
  // Answers (instead of Send) with `header` and Content-Length `length`, the body being
  // bytes [offset, offset+length) of `file` (cut to its size): on a plain connection the
  // kernel copies them from the page cache to the socket (sendfile(2), zero copy); over TLS
  // they are read in 256 KiB pieces first. The file is held open until the write ends. A
  // file found shorter than its size while sending closes the connection (the promised
  // length cannot be kept). A HEAD request gets the header alone.
  void SendFile(Response header, std::shared_ptr<const OpenFile> file, uint64_t offset,
                uint64_t length);
  // Answers (instead of Send) with `answer` and the per-request fields `extra` (P-5, P-3):
  // over HTTP/1.1 the prepared header bytes, `extra`, Server, Date and the framing fields are
  // written with the body in one write; no Response is built.
  void SendPrepared(std::shared_ptr<const PreparedAnswer> answer, const AnswerFields& extra);
  bool sent() const { return sink_ == nullptr; }

 private:
  std::shared_ptr<Sink> sink_;
};

using Handler = std::function<void(RequestContext& ctx, Responder responder)>;

// A route's check of a request's header before its body is read (Router::Add): returns the
// answer that refuses the request (the connection then closes, its body unread), or nothing
// to read the body and call the handler. Runs on the connection's worker; it must not block.
// It spares the listener's body budget a body that the handler would refuse unread —
// an admin API call without a valid token.
using HeadGate = std::function<std::optional<Response>(const Request& head)>;

// The body of a request whose route streams it (Router::AddStreaming): read in chunks as it
// arrives, without a size limit, for continuous uploads (an encoder pushing MPEG-TS) and
// large objects. Each Read() delivers the next chunk on the connection's worker; the bytes
// are valid only during the callback. `done` marks the end of the body. A non-OK status
// (timeout between chunks, broken connection) ends the body; no read follows it.
class BodyReader {
 public:
  using ChunkFn =
      std::function<void(const absl::Status& status, std::span<const uint8_t> bytes, bool done)>;
  virtual ~BodyReader() = default;
  // One Read() at a time; call the next from the callback (or later, from any thread).
  virtual void Read(ChunkFn on_chunk) = 0;
};

// `ctx.request` carries the header only. The handler answers through the Responder when it
// is done with the body (answering earlier closes the connection after the answer).
using StreamingHandler =
    std::function<void(RequestContext& ctx, std::shared_ptr<BodyReader> body, Responder responder)>;

}  // namespace meshwork::http
