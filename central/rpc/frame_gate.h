// the HTTP/2 frame rules central's gRPC port enforces before gRPC sees a byte.
//
// gRPC 1.51 (Debian 12) compares a client's new streams with the SETTINGS the client has
// acknowledged, so a client that never acknowledges them may open streams without limit;
// it buffers an unfinished header block (HEADERS + CONTINUATION) without bound; and it
// answers neither with GOAWAY. `ClientFrameCheck` reads the client's byte stream (preface,
// then frame headers only — no HPACK) and says where it must be cut:
//   - more than `streams_before_ack` new streams before the client's SETTINGS ACK;
//   - a header block (HEADERS and its CONTINUATIONs) over `header_block_bytes`, a
//     CONTINUATION outside a block or another frame inside one (RFC 9113 §6.10);
//   - more than `pings_per_second` PINGs, `resets_per_second` RST_STREAMs or
//     `settings_per_second` SETTINGS frames within one second (floods that make the server
//     queue answers or churn streams);
//   - a wrong preface.
// Legitimate gRPC clients acknowledge SETTINGS at once, send header blocks of a few hundred
// bytes and ping every few seconds. `FrameBoundary` follows the server's direction so that a
// GOAWAY of our own is written between two frames.
//
// Pure and single-threaded (one per connection, used by its relay); fuzzed
// (tests/fuzz/grpc_frame_gate_fuzz.cc).
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace meshwork::central {

struct FrameGateLimits {
  uint32_t streams_before_ack = 100;  // central's MAX_CONCURRENT_STREAMS
  uint32_t header_block_bytes = 64 * 1024;
  uint32_t pings_per_second = 50;
  uint32_t resets_per_second = 200;
  uint32_t settings_per_second = 50;
};

// HTTP/2 error codes a gate GOAWAY carries (RFC 9113 §7).
inline constexpr uint32_t kH2NoError = 0x0;
inline constexpr uint32_t kH2ProtocolError = 0x1;
inline constexpr uint32_t kH2SettingsTimeout = 0x4;
inline constexpr uint32_t kH2EnhanceYourCalm = 0xb;

class ClientFrameCheck {
 public:
  explicit ClientFrameCheck(const FrameGateLimits& limits) : limits_(limits) {}

  // Reads the next bytes the client sent, at `now_ms` (any monotonic milliseconds). Returns
  // how many of them may go on to the server: all of them, or, once a rule is broken, those
  // before the offending frame (its header may have started in an earlier call: then 0).
  size_t Feed(std::span<const uint8_t> bytes, int64_t now_ms);

  bool failed() const { return error_code_ != 0; }
  uint32_t error_code() const { return error_code_; }  // for the GOAWAY
  const std::string& reason() const { return reason_; }
  // A short name of the broken rule, for metrics: "preface", "streams_before_ack",
  // "header_block", "protocol", "ping_flood", "reset_flood", "settings_flood".
  const char* rule() const { return rule_; }
  // The client acknowledged the server's SETTINGS.
  bool acknowledged() const { return acknowledged_; }
  // The highest stream id the client opened (GOAWAY's last-stream-id).
  uint32_t last_stream_id() const { return last_stream_id_; }

 private:
  void OnFrameHeader(uint32_t length, uint8_t type, uint8_t flags, uint32_t stream_id,
                     int64_t now_ms);
  void Fail(uint32_t code, const char* rule, std::string reason);
  bool Count(uint32_t* counter, uint32_t limit, int64_t now_ms);

  const FrameGateLimits limits_;
  size_t preface_seen_ = 0;
  uint8_t header_[9] = {};
  size_t header_seen_ = 0;
  uint64_t payload_left_ = 0;
  bool in_header_block_ = false;
  uint64_t header_block_bytes_ = 0;
  uint32_t block_stream_id_ = 0;
  bool acknowledged_ = false;
  uint32_t streams_before_ack_ = 0;
  uint32_t last_stream_id_ = 0;
  int64_t window_start_ms_ = 0;
  uint32_t pings_ = 0;
  uint32_t resets_ = 0;
  uint32_t settings_ = 0;
  uint32_t error_code_ = 0;
  const char* rule_ = "";
  std::string reason_;
};

// Where the server's byte stream stands between frames (after the server's preface-less
// start: a server sends frames only).
class FrameBoundary {
 public:
  void Feed(std::span<const uint8_t> bytes);
  // True when every byte fed so far completes a frame: a frame of our own may follow.
  bool at_boundary() const { return header_seen_ == 0 && payload_left_ == 0; }

 private:
  uint8_t header_[9] = {};
  size_t header_seen_ = 0;
  uint64_t payload_left_ = 0;
};

// A GOAWAY frame (RFC 9113 §6.8) with `last_stream_id`, `code` and `debug` text.
std::string GoawayFrame(uint32_t last_stream_id, uint32_t code, std::string_view debug);

}  // namespace meshwork::central
