// The handler side of a request: Responder (types.h) and the adapters that carry its calls
// onto the connection's worker.
#include "common/http/session_bridge.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "boost/asio/dispatch.hpp"
#include "common/http/prepared_answer.h"
#include "common/http/response.h"

namespace meshwork::http {

namespace asio = boost::asio;

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

void Responder::SendPrepared(std::shared_ptr<const PreparedAnswer> answer,
                             const AnswerFields& extra) {
  if (!sink_) return;  // already answered
  auto sink = std::move(sink_);
  sink_ = nullptr;
  sink->CompletePrepared(std::move(answer), extra);
}

void Responder::Sink::CompletePrepared(std::shared_ptr<const PreparedAnswer> answer,
                                       const AnswerFields& extra) {
  CompleteAsResponse(*this, *answer, extra.view());
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

void Responder::SendFile(Response header, std::shared_ptr<const OpenFile> file, uint64_t offset,
                         uint64_t length) {
  if (!sink_) return;
  auto sink = std::move(sink_);
  sink_ = nullptr;
  uint64_t size = file ? file->size() : 0;
  offset = std::min(offset, size);
  length = std::min(length, size - offset);
  sink->CompleteFile(std::move(header), std::move(file), offset, length);
}

OpenFile::~OpenFile() {
  if (fd_ >= 0) ::close(fd_);
}

namespace server_internal {

SharedBuffers ReadFileRange(const OpenFile& file, uint64_t offset, uint64_t length) {
  constexpr uint64_t kPiece = 256 * 1024;
  SharedBuffers out;
  while (length > 0) {
    auto piece = std::make_shared<std::string>(static_cast<size_t>(std::min(length, kPiece)), '\0');
    size_t got = 0;
    while (got < piece->size()) {
      ssize_t n = ::pread(file.fd(), piece->data() + got, piece->size() - got,
                          static_cast<off_t>(offset + got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    piece->resize(got);
    out.Append(std::move(piece));
    if (got == 0 || got < std::min(length, kPiece)) break;  // shorter than promised
    offset += got;
    length -= got;
  }
  return out;
}

}  // namespace server_internal

void Responder::Sink::CompleteFile(Response header, std::shared_ptr<const OpenFile> file,
                                   uint64_t offset, uint64_t length) {
  SharedBuffers body =
      file ? server_internal::ReadFileRange(*file, offset, length) : SharedBuffers{};
  uint64_t size = body.size;
  CompleteBuffers(std::move(header), std::move(body), 0, size);
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

const std::shared_ptr<const std::string>& AbortChunk() {
  static const auto* const kMarker =
      new std::shared_ptr<const std::string>(std::make_shared<const std::string>("abort"));
  return *kMarker;
}

namespace server_internal {

std::shared_ptr<ChunkedWriter> SessionSink::StartChunked(Response header) {
  auto session = session_->shared_from_this();
  auto writer = std::make_shared<SessionChunkedWriter>(session);
  // Runs before any chunk the writer queues (the executor runs them in order).
  asio::dispatch(session->executor(), [session, writer, h = std::move(header)]() mutable {
    if (session->BeginChunked(std::move(h))) writer->Detach();
  });
  return writer;
}

void SessionSink::Complete(Response response) {
  // On the worker already (a handler answering in its call): no hop, nothing type-erased.
  if (session_->OnWorker()) return session_->Complete(std::move(response));
  auto session = session_->shared_from_this();
  asio::dispatch(session->executor(),
                 [session, r = std::move(response)]() mutable { session->Complete(std::move(r)); });
}

void SessionSink::CompleteBuffers(Response header, SharedBuffers body, uint64_t offset,
                                  uint64_t length) {
  auto session = session_->shared_from_this();
  asio::dispatch(session->executor(),
                 [session, h = std::move(header), b = std::move(body), offset, length]() mutable {
                   session->CompleteBuffers(std::move(h), std::move(b), offset, length);
                 });
}

void SessionSink::CompleteFile(Response header, std::shared_ptr<const OpenFile> file,
                               uint64_t offset, uint64_t length) {
  auto session = session_->shared_from_this();
  asio::dispatch(session->executor(),
                 [session, h = std::move(header), f = std::move(file), offset, length]() mutable {
                   session->CompleteFile(std::move(h), std::move(f), offset, length);
                 });
}

void SessionSink::CompletePrepared(std::shared_ptr<const PreparedAnswer> answer,
                                   const AnswerFields& extra) {
  if (session_->OnWorker()) return session_->CompletePrepared(std::move(answer), extra);
  auto session = session_->shared_from_this();
  asio::dispatch(session->executor(), [session, a = std::move(answer), extra]() mutable {
    session->CompletePrepared(std::move(a), extra);
  });
}

void SessionChunkedWriter::Queue(std::shared_ptr<const std::string> data) {
  if (detached_->load()) return;
  asio::dispatch(session_->executor(),
                 [session = session_, detached = detached_, data = std::move(data)]() mutable {
                   if (!detached->load()) session->QueueChunk(std::move(data));
                 });
}

void SessionChunkedWriter::Write(std::shared_ptr<const std::string> data) {
  if (finished_.load() || !data || data->empty()) return;
  Queue(std::move(data));
}

void SessionChunkedWriter::Finish() {
  if (finished_.exchange(true)) return;
  Queue(nullptr);
}

void SessionChunkedWriter::Abort() {
  if (finished_.exchange(true)) return;
  Queue(AbortChunk());
}

void SessionBodyReader::Read(ChunkFn on_chunk) {
  auto session = session_;
  asio::dispatch(session->executor(), [session, cb = std::move(on_chunk)]() mutable {
    session->ReadChunk(std::move(cb));
  });
}

}  // namespace server_internal
}  // namespace meshwork::http
