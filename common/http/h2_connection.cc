#include "common/http/h2_connection.h"

#include <nghttp2/nghttp2.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <deque>
#include <vector>

namespace meshwork::http {

struct H2Connection::Stream {
  Request request;
  size_t header_bytes = 0;
  bool oversized = false;       // header list over the bound: 431
  bool body_too_large = false;  // request body over the bound: 413
  bool head = false;
  // The answer's body: chunks not yet (wholly) handed to nghttp2, and the offset into the
  // first one.
  std::deque<std::shared_ptr<const std::string>> out;
  size_t out_offset = 0;
  size_t out_bytes = 0;  // queued in `out`, past out_offset (or left in `file`)
  // A file answer (RespondFile): read at `file_offset` as each DATA frame is written.
  std::shared_ptr<const OpenFile> file;
  uint64_t file_offset = 0;
  bool streaming = false;  // StartStream: more chunks may come
  bool ended = false;      // the last chunk has been queued
  bool responded = false;
  bool requested = false;                   // the request ended (handed on, or answered 431/413)
  H2Connection::Clock::time_point began{};  // its HEADERS came (the Receive's `now`)
};

namespace {

// Connection-specific fields HTTP/2 forbids (RFC 9113 8.2.2), never copied to a response.
bool ConnectionSpecific(std::string_view name) {
  return name == "connection" || name == "keep-alive" || name == "proxy-connection" ||
         name == "transfer-encoding" || name == "upgrade";
}

std::string Lower(std::string_view in) {
  std::string out(in);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

nghttp2_nv Nv(const std::string& name, const std::string& value) {
  return nghttp2_nv{reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
                    reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(),
                    value.size(), NGHTTP2_NV_FLAG_NONE};
}

}  // namespace

// nghttp2's callbacks, with the connection as user data.
struct H2Connection::Callbacks {
  static H2Connection* Self(void* user_data) { return static_cast<H2Connection*>(user_data); }

  static int OnBeginHeaders(nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
    auto stream = std::make_unique<Stream>();
    stream->request.version(20);
    stream->began = Self(user_data)->now_;
    Self(user_data)->streams_[frame->hd.stream_id] = std::move(stream);
    return 0;
  }

  static int OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                      size_t namelen, const uint8_t* value, size_t valuelen, uint8_t,
                      void* user_data) {
    auto it = Self(user_data)->streams_.find(frame->hd.stream_id);
    if (it == Self(user_data)->streams_.end()) return 0;
    Stream& s = *it->second;
    // RFC 7541 4.1: a field costs its name, its value and 32 octets.
    s.header_bytes += namelen + valuelen + 32;
    if (s.header_bytes > Self(user_data)->limits_.max_header_list_bytes) s.oversized = true;
    if (s.oversized) return 0;
    std::string_view n(reinterpret_cast<const char*>(name), namelen);
    std::string_view v(reinterpret_cast<const char*>(value), valuelen);
    if (n == ":method") {
      s.request.method_string(v);
      s.head = v == "HEAD";
    } else if (n == ":path") {
      s.request.target(v);
    } else if (n == ":authority") {
      s.request.set(beast_http::field::host, v);
    } else if (!n.empty() && n[0] != ':') {
      s.request.insert(n, v);
    }
    return 0;
  }

  static int OnData(nghttp2_session*, uint8_t, int32_t stream_id, const uint8_t* data, size_t len,
                    void* user_data) {
    H2Connection* self = Self(user_data);
    auto it = self->streams_.find(stream_id);
    if (it == self->streams_.end()) return 0;
    Stream& s = *it->second;
    // R-3: a body over the per-request bound, or past what the connection may buffer for all
    // its unfinished requests, is dropped (413 when its request ends).
    if (s.body_too_large || s.request.body().size() + len > self->limits_.max_request_body_bytes ||
        self->buffered_body_bytes_ + len > self->limits_.max_connection_body_bytes) {
      s.body_too_large = true;
      self->DropBody(s);
      return 0;
    }
    s.request.body().append(reinterpret_cast<const char*>(data), len);
    self->buffered_body_bytes_ += len;
    return 0;
  }

  static int OnFrame(nghttp2_session* session, const nghttp2_frame* frame, void* user_data) {
    H2Connection* self = Self(user_data);
    // After a GOAWAY for a flood, nothing more of this read is acted on (and no second GOAWAY
    // is queued): nghttp2 stops at the callback failure.
    if (self->failed_) return NGHTTP2_ERR_CALLBACK_FAILURE;
    if (frame->hd.type == NGHTTP2_RST_STREAM) {
      ++self->resets_;
      if (!self->TakeResetToken(self->now_)) {
        // CVE-2023-44487: streams opened and cancelled faster than the budget allows.
        self->failed_ = true;
        nghttp2_submit_goaway(session, NGHTTP2_FLAG_NONE,
                              nghttp2_session_get_last_proc_stream_id(session),
                              NGHTTP2_ENHANCE_YOUR_CALM, nullptr, 0);
      }
      return 0;
    }
    bool request_end = (frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) &&
                       (frame->hd.flags & NGHTTP2_FLAG_END_STREAM);
    if (!request_end) return 0;
    int32_t id = frame->hd.stream_id;
    auto it = self->streams_.find(id);
    if (it == self->streams_.end()) return 0;
    Stream& s = *it->second;
    s.requested = true;
    // The body goes with the request (or nowhere): the connection no longer buffers it.
    self->buffered_body_bytes_ -= s.request.body().size();
    if (s.oversized) {
      Response res{beast_http::status::request_header_fields_too_large, 11};
      res.set(beast_http::field::content_type, "application/json");
      res.body() =
          R"({"error":{"code":"headers_too_large","message":"the request's header fields are over the listener's limit","status":431}})";
      self->Refuse(id, s.request.method_string(), std::move(res));
      return 0;
    }
    if (s.body_too_large) {
      Response res{beast_http::status::payload_too_large, 11};
      res.set(beast_http::field::content_type, "application/json");
      res.body() =
          R"({"error":{"code":"body_too_large","message":"the request body is over the listener's limit","status":413}})";
      self->Refuse(id, s.request.method_string(), std::move(res));
      return 0;
    }
    s.request.prepare_payload();
    Request request = std::move(s.request);
    self->on_request_(id, std::move(request));
    return 0;
  }

  static int OnStreamClose(nghttp2_session*, int32_t stream_id, uint32_t, void* user_data) {
    H2Connection* self = Self(user_data);
    auto it = self->streams_.find(stream_id);
    if (it == self->streams_.end()) return 0;
    if (!it->second->requested) self->DropBody(*it->second);
    self->streams_.erase(it);
    return 0;
  }

  // Says how many body bytes the next DATA frame carries; SendData then hands them over.
  static ssize_t ReadBody(nghttp2_session*, int32_t stream_id, uint8_t*, size_t length,
                          uint32_t* data_flags, nghttp2_data_source*, void* user_data) {
    auto it = Self(user_data)->streams_.find(stream_id);
    if (it == Self(user_data)->streams_.end()) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    Stream& s = *it->second;
    size_t take = std::min(length, s.out_bytes);
    if (take == s.out_bytes && (!s.streaming || s.ended)) {
      *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    } else if (take == 0) {
      return NGHTTP2_ERR_DEFERRED;  // StreamData resumes it
    }
    *data_flags |= NGHTTP2_DATA_FLAG_NO_COPY;
    return static_cast<ssize_t>(take);
  }

  // A DATA frame: its 9-byte header copied, its payload as views of the stream's chunks.
  static int SendData(nghttp2_session*, nghttp2_frame* frame, const uint8_t* framehd, size_t length,
                      nghttp2_data_source*, void* user_data) {
    H2Connection* self = Self(user_data);
    auto it = self->streams_.find(frame->hd.stream_id);
    if (it == self->streams_.end() || !self->output_) return NGHTTP2_ERR_CALLBACK_FAILURE;
    Stream& s = *it->second;
    H2Output& out = *self->output_;
    if (s.file) {
      // This frame's bytes of the file, read now (the whole file is never held).
      auto piece = std::make_shared<std::string>(length, '\0');
      size_t got = 0;
      while (got < length) {
        ssize_t n = ::pread(s.file->fd(), piece->data() + got, length - got,
                            static_cast<off_t>(s.file_offset + got));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<size_t>(n);
      }
      // Shorter than promised (the file changed): this stream is reset, the others go on.
      if (got < length) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
      out.AppendBytes(framehd, 9);
      out.pieces.push_back(H2Output::Piece{std::move(piece), 0, length});
      s.file_offset += length;
      s.out_bytes -= length;
      return 0;
    }
    out.AppendBytes(framehd, 9);
    // No padding: this server sets no padding callback, so padlen is always 0.
    size_t left = length;
    while (left > 0 && !s.out.empty()) {
      const auto& chunk = s.out.front();
      size_t take = std::min(left, chunk->size() - s.out_offset);
      out.pieces.push_back(H2Output::Piece{chunk, s.out_offset, take});
      left -= take;
      s.out_offset += take;
      s.out_bytes -= take;
      if (s.out_offset == chunk->size()) {
        s.out.pop_front();
        s.out_offset = 0;
      }
    }
    return left == 0 ? 0 : NGHTTP2_ERR_CALLBACK_FAILURE;  // ReadBody never promises more
  }
};

size_t H2Output::size() const {
  size_t n = 0;
  for (const Piece& p : pieces) n += p.length;
  return n;
}

void H2Output::AppendBytes(const void* data, size_t n) {
  if (n == 0) return;
  size_t at = bytes.size();
  bytes.append(static_cast<const char*>(data), n);
  if (!pieces.empty() && !pieces.back().chunk &&
      pieces.back().offset + pieces.back().length == at) {
    pieces.back().length += n;  // extends the previous run of frame bytes
  } else {
    pieces.push_back(Piece{nullptr, at, n});
  }
}

H2Connection::H2Connection(H2Limits limits, RequestFn on_request, RefuseFn on_refuse)
    : limits_(limits),
      on_request_(std::move(on_request)),
      on_refuse_(std::move(on_refuse)),
      reset_tokens_(limits.max_reset_burst) {
  nghttp2_session_callbacks* callbacks = nullptr;
  nghttp2_session_callbacks_new(&callbacks);
  nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, &Callbacks::OnBeginHeaders);
  nghttp2_session_callbacks_set_on_header_callback(callbacks, &Callbacks::OnHeader);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, &Callbacks::OnData);
  nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, &Callbacks::OnFrame);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, &Callbacks::OnStreamClose);
  nghttp2_session_callbacks_set_send_data_callback(callbacks, &Callbacks::SendData);
  nghttp2_option* option = nullptr;
  nghttp2_option_new(&option);
  // SETTINGS and PING floods: at most this many acknowledgements queued for a peer that
  // does not read them (nghttp2 then fails the session with NGHTTP2_ERR_FLOODED).
  nghttp2_option_set_max_outbound_ack(option, 1000);
  nghttp2_option_set_max_settings(option, 32);
  nghttp2_session_server_new2(&session_, callbacks, this, option);
  nghttp2_option_del(option);
  nghttp2_session_callbacks_del(callbacks);
}

H2Connection::~H2Connection() { nghttp2_session_del(session_); }

void H2Connection::Refuse(int32_t id, std::string_view method, Response refusal) {
  if (on_refuse_) {
    on_refuse_(id, method, std::move(refusal));
  } else {
    Respond(id, std::move(refusal));
  }
}

void H2Connection::Start() {
  nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, limits_.max_concurrent_streams},
      {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, limits_.max_header_list_bytes},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, limits_.initial_window_bytes},
  };
  nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings, std::size(settings));
}

bool H2Connection::TakeResetToken(Clock::time_point now) {
  if (reset_refill_ != Clock::time_point{}) {
    double seconds = std::chrono::duration<double>(now - reset_refill_).count();
    reset_tokens_ =
        std::min(limits_.max_reset_burst,
                 reset_tokens_ + std::max(0.0, seconds) * limits_.max_resets_per_second);
  }
  reset_refill_ = now;
  if (reset_tokens_ < 1) return false;
  reset_tokens_ -= 1;
  return true;
}

bool H2Connection::Receive(std::string_view bytes, Clock::time_point now) {
  if (failed_) return false;
  now_ = now;
  ssize_t n = nghttp2_session_mem_recv(session_, reinterpret_cast<const uint8_t*>(bytes.data()),
                                       bytes.size());
  if (n < 0 && !failed_) {  // (a reset flood has already queued its GOAWAY)
    failed_ = true;
    // A flood or a protocol error: say why before closing (when nghttp2 has not already).
    nghttp2_session_terminate_session(
        session_, n == NGHTTP2_ERR_FLOODED ? NGHTTP2_ENHANCE_YOUR_CALM : NGHTTP2_PROTOCOL_ERROR);
  }
  return !failed_;
}

void H2Connection::TakeOutput(H2Output& out) {
  out.Clear();
  output_ = &out;
  for (;;) {
    const uint8_t* data = nullptr;
    ssize_t n = nghttp2_session_mem_send(session_, &data);
    if (n <= 0) break;
    out.AppendBytes(data, static_cast<size_t>(n));
  }
  output_ = nullptr;
}

std::string H2Connection::TakeOutput() {
  H2Output out;
  TakeOutput(out);
  std::string flat;
  flat.reserve(out.size());
  for (const auto& piece : out.pieces) flat.append(out.View(piece));
  return flat;
}

bool H2Connection::Finished() const {
  return !nghttp2_session_want_read(session_) && !nghttp2_session_want_write(session_);
}

bool H2Connection::StreamOpen(int32_t id) const { return streams_.contains(id); }

void H2Connection::DropBody(Stream& s) {
  buffered_body_bytes_ -= s.request.body().size();
  s.request.body().clear();
  s.request.body().shrink_to_fit();
}

std::optional<H2Connection::Clock::time_point> H2Connection::oldest_incomplete_request() const {
  std::optional<Clock::time_point> oldest;
  for (const auto& [id, s] : streams_) {
    if (!s->requested && (!oldest || s->began < *oldest)) oldest = s->began;
  }
  return oldest;
}

bool H2Connection::output_blocked() const {
  for (const auto& [id, s] : streams_) {
    if (s->out_bytes > 0) return true;
  }
  return false;
}

void H2Connection::Submit(int32_t id, Stream& stream, const Response& header, bool has_body) {
  std::vector<std::pair<std::string, std::string>> fields;
  fields.emplace_back(":status", std::to_string(header.result_int()));
  for (const auto& field : header) {
    std::string name = Lower(field.name_string());
    if (ConnectionSpecific(name)) continue;
    fields.emplace_back(std::move(name), std::string(field.value()));
  }
  std::vector<nghttp2_nv> nva;
  nva.reserve(fields.size());
  for (const auto& [name, value] : fields) nva.push_back(Nv(name, value));
  stream.responded = true;
  if (!has_body || stream.head) {
    nghttp2_submit_response(session_, id, nva.data(), nva.size(), nullptr);
    return;
  }
  nghttp2_data_provider provider{};
  provider.read_callback = &Callbacks::ReadBody;
  nghttp2_submit_response(session_, id, nva.data(), nva.size(), &provider);
}

void H2Connection::Respond(int32_t id, Response header, SharedBuffers body, uint64_t offset,
                           std::optional<uint64_t> length) {
  auto it = streams_.find(id);
  if (it == streams_.end() || it->second->responded) return;
  Stream& s = *it->second;
  if (body.size == 0 && !header.body().empty()) {
    body.Append(std::make_shared<const std::string>(std::move(header.body())));
    header.body().clear();
  }
  offset = std::min(offset, body.size);
  uint64_t total = std::min(length.value_or(body.size - offset), body.size - offset);
  // RFC 9110 §8.6: 1xx and 204 carry no Content-Length, and a 304's would have to be the
  // 200's; they end at their header.
  const unsigned code = header.result_int();
  if (code < 200 || code == 204 || code == 304) {
    header.erase(beast_http::field::content_length);
    body = SharedBuffers{};
    total = 0;
  } else {
    header.set(beast_http::field::content_length, std::to_string(total));
  }
  // The chunks that hold [offset, offset + total), shared: SendData starts at out_offset in
  // the first and ReadBody stops at out_bytes, inside the last.
  uint64_t skip = offset;
  for (auto& chunk : body.chunks) {
    if (!chunk || chunk->empty()) continue;
    if (skip >= chunk->size()) {
      skip -= chunk->size();
      continue;
    }
    if (s.out.empty()) s.out_offset = static_cast<size_t>(skip);
    skip = 0;
    s.out.push_back(std::move(chunk));
  }
  s.out_bytes = static_cast<size_t>(total);
  Submit(id, s, header, total > 0);
}

void H2Connection::RespondFile(int32_t id, Response header, std::shared_ptr<const OpenFile> file,
                               uint64_t offset, uint64_t length) {
  auto it = streams_.find(id);
  if (it == streams_.end() || it->second->responded) return;
  Stream& s = *it->second;
  header.body().clear();
  const unsigned code = header.result_int();
  if (code < 200 || code == 204 || code == 304) {  // as in Respond
    header.erase(beast_http::field::content_length);
    length = 0;
  } else {
    if (!file) length = 0;
    header.set(beast_http::field::content_length, std::to_string(length));
  }
  s.file = length > 0 ? std::move(file) : nullptr;
  s.file_offset = offset;
  s.out_bytes = static_cast<size_t>(length);
  Submit(id, s, header, length > 0);
}

bool H2Connection::StartStream(int32_t id, Response header) {
  auto it = streams_.find(id);
  if (it == streams_.end() || it->second->responded) return false;
  Stream& s = *it->second;
  s.streaming = true;
  header.erase(beast_http::field::content_length);
  Submit(id, s, header, true);
  return !s.head;
}

void H2Connection::StreamData(int32_t id, std::shared_ptr<const std::string> chunk) {
  auto it = streams_.find(id);
  if (it == streams_.end() || !it->second->streaming || it->second->ended) return;
  Stream& s = *it->second;
  if (chunk) {
    if (chunk->empty()) return;
    s.out_bytes += chunk->size();
    s.out.push_back(std::move(chunk));
  } else {
    s.ended = true;
  }
  nghttp2_session_resume_data(session_, id);
}

void H2Connection::ResetStream(int32_t id) {
  auto it = streams_.find(id);
  if (it == streams_.end() || it->second->ended) return;
  it->second->ended = true;
  nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, id, NGHTTP2_INTERNAL_ERROR);
}

}  // namespace meshwork::http
