#include "common/http/tls_stream.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/log/check.h"

namespace meshwork::http::tls_internal {

namespace {

// One TLS record's ciphertext at most (RFC 8446 §5.2: plaintext + 256) and its header.
constexpr size_t kInputBytes = kRecordBytes + 256 + 5;
// Output buffers up to this size are kept between operations of a busy connection.
constexpr size_t kKeepOutputBytes = kPackBytes + 4 * 1024;

long BioCtrl(BIO*, int cmd, long, void*) {
  // OpenSSL flushes after each handshake flight; our output is sent by the stream.
  return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

int BioCreate(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

}  // namespace

int TlsEngine::BioWrite(BIO* bio, const char* data, size_t size, size_t* written) {
  auto* self = static_cast<TlsEngine*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  self->produced_.append(data, size);
  *written = size;
  return 1;
}

int TlsEngine::BioRead(BIO* bio, char* data, size_t size, size_t* read) {
  auto* self = static_cast<TlsEngine*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  size_t have = self->in_end_ - self->in_begin_;
  if (have == 0) {
    BIO_set_retry_read(bio);
    *read = 0;
    return 0;
  }
  size_t n = std::min(have, size);
  std::memcpy(data, self->in_.get() + self->in_begin_, n);
  self->in_begin_ += n;
  *read = n;
  return 1;
}

TlsEngine::TlsEngine(SSL_CTX* ctx) {
  static BIO_METHOD* const kMethod = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "meshwork-tls");
    MESHWORK_CHECK(m != nullptr, "BIO_meth_new failed");
    BIO_meth_set_write_ex(m, &TlsEngine::BioWrite);
    BIO_meth_set_read_ex(m, &TlsEngine::BioRead);
    BIO_meth_set_ctrl(m, &BioCtrl);
    BIO_meth_set_create(m, &BioCreate);
    return m;
  }();
  ssl_ = SSL_new(ctx);
  MESHWORK_CHECK(ssl_ != nullptr, "SSL_new failed (out of memory)");
  BIO* bio = BIO_new(kMethod);
  MESHWORK_CHECK(bio != nullptr, "BIO_new failed (out of memory)");
  BIO_set_data(bio, this);
  SSL_set_bio(ssl_, bio, bio);  // the SSL owns it
  SSL_set_accept_state(ssl_);
  // OpenSSL frees its record buffers when nothing is buffered (held connections, P-15).
  SSL_set_mode(ssl_, SSL_MODE_RELEASE_BUFFERS);
}

TlsEngine::~TlsEngine() { SSL_free(ssl_); }

ErrorCode TlsEngine::Failure(int ret) {
  int kind = SSL_get_error(ssl_, ret);
  unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (kind == SSL_ERROR_ZERO_RETURN) return asio::error::eof;  // the peer's close_notify
  if (code != 0) return ErrorCode(static_cast<int>(code), asio::error::get_ssl_category());
  // A syscall error without a queued reason: the transport ended under OpenSSL.
  return asio::ssl::error::stream_truncated;
}

TlsEngine::Step TlsEngine::Handshake() {
  ERR_clear_error();
  int r = SSL_do_handshake(ssl_);
  Step step;
  if (r == 1) return step;
  if (SSL_get_error(ssl_, r) == SSL_ERROR_WANT_READ) {
    step.want_input = true;
    return step;
  }
  step.ec = Failure(r);
  return step;
}

TlsEngine::Step TlsEngine::Read(asio::mutable_buffer into) {
  ERR_clear_error();
  size_t got = 0;
  int r = SSL_read_ex(ssl_, into.data(), into.size(), &got);
  Step step;
  if (r == 1) {
    step.bytes = got;
  } else if (SSL_get_error(ssl_, r) == SSL_ERROR_WANT_READ) {
    step.want_input = true;
  } else {
    step.ec = Failure(r);
  }
  if (!step.ec && produced_.size() > kReadOutputBytes) {
    // The peer keeps making us answer (alerts, key updates) and never lets it out.
    ERR_clear_error();
    step = Step{};
    step.ec = ErrorCode(static_cast<int>(ERR_PACK(ERR_LIB_SSL, 0, SSL_R_EXCESSIVE_MESSAGE_SIZE)),
                        asio::error::get_ssl_category());
  }
  return step;
}

ErrorCode TlsEngine::Shutdown() {
  ERR_clear_error();
  int r = SSL_shutdown(ssl_);
  if (r >= 0) return {};  // our close_notify is in the output
  return Failure(r);
}

ErrorCode TlsEngine::Encrypt(const char* data, size_t size) {
  ERR_clear_error();
  size_t written = 0;
  int r = SSL_write_ex(ssl_, data, size, &written);
  if (r != 1) return Failure(r);
  MESHWORK_CHECK(written == size, "our BIO takes every record, so SSL_write never stops part way");
  return {};
}

size_t TlsEngine::Pack(const char* data, size_t size) {
  // More than a record: room for a whole operation's records at once, not grown by doubling.
  if (packed_ + size > kRecordBytes && produced_.capacity() < kKeepOutputBytes) {
    produced_.reserve(kKeepOutputBytes);
  }
  size_t took = 0;
  while (size > 0 && packed_ < kPackBytes && !error_) {
    size_t room = kPackBytes - packed_;
    if (staging_.empty() && size >= kRecordBytes && room >= kRecordBytes) {
      // Whole records straight from the caller's memory.
      size_t whole = std::min(size, room) / kRecordBytes * kRecordBytes;
      error_ = Encrypt(data, whole);
      if (error_) break;
      data += whole;
      size -= whole;
      took += whole;
      packed_ += whole;
      continue;
    }
    if (staging_.capacity() < kRecordBytes) staging_.reserve(kRecordBytes);
    size_t n = std::min({size, kRecordBytes - staging_.size(), room});
    staging_.append(data, n);
    data += n;
    size -= n;
    took += n;
    packed_ += n;
    if (staging_.size() == kRecordBytes) {
      error_ = Encrypt(staging_.data(), staging_.size());
      staging_.clear();
    }
  }
  return took;
}

ErrorCode TlsEngine::Seal() {
  if (!error_ && !staging_.empty()) error_ = Encrypt(staging_.data(), staging_.size());
  staging_.clear();
  return error_;
}

asio::mutable_buffer TlsEngine::InputSpace() {
  if (!in_) in_ = std::make_unique<char[]>(kInputBytes);
  if (in_begin_ == in_end_) {
    in_begin_ = in_end_ = 0;
  } else if (in_end_ == kInputBytes) {
    std::memmove(in_.get(), in_.get() + in_begin_, in_end_ - in_begin_);
    in_end_ -= in_begin_;
    in_begin_ = 0;
  }
  return asio::buffer(in_.get() + in_end_, kInputBytes - in_end_);
}

const std::string& TlsEngine::TakeOutput() {
  MESHWORK_CHECK(!in_flight_, "one send at a time");
  sending_.swap(produced_);
  produced_.clear();
  in_flight_ = true;
  return sending_;
}

void TlsEngine::Sent() {
  sending_.clear();
  in_flight_ = false;
  if (sending_.capacity() > kKeepOutputBytes) std::string().swap(sending_);
}

void TlsEngine::TrimIdle() {
  if (in_ && in_begin_ == in_end_) {
    in_.reset();
    in_begin_ = in_end_ = 0;
  }
  if (in_flight_ || !produced_.empty()) return;
  std::string().swap(produced_);
  std::string().swap(sending_);
  std::string().swap(staging_);
}

size_t TlsEngine::BufferBytes() const {
  return (in_ ? kInputBytes : 0) + produced_.capacity() + sending_.capacity() + staging_.capacity();
}

void TlsEngine::SendNowBestEffort(int fd) {
  if (in_flight_ || produced_.empty()) return;
  (void)::send(fd, produced_.data(), produced_.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  produced_.clear();
}

}  // namespace meshwork::http::tls_internal
