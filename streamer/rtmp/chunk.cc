#include "streamer/rtmp/chunk.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "absl/strings/str_cat.h"

namespace meshwork::rtmp {
namespace {

constexpr size_t kMessageHeaderSize[4] = {11, 7, 3, 0};
constexpr uint32_t kExtendedMarker = 0xFFFFFF;

uint32_t Be24(const uint8_t* p) { return (p[0] << 16) | (p[1] << 8) | p[2]; }
uint32_t Be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}
uint32_t Le32(const uint8_t* p) {
  return (uint32_t{p[3]} << 24) | (uint32_t{p[2]} << 16) | (uint32_t{p[1]} << 8) | p[0];
}
void PutBe24(std::string& out, uint32_t v) {
  out.push_back(static_cast<char>(v >> 16));
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v));
}
void PutBe32(std::string& out, uint32_t v) {
  out.push_back(static_cast<char>(v >> 24));
  PutBe24(out, v);
}
void PutBasicHeader(std::string& out, int fmt, uint32_t csid) {
  if (csid < 64) {
    out.push_back(static_cast<char>((fmt << 6) | csid));
  } else if (csid < 320) {
    out.push_back(static_cast<char>(fmt << 6));
    out.push_back(static_cast<char>(csid - 64));
  } else {
    out.push_back(static_cast<char>((fmt << 6) | 1));
    out.push_back(static_cast<char>((csid - 64) & 0xff));
    out.push_back(static_cast<char>((csid - 64) >> 8));
  }
}

}  // namespace

absl::Status ChunkReader::Feed(std::span<const uint8_t> data, std::vector<Message>& out) {
  Append(data);
  return Parse(out, SIZE_MAX);
}

void ChunkReader::Append(std::span<const uint8_t> data) {
  bytes_read_ += data.size();
  pending_.append(reinterpret_cast<const char*>(data.data()), data.size());
}

absl::Status ChunkReader::Parse(std::vector<Message>& out, size_t max_messages) {
  const size_t had = out.size();
  absl::Status status;
  while (status.ok() && out.size() - had < max_messages) {
    bool complete = false;
    status = ParseChunk(out, complete);
    if (!complete) {
      // Out of whole chunks: drop what was parsed (once per read, not once per message).
      pending_.erase(0, pos_);
      pos_ = 0;
      break;
    }
  }
  return status;
}

absl::Status ChunkReader::ParseChunk(std::vector<Message>& out, bool& complete) {
  complete = false;
  const uint8_t* p = reinterpret_cast<const uint8_t*>(pending_.data()) + pos_;
  const size_t avail = pending_.size() - pos_;
  if (avail < 1) return absl::OkStatus();
  const int fmt = p[0] >> 6;
  uint32_t csid = p[0] & 0x3f;
  size_t at = 1;
  if (csid == 0) {
    if (avail < 2) return absl::OkStatus();
    csid = 64 + p[1];
    at = 2;
  } else if (csid == 1) {
    if (avail < 3) return absl::OkStatus();
    csid = 64 + p[1] + (uint32_t{p[2]} << 8);
    at = 3;
  }
  if (avail < at + kMessageHeaderSize[fmt]) return absl::OkStatus();

  auto it = streams_.find(csid);
  if (it == streams_.end()) {
    if (fmt != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "chunk stream ", csid, " begins with a format ", fmt, " header (format 0 expected)"));
    }
    if (streams_.size() >= limits_.max_chunk_streams) {
      return absl::InvalidArgumentError(
          absl::StrCat("more than ", limits_.max_chunk_streams, " chunk streams"));
    }
  }
  // The header state without the payload so far: that stays in streams_ until the whole
  // chunk is here (copying it for every chunk made reassembly quadratic in the message size).
  StreamState next;
  if (it != streams_.end()) {
    std::string partial;
    partial.swap(it->second.partial);
    next = it->second;
    it->second.partial.swap(partial);
  }
  size_t have = it == streams_.end() ? 0 : it->second.partial.size();
  // The 24-bit timestamp (or delta) field, and what the header sets.
  uint32_t field = 0;
  if (fmt <= 2) field = Be24(p + at);
  if (fmt <= 1) {
    next.length = Be24(p + at + 3);
    next.type = p[at + 6];
  }
  if (fmt == 0) next.stream_id = Le32(p + at + 7);
  at += kMessageHeaderSize[fmt];
  const bool extended = fmt <= 2 ? field == kExtendedMarker : next.extended;
  if (extended) {
    if (avail < at + 4) return absl::OkStatus();
    if (fmt <= 2) field = Be32(p + at);
    at += 4;
  }
  next.extended = extended;
  const bool continuation = fmt == 3 && next.in_progress;
  // A new header abandons the message in progress (once the chunk is whole: until then
  // nothing changes, as the chunk is parsed again from its start).
  const bool abandon = !continuation && next.in_progress;
  if (abandon) have = 0;
  if (!continuation) {
    switch (fmt) {
      case 0:
        next.timestamp = field;
        next.delta = field;  // as FFmpeg and librtmp: a format 3 message after it adds it
        break;
      case 1:
      case 2:
        next.delta = field;
        next.timestamp += field;
        break;
      default:
        next.timestamp += next.delta;
    }
    if (next.length > limits_.max_message_size) {
      return absl::InvalidArgumentError(
          absl::StrCat("message of ", next.length, " bytes on chunk stream ", csid,
                       " exceeds the limit of ", limits_.max_message_size));
    }
    next.in_progress = true;
  }
  const size_t take = std::min<size_t>(chunk_size_, next.length - have);
  if (avail < at + take) return absl::OkStatus();
  const size_t dropped = abandon ? it->second.partial.size() : 0;
  if (buffered_ - dropped + take > limits_.max_buffered_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("partial messages exceed ", limits_.max_buffered_bytes, " bytes in all"));
  }
  std::string partial;
  if (it != streams_.end()) partial.swap(it->second.partial);
  if (abandon) partial.clear();
  buffered_ -= dropped;
  next.seen = true;
  partial.append(reinterpret_cast<const char*>(p + at), take);
  buffered_ += take;
  pos_ += at + take;
  complete = true;

  std::optional<Message> done;
  if (partial.size() == next.length) {
    buffered_ -= partial.size();
    done = Message{csid, next.type, next.stream_id, next.timestamp, std::move(partial)};
    partial.clear();
    next.in_progress = false;
  }
  next.partial = std::move(partial);
  streams_[csid] = std::move(next);
  if (!done) return absl::OkStatus();
  bool handled = false;
  absl::Status status = Control(*done, handled);
  if (!handled) out.push_back(std::move(*done));
  return status;
}

absl::Status ChunkReader::Control(const Message& m, bool& handled) {
  if (m.type != kSetChunkSize && m.type != kAbort) return absl::OkStatus();
  handled = true;
  if (m.payload.size() < 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("protocol control message ", int{m.type}, " shorter than 4 bytes"));
  }
  const uint32_t value = Be32(reinterpret_cast<const uint8_t*>(m.payload.data()));
  if (m.type == kAbort) {
    auto it = streams_.find(value);
    if (it != streams_.end() && it->second.in_progress) {
      buffered_ -= it->second.partial.size();
      it->second.partial.clear();
      it->second.in_progress = false;
    }
    return absl::OkStatus();
  }
  if (value == 0 || value >= (1u << 31) || value > limits_.max_chunk_size) {  // top bit reserved
    return absl::InvalidArgumentError(
        absl::StrCat("chunk size ", value, " outside 1…", limits_.max_chunk_size));
  }
  chunk_size_ = value;
  return absl::OkStatus();
}

void ChunkWriter::Write(const Message& m, std::string& out) const {
  // Only this server's own messages come here: commands and controls of a few hundred bytes.
  if (m.payload.size() >= (1u << 24)) {
    std::fprintf(stderr, "ChunkWriter: a %zu-byte message cannot be framed\n", m.payload.size());
    std::abort();
  }
  const bool extended = m.timestamp >= kExtendedMarker;
  PutBasicHeader(out, 0, m.chunk_stream);
  PutBe24(out, extended ? kExtendedMarker : m.timestamp);
  PutBe24(out, static_cast<uint32_t>(m.payload.size()));
  out.push_back(static_cast<char>(m.type));
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(m.stream_id >> (8 * i)));
  if (extended) PutBe32(out, m.timestamp);
  size_t at = 0;
  do {
    if (at > 0) {
      PutBasicHeader(out, 3, m.chunk_stream);
      if (extended) PutBe32(out, m.timestamp);
    }
    const size_t take = std::min<size_t>(chunk_size_, m.payload.size() - at);
    out.append(m.payload, at, take);
    at += take;
  } while (at < m.payload.size());
}

}  // namespace meshwork::rtmp
