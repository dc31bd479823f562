// S-24: the server side of one HTTP/2 connection, without I/O: received bytes go in
// (Receive), frames to send come out (TakeOutput), complete requests go to `on_request`, and
// answers come back by stream id (Respond, or StartStream + StreamData for bodies that are
// still being produced: a held LL-HLS reload is one stream, not a connection). nghttp2 does
// the framing, HPACK and flow control; this class adds the limits a public listener needs:
//
//   - SETTINGS_MAX_CONCURRENT_STREAMS (streams over it are refused by nghttp2);
//   - a header list bound: a request whose header fields exceed it is answered 431;
//   - a request body bound (413), bodies being rare here (GET and HEAD are the traffic), per
//     request and for all of a connection's unfinished requests;
//   - rapid reset (CVE-2023-44487): streams the client opens and cancels are counted in a
//     token bucket (`max_resets_per_second`, burst `max_reset_burst`); beyond it the
//     connection gets GOAWAY ENHANCE_YOUR_CALM and Receive() returns false;
//   - SETTINGS/PING floods: nghttp2's outbound-ACK cap (too many queued acknowledgements
//     → the session fails and Receive() returns false).
//
// A request becomes an http::Request (method, target from :path, Host from :authority,
// the other fields as sent). Not thread-safe: one connection's executor owns it. Bounded:
// every buffer is capped (header list, body, streams); output only grows with what the
// server itself submits.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/http/types.h"

struct nghttp2_session;

namespace meshwork::http {

// Frames ready to write, in order: frame bytes nghttp2 serialized (headers, control frames,
// DATA frame headers) and, between them, DATA payloads that are views into the answers' own
// chunks (nghttp2's NO_COPY mode: a body is never copied on its way to the socket).
struct H2Output {
  struct Piece {
    std::shared_ptr<const std::string> chunk;  // null: [offset, offset+length) of `bytes`
    size_t offset = 0;
    size_t length = 0;
  };
  std::string bytes;
  std::vector<Piece> pieces;

  bool empty() const { return pieces.empty(); }
  size_t size() const;
  void Clear() {
    bytes.clear();
    pieces.clear();
  }
  // Appends `n` bytes at `data` (copied into `bytes`).
  void AppendBytes(const void* data, size_t n);
  // The bytes of piece `p` (valid while this output and its chunks are).
  std::string_view View(const Piece& p) const {
    return p.chunk ? std::string_view(*p.chunk).substr(p.offset, p.length)
                   : std::string_view(bytes).substr(p.offset, p.length);
  }
};

struct H2Limits {
  uint32_t max_concurrent_streams = 100;
  uint32_t max_header_list_bytes = 16 * 1024;
  uint32_t max_request_body_bytes = 1 << 20;
  // Request bodies buffered for all of a connection's unfinished requests: the streams
  // beyond it get 413.
  uint32_t max_connection_body_bytes = 2 << 20;
  uint32_t initial_window_bytes = 1 << 20;  // per stream, for request bodies
  double max_resets_per_second = 100;
  double max_reset_burst = 400;
};

class H2Connection {
 public:
  using Clock = std::chrono::steady_clock;
  using RequestFn = std::function<void(int32_t stream_id, Request request)>;
  // An answer the connection makes itself (431 for an oversized header list, 413 for a body
  // over the limits): the owner adds what every answer carries (Date, Server), counts it and
  // passes it to Respond. Without one, the refusal goes to Respond as it is.
  // `method` is the request's (possibly empty when its header list was cut).
  using RefuseFn =
      std::function<void(int32_t stream_id, std::string_view method, Response refusal)>;

  H2Connection(H2Limits limits, RequestFn on_request, RefuseFn on_refuse = {});
  ~H2Connection();
  H2Connection(const H2Connection&) = delete;
  H2Connection& operator=(const H2Connection&) = delete;

  // Queues the server preface (SETTINGS). Call once, before anything else.
  void Start();
  // Feeds bytes read from the peer (the client preface first). False when the connection
  // must end (a protocol error, a flood, rapid reset): send TakeOutput() (a GOAWAY) and close.
  bool Receive(std::string_view bytes, Clock::time_point now = Clock::now());
  // The frames to write now, appended to `out` (cleared first); empty when there are none.
  void TakeOutput(H2Output& out);
  // The same, flattened into one string (tests, fuzzing).
  std::string TakeOutput();
  // True when neither side has anything left to do (after a GOAWAY, or the peer's).
  bool Finished() const;

  // Answers stream `id` with `header` (status and fields; its string body is the body when
  // `body` is empty). A stream the client reset meanwhile is ignored. HEAD gets no body.
  // With `length`, only [offset, offset+length) of `body` is sent (a Range answer): its
  // chunks are shared, not copied.
  void Respond(int32_t id, Response header, SharedBuffers body = {}, uint64_t offset = 0,
               std::optional<uint64_t> length = std::nullopt);
  // Answers stream `id` with [offset, offset+length) of `file`, read a DATA frame at a time as
  // flow control lets the frame go (R-3: no copy of the file per stream). A file that turns out
  // shorter resets the stream. HEAD reads nothing.
  void RespondFile(int32_t id, Response header, std::shared_ptr<const OpenFile> file,
                   uint64_t offset, uint64_t length);
  // A body produced over time: the header now, then chunks; a null chunk ends the stream.
  // False when no body follows (a HEAD, or a stream already gone): its chunks would be dropped.
  bool StartStream(int32_t id, Response header);
  void StreamData(int32_t id, std::shared_ptr<const std::string> chunk);
  // Ends stream `id` with RST_STREAM INTERNAL_ERROR (a body that cannot be completed).
  void ResetStream(int32_t id);
  // False once the stream is gone (reset by the client, or finished).
  bool StreamOpen(int32_t id) const;

  size_t open_streams() const { return streams_.size(); }
  // Request body bytes held for the streams whose request has not ended.
  size_t buffered_body_bytes() const { return buffered_body_bytes_; }
  // When the oldest stream whose request has not ended yet (headers or body still to come)
  // began (the `now` of the Receive that brought its HEADERS); nullopt when there is none.
  std::optional<Clock::time_point> oldest_incomplete_request() const;
  // Whether an answer has body bytes that nghttp2 could not send (after TakeOutput: the
  // client's flow-control window is closed).
  bool output_blocked() const;
  uint64_t resets_received() const { return resets_; }

 private:
  struct Stream;
  struct Callbacks;
  void Submit(int32_t id, Stream& stream, const Response& header, bool has_body);
  // Answers stream `id` with the connection's own refusal (through on_refuse_ when set).
  void Refuse(int32_t id, std::string_view method, Response refusal);
  // Lets go of the body `s` buffered so far (counted in buffered_body_bytes_).
  void DropBody(Stream& s);
  bool TakeResetToken(Clock::time_point now);
  H2Output* output_ = nullptr;  // where the DATA callback appends, during TakeOutput

  H2Limits limits_;
  RequestFn on_request_;
  RefuseFn on_refuse_;
  nghttp2_session* session_ = nullptr;
  std::map<int32_t, std::unique_ptr<Stream>> streams_;
  bool failed_ = false;
  size_t buffered_body_bytes_ = 0;  // of the streams whose request has not ended
  Clock::time_point now_{};         // of the Receive() in progress
  uint64_t resets_ = 0;
  double reset_tokens_;
  Clock::time_point reset_refill_{};
};

}  // namespace meshwork::http
