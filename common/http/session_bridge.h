// Internal to the HTTP server (server.h is the public API): how a handler, on any thread,
// reaches its connection. Each call hops onto the connection's worker (asio::dispatch: inline
// when already there, the common case, else posted), where the Session does the work; each
// adapter holds the session alive until it is dropped.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "common/http/session_base.h"
#include "common/http/types.h"

namespace meshwork::http::server_internal {

// The Responder's sink. Thread-safe. An HTTP/1.1 session embeds one (it answers one request at
// a time) and hands it out with `Share`, which costs no allocation: the shared_ptr shares the
// session's own reference count, so a Responder keeps its session alive as before.
class SessionSink final : public Responder::Sink {
 public:
  explicit SessionSink(SessionBase* session) : session_(session) {}

  // `owner` must own the session this sink is embedded in.
  static std::shared_ptr<Responder::Sink> Share(std::shared_ptr<SessionBase> owner,
                                                SessionSink* sink) {
    return std::shared_ptr<Responder::Sink>(std::move(owner), sink);
  }

  // Responder::Sink
  std::shared_ptr<ChunkedWriter> StartChunked(Response header) override;
  void Complete(Response response) override;
  void CompleteBuffers(Response header, SharedBuffers body, uint64_t offset,
                       uint64_t length) override;
  void CompleteFile(Response header, std::shared_ptr<const OpenFile> file, uint64_t offset,
                    uint64_t length) override;
  void CompletePrepared(std::shared_ptr<const PreparedAnswer> answer,
                        const AnswerFields& extra) override;

 private:
  // The session holding this sink: alive while any shared_ptr from Share is (its owner).
  SessionBase* const session_;
};

// A chunked response. Thread-safe; Finish() (or dropping the writer) queues the last chunk.
class SessionChunkedWriter final : public ChunkedWriter {
 public:
  explicit SessionChunkedWriter(std::shared_ptr<SessionBase> session)
      : session_(std::move(session)), detached_(std::make_shared<std::atomic<bool>>(false)) {}
  ~SessionChunkedWriter() override { Finish(); }

  // ChunkedWriter
  void Write(std::shared_ptr<const std::string> data) override;
  void Finish() override;
  void Abort() override;
  // True once the connection failed, or the answer needs no more (Detach).
  bool closed() const override { return session_->broken.load() || detached_->load(); }

  // On the session's executor, when the header was the whole answer (a HEAD): what is
  // written from now on, or was queued and not yet handed to the session, is dropped — the
  // session has gone on to its next request.
  void Detach() { detached_->store(true); }

 private:
  // Queues `data` to the session unless the writer was detached by then.
  void Queue(std::shared_ptr<const std::string> data);

  std::shared_ptr<SessionBase> session_;
  std::shared_ptr<std::atomic<bool>> detached_;  // shared with queued chunks
  std::atomic<bool> finished_{false};
};

// A streamed request body. One Read() at a time (BodyReader's contract).
class SessionBodyReader final : public BodyReader {
 public:
  explicit SessionBodyReader(std::shared_ptr<SessionBase> session) : session_(std::move(session)) {}

  // BodyReader
  void Read(ChunkFn on_chunk) override;

 private:
  std::shared_ptr<SessionBase> session_;
};

}  // namespace meshwork::http::server_internal
