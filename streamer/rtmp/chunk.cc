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
// Basic header (3) + format 0 message header (11) + extended timestamp (4).
constexpr size_t kMaxChunkHeaderSize = 18;

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
  return Feed(data, [&](Message& m) {
    out.push_back(std::move(m));
    return absl::OkStatus();
  });
}

absl::Status ChunkReader::Feed(std::span<const uint8_t> data, MessageFn on_message) {
  bytes_read_ += data.size();
  const uint8_t* in = data.data();
  size_t left = data.size();
  // A chunk cut by the end of the last read is completed in pending_, taking at most one
  // chunk's worth of the new bytes at a time; once parsing has moved past the old bytes it
  // goes on in place.
  while (!pending_.empty() && left > 0) {
    const size_t had = pending_.size();
    const size_t take = std::min<size_t>(left, kMaxChunkHeaderSize + chunk_size_);
    pending_.append(reinterpret_cast<const char*>(in), take);
    size_t used = 0;
    absl::Status status = ParseChunks(reinterpret_cast<const uint8_t*>(pending_.data()),
                                      pending_.size(), used, on_message);
    if (!status.ok()) return status;
    if (used >= had) {
      in += used - had;
      left -= used - had;
      pending_.clear();
    } else {  // still inside an old chunk (the chunk size grew): keep what was taken too
      pending_.erase(0, used);
      in += take;
      left -= take;
    }
  }
  if (!pending_.empty()) return absl::OkStatus();
  size_t used = 0;
  absl::Status status = ParseChunks(in, left, used, on_message);
  if (status.ok()) pending_.assign(reinterpret_cast<const char*>(in + used), left - used);
  return status;
}

absl::Status ChunkReader::ParseChunks(const uint8_t* p, size_t avail, size_t& used,
                                      MessageFn on_message) {
  used = 0;
  for (;;) {
    size_t one = 0;
    absl::Status status = ParseChunk(p + used, avail - used, one, on_message);
    used += one;
    if (!status.ok() || one == 0) return status;
  }
}

void ChunkReader::Release(StreamState& s) {
  buffered_ -= s.partial.size();
  charged_ -= s.charged;
  s.partial.clear();
  s.charged = 0;
  s.in_progress = false;
}

absl::Status ChunkReader::ParseChunk(const uint8_t* p, size_t avail, size_t& used,
                                     MessageFn on_message) {
  used = 0;
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
  // What the message counts against max_buffered_bytes: a new one its whole declared length
  // when that fits in half the budget (its buffer is then allocated once), else the bytes
  // it holds.
  const size_t old_charge = it != streams_.end() && it->second.in_progress ? it->second.charged : 0;
  const size_t others = charged_ - old_charge;
  const bool reserve = !continuation && others + next.length <= limits_.max_buffered_bytes / 2;
  const size_t charge =
      reserve ? next.length : std::max(continuation ? next.charged : 0, have + take);
  if (others + charge > limits_.max_buffered_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("partial messages exceed ", limits_.max_buffered_bytes, " bytes in all"));
  }
  if (it == streams_.end()) it = streams_.emplace(csid, StreamState{}).first;
  StreamState& state = it->second;
  if (abandon) Release(state);
  std::string partial;
  partial.swap(state.partial);
  if (reserve) partial.reserve(next.length);
  next.seen = true;
  partial.append(reinterpret_cast<const char*>(p + at), take);
  buffered_ += take;
  charged_ = charged_ - state.charged + charge;
  next.charged = charge;
  next.partial = std::move(partial);
  state = std::move(next);
  used = at + take;
  if (state.partial.size() < state.length) return absl::OkStatus();

  Message done{csid, state.type, state.stream_id, state.timestamp, std::move(state.partial)};
  buffered_ -= done.payload.size();
  state.partial.clear();
  charged_ -= state.charged;
  state.charged = 0;
  state.in_progress = false;
  bool handled = false;
  absl::Status status = Control(done, handled);
  if (!status.ok() || handled) return status;
  return on_message(done);
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
    if (it != streams_.end() && it->second.in_progress) Release(it->second);
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
