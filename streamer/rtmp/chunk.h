// The RTMP chunk stream: messages cut into chunks of the sender's chunk size, interleaved
// across chunk streams, each chunk headed by a basic header (format and chunk stream id)
// and a message header of 11, 7, 3 or 0 bytes that says only what changed, plus a 32-bit
// extended timestamp when the 24-bit field reads 0xFFFFFF.
//
// ChunkReader reassembles what a peer sends. It applies the two protocol control messages
// that change how the following bytes are cut (Set Chunk Size, Abort) itself, as soon as
// they complete, and hands every other message up. Everything it holds is bounded by
// ChunkLimits; a peer that exceeds a limit or breaks the framing gets an InvalidArgument
// naming what it broke, and the connection is to be closed (nothing after it is parsed).
//
// ChunkWriter cuts our messages into chunks (format 0, then format 3 continuations).
//
// Not thread-safe: one connection's reader and writer belong to its one strand.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace meshwork::rtmp {

// Message type ids (RTMP 1.0, section 5.4 and 7.1).
enum MessageType : uint8_t {
  kSetChunkSize = 1,
  kAbort = 2,
  kAcknowledgement = 3,
  kUserControl = 4,
  kWindowAckSize = 5,
  kSetPeerBandwidth = 6,
  kAudio = 8,
  kVideo = 9,
  kDataAmf3 = 15,
  kCommandAmf3 = 17,
  kDataAmf0 = 18,
  kCommandAmf0 = 20,
  kAggregate = 22,
};

struct Message {
  uint32_t chunk_stream = 0;
  uint8_t type = 0;
  uint32_t stream_id = 0;  // the message stream (0 = the connection's control stream)
  uint32_t timestamp = 0;  // milliseconds, 32 bits, wrapping (see flv.h for the extension)
  std::string payload;
};

struct ChunkLimits {
  uint32_t max_chunk_size = 1 << 20;     // largest Set Chunk Size accepted (spec: 2^31-1)
  uint32_t max_message_size = 16 << 20;  // one message (a 4K key frame is a few MiB)
  size_t max_chunk_streams = 64;         // distinct chunk stream ids with state
  size_t max_buffered_bytes = 32 << 20;  // all partial messages together
};

class ChunkReader {
 public:
  explicit ChunkReader(ChunkLimits limits = {}) : limits_(limits) {}

  // Parses as much of `data` as forms whole chunks (the rest is kept for the next call) and
  // appends each completed message, except Set Chunk Size and Abort, to `out`.
  absl::Status Feed(std::span<const uint8_t> data, std::vector<Message>& out);
  // Feed in two steps, for a caller whose handling of one message changes how the next is
  // read (set_limits): Append keeps the bytes; Parse appends at most `max_messages`
  // messages to `out` and leaves the rest of the bytes for the next call.
  void Append(std::span<const uint8_t> data);
  absl::Status Parse(std::vector<Message>& out, size_t max_messages);

  // Replaces the limits for the messages whose first chunk comes after this call (a session
  // raises them once a publish is admitted). Messages already in progress keep the size
  // they were admitted with; the buffered total is checked against the new cap.
  void set_limits(const ChunkLimits& limits) { limits_ = limits; }
  const ChunkLimits& limits() const { return limits_; }

  uint32_t chunk_size() const { return chunk_size_; }
  uint64_t bytes_read() const { return bytes_read_; }  // everything fed so far (for acks)
  size_t buffered_bytes() const { return buffered_ + pending_.size() - pos_; }

 private:
  struct StreamState {
    bool seen = false;  // a format 0 header has set this chunk stream up
    uint32_t timestamp = 0;
    uint32_t delta = 0;
    uint32_t length = 0;
    uint8_t type = 0;
    uint32_t stream_id = 0;
    bool extended = false;  // the last header carried an extended timestamp
    std::string partial;    // payload so far of the message in progress
    bool in_progress = false;
  };
  // One chunk from pending_[pos_…]: 1 = parsed, 0 = needs more bytes, error otherwise.
  absl::Status ParseChunk(std::vector<Message>& out, bool& complete);
  absl::Status Control(const Message& m, bool& handled);

  ChunkLimits limits_;
  uint32_t chunk_size_ = 128;
  std::map<uint32_t, StreamState> streams_;
  std::string pending_;  // bytes not yet parsed (less than one chunk)
  size_t pos_ = 0;
  size_t buffered_ = 0;  // sum of StreamState::partial sizes
  uint64_t bytes_read_ = 0;
};

class ChunkWriter {
 public:
  // Appends `m` to `out` as chunks of the current chunk size on `m.chunk_stream`. `m` must
  // be shorter than 16 MiB (RTMP's 24-bit length): a longer one aborts (a bug of ours).
  void Write(const Message& m, std::string& out) const;
  void set_chunk_size(uint32_t size) { chunk_size_ = size; }
  uint32_t chunk_size() const { return chunk_size_; }

 private:
  uint32_t chunk_size_ = 128;
};

}  // namespace meshwork::rtmp
