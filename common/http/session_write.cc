// The writing half of a connection: whole, scatter-gather and chunked answers. Every function
// runs on the session's worker (session.h). A write re-arms the send deadline whenever bytes
// move, so only a client that takes nothing for `send_timeout` is cut.
#include <sys/sendfile.h>
#include <sys/socket.h>

#include <cerrno>
#include <charconv>
#include <optional>

#include "common/http/prepared_answer.h"
#include "common/http/session.h"

namespace meshwork::http::server_internal {

void AppendResponseHead(const beast_http::response_header<>& head, std::string_view date,
                        std::optional<uint64_t> content_length, bool keep, std::string& out) {
  head_internal::AppendStatusAndFields(head, out);
  head_internal::AppendSessionFields(head.result_int() % 1000, date, content_length, keep, out);
}

template <typename Stream>
void Session<Stream>::CountAnswer(unsigned status, std::optional<uint64_t> bytes) {
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  server_->CountRequest(*worker_, method_text_, status, seconds);
  if (server_->access_log) {
    // An answer before the request was read whole (431, 413, 400…) has no context of its own.
    server_->LogAccess(ctx_filled_ ? ctx_.get() : nullptr, peer_, method_text_, status, bytes,
                       seconds, "HTTP/1.1");
  }
}

template <typename Stream>
void Session<Stream>::Write(Response response) {
  unsigned status = static_cast<unsigned>(response.result_int());
  CountAnswer(status, response.body().size());
  // An answer before the end of a streamed body leaves unread bytes: close after it (and
  // linger: CloseSocket).
  bool keep = KeepAfterAnswer();
  // RFC 9110 §6.4.1: 1xx, 204 and 304 answers end at their header.
  bool bodiless = status < 200 || status == 204 || status == 304;
  std::optional<uint64_t> length;
  if (!bodiless) {
    length = response.body().size();
    // HEAD: the length a GET would have (a handler may have set it and left the body empty).
    if (method_ == Verb::head && response.body().empty() && response.has_content_length()) {
      auto field = response[beast_http::field::content_length];
      uint64_t declared = 0;
      auto [end, err] = std::from_chars(field.data(), field.data() + field.size(), declared);
      if (err == std::errc() && end == field.data() + field.size()) length = declared;
    }
  }
  head_.clear();
  AppendResponseHead(response.base(), server_->Date(), length, keep, head_);
  body_.clear();
  if (!bodiless && method_ != Verb::head) body_ = std::move(response.body());
  // ctx_ stays alive until the next request: a handler that answered inline may still use it.
  whole_[0] = asio::buffer(head_);
  whole_[1] = asio::buffer(body_);
  SendWhole(keep);
}

template <typename Stream>
void Session<Stream>::SendWhole(bool keep) {
  if constexpr (!kTls) {
    // One sendmsg on the non-blocking socket first: a small answer to a client that reads
    // leaves whole, and its completion is not posted. Whatever the socket does not take goes
    // through an asynchronous write under the send deadline.
    size_t total = whole_[0].size() + whole_[1].size();
    beast::error_code ec;
    EnsureNonBlocking(ec);
    ssize_t n = -1;
    if (!ec) {
      iovec iov[2] = {{const_cast<void*>(whole_[0].data()), whole_[0].size()},
                      {const_cast<void*>(whole_[1].data()), whole_[1].size()}};
      msghdr msg{};
      msg.msg_iov = iov;
      msg.msg_iovlen = whole_[1].size() > 0 ? 2 : 1;
      do {
        n = ::sendmsg(Lowest().native_handle(), &msg, MSG_NOSIGNAL);
      } while (n < 0 && errno == EINTR);
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
        ec = beast::error_code(errno, beast::system_category());
      }
    }
    size_t sent = n > 0 ? static_cast<size_t>(n) : 0;
    if (ec || sent == total) {
      // The next request must not start inside the caller's call (a handler, a body-chunk
      // callback or a timer that released a held answer may still use the context): in
      // the handler's own call Dispatch finishes the answer when the handler returns; from
      // anywhere else the finish is posted, as an asynchronous write's completion would be.
      if (in_handler_) {
        deferred_ = Deferred{ec, sent, keep};
        return;
      }
      asio::post(stream_.get_executor(),
                 [self = Self(), ec, sent, keep] { self->FinishWhole(ec, sent, keep); });
      return;
    }
    // The rest asynchronously; the bytes count when the answer's write ends, as always.
    size_t from_head = std::min(sent, whole_[0].size());
    whole_[0] += from_head;
    whole_[1] += sent - from_head;
    return SendAll(whole_, [self = Self(), keep, sent](beast::error_code ec, size_t n) {
      self->FinishWhole(ec, sent + n, keep);
    });
  }
  SendAll(whole_, [self = Self(), keep](beast::error_code ec, size_t n) {
    self->FinishWhole(ec, n, keep);
  });
}

template <typename Stream>
void Session<Stream>::FinishInline(Deferred done) {
  // Pipelined requests answered at once would otherwise nest one call chain per request
  // (Dispatch → FinishWhole → ReadHeader → Dispatch …): every 16th finish is posted, which
  // bounds the stack.
  if (++inline_finishes_ % 16 == 0) {
    asio::post(stream_.get_executor(),
               [self = Self(), done] { self->FinishWhole(done.ec, done.n, done.keep); });
    return;
  }
  FinishWhole(done.ec, done.n, done.keep);
}

template <typename Stream>
void Session<Stream>::FinishWhole(beast::error_code ec, size_t n, bool keep) {
  server_->AddBytesOut(*worker_, n);
  body_ = std::string();  // a body's memory is not kept for the next answer
  prepared_ = nullptr;
  if (ec || !keep) return Close();
  ReadHeader();
}

template <typename Stream>
void Session<Stream>::CompletePrepared(std::shared_ptr<const PreparedAnswer> answer,
                                       const AnswerFields& extra) {
  CountAnswer(answer->status(), answer->body().size());
  bool keep = KeepAfterAnswer();
  head_.clear();
  answer->AppendHead(extra.view(), server_->Date(), keep, head_);
  whole_[0] = asio::buffer(head_);
  whole_[1] = answer->bodiless() || method_ == Verb::head ? asio::const_buffer()
                                                          : asio::buffer(answer->body());
  prepared_ = std::move(answer);  // held until the write ends
  SendWhole(keep);
}

template <typename Stream>
template <typename Buffers, typename Done>
void Session<Stream>::SendAll(const Buffers& buffers, Done done) {
  // asio's composed write asks the completion condition before each write: that is where
  // the send deadline is re-armed, so it measures progress rather than the whole answer.
  Session* session = this;
  asio::async_write(
      stream_, buffers,
      [session](const beast::error_code& ec, size_t) -> size_t {
        if (ec) return 0;
        session->SetDeadline(session->server_->options.send_timeout);
        return 256 * 1024;
      },
      [self = Self(), done = std::move(done)](beast::error_code ec, size_t n) mutable {
        self->ClearDeadline();
        done(ec, n);
      });
}

template <typename Stream>
void Session<Stream>::CompleteBuffers(Response header, SharedBuffers body, uint64_t offset,
                                      uint64_t length) {
  CountAnswer(static_cast<unsigned>(header.result_int()), length);
  bool keep = KeepAfterAnswer();
  head_.clear();
  AppendResponseHead(header.base(), server_->Date(), length, keep, head_);
  // The buffer list's capacity is kept from answer to answer, like the header's.
  gather_.clear();
  gather_.push_back(asio::buffer(head_));
  if (method_ != Verb::head) {  // HEAD: the header alone; the chunks are let go now
    body.ForEachPiece(offset, length, [this](std::string_view piece) {
      gather_.push_back(asio::buffer(piece.data(), piece.size()));
    });
    gather_body_ = std::move(body);  // moves the pointers only: the views above stay valid
  }
  // ctx_ stays alive until the next request, as with Write.
  SendAll(gather_, [self = Self(), keep](beast::error_code ec, size_t n) {
    self->server_->AddBytesOut(*self->worker_, n);
    self->gather_body_ = SharedBuffers{};
    if (ec || !keep) return self->Close();
    self->ReadHeader();
  });
}

template <typename Stream>
void Session<Stream>::CompleteFile(Response header, std::shared_ptr<const OpenFile> file,
                                   uint64_t offset, uint64_t length) {
  if (!file || method_ == Verb::head || length == 0) {
    // HEAD and empty bodies need no bytes (a missing file promised some: the close ends it).
    if (!file && method_ != Verb::head && length > 0) close_after_response_ = true;
    return CompleteBuffers(std::move(header), SharedBuffers{}, 0, length);
  }
  CountAnswer(static_cast<unsigned>(header.result_int()), length);
  bool keep = KeepAfterAnswer();
  head_.clear();
  AppendResponseHead(header.base(), server_->Date(), length, keep, head_);
  // The header goes out with MSG_MORE, so the kernel sends it in the same segments as the
  // first file bytes instead of a small packet of its own. Only when the socket cannot take
  // it all at once does the rest wait for an asynchronous write.
  size_t sent = 0;
  if constexpr (!kTls) {
    beast::error_code ec;
    EnsureNonBlocking(ec);
    ssize_t n =
        ec ? -1
           : ::send(Lowest().native_handle(), head_.data(), head_.size(), MSG_MORE | MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return Close();
    if (n > 0) sent = static_cast<size_t>(n);
    server_->AddBytesOut(*worker_, sent);
    if (sent == head_.size()) return SendFileBody(std::move(file), offset, length, keep);
  }
  SendAll(asio::buffer(head_.data() + sent, head_.size() - sent),
          [self = Self(), file = std::move(file), offset, length, keep](beast::error_code ec,
                                                                        size_t n) mutable {
            self->server_->AddBytesOut(*self->worker_, n);
            if (ec) return self->Close();
            self->SendFileBody(std::move(file), offset, length, keep);
          });
}

template <typename Stream>
void Session<Stream>::SendFileBody(std::shared_ptr<const OpenFile> file, uint64_t offset,
                                   uint64_t length, bool keep) {
  if constexpr (kTls) {
    // TLS encrypts in user space: the file is read a piece at a time, each written before
    // the next is read (R-3: never the whole range per connection).
    constexpr uint64_t kPiece = 256 * 1024;
    if (length == 0) return keep ? ReadHeader() : Close();
    const uint64_t want = std::min(length, kPiece);
    SharedBuffers piece = ReadFileRange(*file, offset, want);
    if (piece.size < want || piece.chunks.empty()) return Close();  // shorter than promised
    auto chunk = piece.chunks.front();
    SendAll(asio::buffer(*chunk), [self = Self(), chunk, file = std::move(file), offset, length,
                                   want, keep](beast::error_code ec, size_t n) mutable {
      self->server_->AddBytesOut(*self->worker_, n);
      if (ec) return self->Close();
      self->SendFileBody(std::move(file), offset + want, length - want, keep);
    });
  } else {
    // sendfile(2) on the non-blocking socket until the kernel's buffer is full, then a wait
    // for the socket to take more under the send deadline.
    struct Op : std::enable_shared_from_this<Op> {
      std::shared_ptr<Session> self;
      std::shared_ptr<const OpenFile> file;
      off_t offset;
      uint64_t left;
      bool keep;
      Op(std::shared_ptr<Session> s, std::shared_ptr<const OpenFile> f, uint64_t o, uint64_t n,
         bool k)
          : self(std::move(s)),
            file(std::move(f)),
            offset(static_cast<off_t>(o)),
            left(n),
            keep(k) {}
      void Next() {
        auto& socket = self->Lowest();
        beast::error_code ec;
        self->EnsureNonBlocking(ec);
        while (left > 0 && !ec) {
          size_t want = static_cast<size_t>(std::min<uint64_t>(left, 1u << 20));
          ssize_t n = ::sendfile(socket.native_handle(), file->fd(), &offset, want);
          if (n > 0) {
            left -= static_cast<uint64_t>(n);
            self->server_->AddBytesOut(*self->worker_, static_cast<size_t>(n));
            continue;
          }
          if (n < 0 && errno == EINTR) continue;
          if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Wait();
          return Done(false);  // an error, or the file ended before its promised length
        }
        Done(!ec);
      }
      void Wait() {
        self->SetDeadline(self->server_->options.send_timeout);  // no progress: cancelled
        self->Lowest().async_wait(tcp::socket::wait_write,
                                  [op = this->shared_from_this()](beast::error_code ec) {
                                    op->self->ClearDeadline();
                                    if (ec) return op->Done(false);
                                    op->Next();
                                  });
      }
      void Done(bool ok) {
        if (!ok || !keep) return self->Close();
        self->ReadHeader();
      }
    };
    std::make_shared<Op>(Self(), std::move(file), offset, length, keep)->Next();
  }
}

template <typename Stream>
bool Session<Stream>::BeginChunked(Response header) {
  CountAnswer(static_cast<unsigned>(header.result_int()), std::nullopt);
  chunk_mode_ = method_ == Verb::head ? ChunkMode::kHeaderOnly
                : http10_             ? ChunkMode::kUntilClose
                                      : ChunkMode::kChunked;
  chunked_keep_ = chunk_mode_ != ChunkMode::kUntilClose && KeepAfterAnswer();
  head_.clear();
  AppendResponseHead(header.base(), server_->Date(), std::nullopt, chunked_keep_, head_);
  if (http10_) {
    // RFC 9112 §6.1: no Transfer-Encoding to an HTTP/1.0 client (a HEAD's header too); the
    // close ends the body.
    constexpr std::string_view kChunkedField = "Transfer-Encoding: chunked\r\n";
    if (auto at = head_.find(kChunkedField); at != std::string::npos) {
      head_.erase(at, kChunkedField.size());
    }
  }
  chunked_active_ = true;
  chunk_writing_ = true;
  if (chunk_mode_ == ChunkMode::kHeaderOnly) {
    // HEAD: the header is the whole answer. The connection goes on to its next request now,
    // not when the producer's object ends (the writer is detached: nothing more comes here).
    SendAll(asio::buffer(head_), [self = Self()](beast::error_code ec, size_t n) {
      self->server_->AddBytesOut(*self->worker_, n);
      self->chunk_writing_ = false;
      self->chunked_active_ = false;
      self->chunks_.clear();
      if (ec) self->broken.store(true);
      if (ec || !self->chunked_keep_) return self->Close();
      self->ReadHeader();
    });
    return true;
  }
  SendAll(asio::buffer(head_), [self = Self()](beast::error_code ec, size_t n) {
    self->server_->AddBytesOut(*self->worker_, n);
    self->chunk_writing_ = false;
    if (ec) {
      self->broken.store(true);
      return self->Close();
    }
    self->PumpChunks();
  });
  return false;
}

template <typename Stream>
void Session<Stream>::QueueChunk(std::shared_ptr<const std::string> data) {
  if (broken.load()) return;
  chunks_.push_back(std::move(data));
  PumpChunks();
}

template <typename Stream>
void Session<Stream>::PumpChunks() {
  if (chunk_writing_ || chunks_.empty() || !chunked_active_) return;
  auto data = std::move(chunks_.front());
  chunks_.pop_front();
  chunk_writing_ = true;
  auto self = Self();
  if (data == AbortChunk()) {  // broken upstream: no last chunk, the client sees a cut
    chunk_writing_ = false;
    broken.store(true);
    chunks_.clear();
    if (chunk_mode_ == ChunkMode::kUntilClose) {
      // A close-delimited body ends like a whole one at a close: a reset says it was cut.
      beast::error_code ignored;
      Lowest().set_option(asio::socket_base::linger(true, 0), ignored);
    }
    return Close();
  }
  if (!data && chunk_mode_ != ChunkMode::kChunked) {  // the end: no last chunk to write
    chunk_writing_ = false;
    chunked_active_ = false;
    chunks_.clear();
    if (!chunked_keep_) return Close();
    // Posted: the end may be queued from inside a handler's call (the next request is never
    // read within it).
    asio::post(executor(), [self] { self->ReadHeader(); });
    return;
  }
  // A piece of the body written: the next, or the connection closed on an error.
  auto written = [self, data](beast::error_code ec, size_t n) {
    self->server_->AddBytesOut(*self->worker_, n);
    self->chunk_writing_ = false;
    if (ec) {
      self->broken.store(true);
      self->chunks_.clear();
      return self->Close();
    }
    self->PumpChunks();
  };
  if (chunk_mode_ == ChunkMode::kUntilClose) return SendAll(asio::buffer(*data), written);
  if (!data) {  // the end
    SendAll(beast_http::make_chunk_last(), [self](beast::error_code ec, size_t n) {
      self->server_->AddBytesOut(*self->worker_, n);
      self->chunk_writing_ = false;
      self->chunked_active_ = false;
      self->chunks_.clear();
      if (ec || !self->chunked_keep_) return self->Close();
      self->ReadHeader();
    });
    return;
  }
  SendAll(beast_http::make_chunk(asio::buffer(*data)), written);
}

template <typename Stream>
void Session<Stream>::WriteFinal(Response response) {
  keep_alive_ = false;
  method_ = Verb::unknown;
  method_text_ = "INVALID";
  started_ = std::chrono::steady_clock::now();
  Write(std::move(response));
}

// The members defined in this file, for both transports (the rest: session_read.cc).
template class Session<PlainStream>;
template class Session<TlsStream>;

}  // namespace meshwork::http::server_internal
