// The RTMP chunk stream: messages cut into chunks of the sender's chunk size, interleaved
// across chunk streams, each chunk headed by a basic header (format and chunk stream id)
// and a message header of 11, 7, 3 or 0 bytes that says only what changed, plus a 32-bit
// extended timestamp when the 24-bit field reads 0xFFFFFF.
//
// ChunkReader reassembles what a peer sends, parsing the caller's bytes in place (P-7: the
// input is copied once, into the message it belongs to, whose buffer is reserved at its
// declared length when that fits the budget). It applies the two protocol control messages
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

#include "absl/functional/function_ref.h"
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
  using MessageFn = absl::FunctionRef<absl::Status(Message&)>;
  explicit ChunkReader(ChunkLimits limits = {}) : limits_(limits) {}

  // Parses `data` chunk by chunk in place (only a chunk cut by the end of `data` is kept, for
  // the next call) and hands each completed message, except Set Chunk Size and Abort, to
  // `on_message` as soon as it completes, so a handler that calls set_limits changes how the
  // very next chunk is read. Parsing stops at the first error, the reader's or the
  // handler's, and returns it; the reader is then not to be fed again.
  absl::Status Feed(std::span<const uint8_t> data, MessageFn on_message);
  // The same, collecting the messages into `out`.
  absl::Status Feed(std::span<const uint8_t> data, std::vector<Message>& out);

  // Replaces the limits for the messages whose first chunk comes after this call (a session
  // raises them once a publish is admitted). Messages already in progress keep the size
  // they were admitted with; the buffered total is checked against the new cap.
  void set_limits(const ChunkLimits& limits) { limits_ = limits; }
  const ChunkLimits& limits() const { return limits_; }

  uint32_t chunk_size() const { return chunk_size_; }
  uint64_t bytes_read() const { return bytes_read_; }  // everything fed so far (for acks)
  // Bytes held: the payloads of partial messages so far, and a cut chunk's bytes.
  size_t buffered_bytes() const { return buffered_ + pending_.size(); }

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
    size_t charged = 0;     // what the message in progress counts against max_buffered_bytes
    bool in_progress = false;
  };
  // One chunk from p[0…avail): sets `used` to its size once it is whole (0: needs more
  // bytes; nothing changes until then, as the chunk is parsed again from its start).
  absl::Status ParseChunk(const uint8_t* p, size_t avail, size_t& used, MessageFn on_message);
  // Parses whole chunks from p[0…avail) and sets `used` to the bytes they took.
  absl::Status ParseChunks(const uint8_t* p, size_t avail, size_t& used, MessageFn on_message);
  absl::Status Control(const Message& m, bool& handled);
  void Release(StreamState& s);  // the message in progress is done or dropped

  ChunkLimits limits_;
  uint32_t chunk_size_ = 128;
  std::map<uint32_t, StreamState> streams_;
  std::string pending_;  // the start of a chunk cut by the end of the last Feed
  size_t buffered_ = 0;  // sum of StreamState::partial sizes
  size_t charged_ = 0;   // sum of StreamState::charged: partial messages' memory (≥ buffered_)
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
