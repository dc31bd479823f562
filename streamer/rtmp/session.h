// The server side of one RTMP connection that publishes, as a state machine over bytes: no
// sockets, no clock, no threads, so every rule is testable with byte strings and the whole
// of it can be fuzzed.
//
// Flow: handshake (handshake.h) → chunk stream (chunk.h) → AMF0 commands (amf0.h):
//   connect          → Window Acknowledgement Size, Set Peer Bandwidth, Set Chunk Size,
//                      `_result` NetConnection.Connect.Success (or `_error` …Rejected for
//                      another application name, and the connection ends)
//   releaseStream, FCPublish, FCUnpublish, getStreamLength → `_result` (where a transaction
//                      id asks for one)
//   createStream     → `_result` with a new message stream id (at most max_streams)
//   publish          → the Handler decides; `onStatus` NetStream.Publish.Start, or
//                      NetStream.Publish.BadName / …Denied and the connection ends
//   deleteStream / closeStream → the publishing ends (Handler::on_unpublish)
// Audio and video messages of the published stream go through FlvDepacketizer to the sink
// the Handler returned. Acknowledgements are sent each time the peer's window of bytes has
// been received.
//
// Not thread-safe: a connection's strand owns it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "streamer/rtmp/amf0.h"
#include "streamer/rtmp/chunk.h"
#include "streamer/rtmp/flv.h"

namespace meshwork::rtmp {

struct PublishRequest {
  std::string app;     // from connect, without any query
  std::string tc_url;  // from connect, as sent
  std::string name;    // publish's stream name, as sent (may hold "?token=…")
  std::string stream;  // the stream it names (see SplitStreamKey)
  std::string token;   // the publish token it carries; empty when none
};

// Splits a publish name into stream and token: "news?token=T" → (news, T); otherwise, when
// `is_stream(name)` holds, (name, ""); otherwise the longest prefix before a '-' for which
// `is_stream` holds, with the rest as the token ("news-T" → (news, T)); otherwise (name, "").
void SplitStreamKey(std::string_view name, const std::function<bool(std::string_view)>& is_stream,
                    std::string& stream, std::string& token);

class ServerSession {
 public:
  struct Options {
    std::string app = "live";  // the application name publishers must connect to
    ChunkLimits limits;        // once a publish is admitted
    // Until then: commands only, so a peer that has not proved it holds a stream key cannot
    // make us hold more than this (each field capped at the one in `limits`).
    ChunkLimits before_publish{.max_chunk_size = 1 << 20,
                               .max_message_size = 64 << 10,
                               .max_chunk_streams = 8,
                               .max_buffered_bytes = 256 << 10};
    uint32_t window_ack_size = 2'500'000;  // what we ask the peer to acknowledge
    uint32_t out_chunk_size = 4096;
    size_t max_streams = 4;  // createStream calls per connection
  };
  struct Handler {
    // Resolves and authorises a publish; returns where its frames go. The error's message is
    // sent to the client (onStatus description) and the connection ends: AlreadyExists →
    // NetStream.Publish.BadName, Unauthenticated/PermissionDenied → NetStream.Publish.Denied,
    // anything else → NetStream.Publish.BadName.
    std::function<absl::StatusOr<FlvDepacketizer::Sink>(PublishRequest&)> on_publish;
    // The publishing that on_publish admitted has ended (deleteStream, FCUnpublish, or the
    // session is destroyed while publishing).
    std::function<void()> on_unpublish;
    // A message we ignore or a media message we cannot package: for a log line (each
    // distinct text once per session).
    std::function<void(const std::string&)> on_notice;
  };
  using RandomFill = std::function<void(std::span<uint8_t>)>;

  ServerSession(Options options, Handler handler, RandomFill random, uint32_t epoch_ms);
  ~ServerSession();

  // Consumes `in`; appends what to send to the peer to `out`. A non-OK status ends the
  // connection (send `out` first: it may hold the refusal). Never called again after that.
  absl::Status Feed(std::span<const uint8_t> in, std::string& out);

  bool handshake_done() const { return phase_ >= Phase::kChunks; }
  bool publishing() const { return publishing_; }
  const PublishRequest& request() const { return request_; }
  uint64_t media_messages() const { return media_messages_; }

 private:
  enum class Phase { kC0C1, kC2, kChunks };
  absl::Status OnMessage(Message& m, std::string& out);
  absl::Status OnCommand(const std::vector<Amf0Value>& args, uint32_t stream_id, std::string& out);
  absl::Status OnConnect(double txn, const std::vector<Amf0Value>& args, std::string& out);
  absl::Status OnPublish(double txn, const std::vector<Amf0Value>& args, uint32_t stream_id,
                         std::string& out);
  void SendControl(uint8_t type, std::string payload, std::string& out);
  void SendCommand(uint32_t stream_id, const std::vector<Amf0Value>& values, std::string& out);
  void SendStatus(uint32_t stream_id, const std::string& level, const std::string& code,
                  const std::string& description, std::string& out);
  void Notice(const std::string& text);
  void StopPublishing();

  Options options_;
  Handler handler_;
  RandomFill random_;
  uint32_t epoch_ms_;
  Phase phase_ = Phase::kC0C1;
  std::string handshake_;  // C0C1 / C2 bytes so far
  ChunkReader reader_;
  ChunkWriter writer_;
  bool connected_ = false;
  std::string app_;
  std::string tc_url_;
  uint32_t next_stream_id_ = 1;
  size_t streams_created_ = 0;
  bool publishing_ = false;
  uint32_t publish_stream_id_ = 0;
  PublishRequest request_;
  std::unique_ptr<FlvDepacketizer> depacketizer_;
  uint32_t peer_window_ = 2'500'000;  // the peer's Window Acknowledgement Size
  uint64_t acked_ = 0;                // bytes acknowledged so far
  uint64_t media_messages_ = 0;
  std::vector<std::string> notices_;  // already reported
};

}  // namespace meshwork::rtmp
