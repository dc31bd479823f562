// Shared by the RTMP chunk tests: chunk headers written by hand (RTMP 1.0 section 5.3),
// payloads, feeding a reader and comparing what it gave.
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "streamer/rtmp/chunk.h"
#include "tests/unit/streamer/rtmp/bytes_util.h"

namespace meshwork::rtmp::test {

inline void Le32(std::string& b, uint32_t v) {
  b += {char(v), char(v >> 8), char(v >> 16), char(v >> 24)};
}

inline void Basic(std::string& b, int fmt, uint32_t csid) {
  if (csid <= 63) {
    U8(b, (fmt << 6) | csid);
  } else if (csid <= 319) {
    U8(b, fmt << 6);
    U8(b, csid - 64);
  } else {
    U8(b, (fmt << 6) | 1);
    U8(b, (csid - 64) & 0xFF);
    U8(b, (csid - 64) >> 8);
  }
}
// The 24-bit field, then (after the rest of the header) the extended timestamp if needed.
inline void Time24(std::string& b, uint32_t t) { U24(b, t >= 0xFFFFFF ? 0xFFFFFF : t); }
inline void Ext(std::string& b, uint32_t t) {
  if (t >= 0xFFFFFF) U32(b, t);
}
inline void Fmt0(std::string& b, uint32_t csid, uint32_t ts, uint32_t len, uint8_t type,
                 uint32_t sid) {
  Basic(b, 0, csid);
  Time24(b, ts);
  U24(b, len);
  U8(b, type);
  Le32(b, sid);
  Ext(b, ts);
}
inline void Fmt1(std::string& b, uint32_t csid, uint32_t delta, uint32_t len, uint8_t type) {
  Basic(b, 1, csid);
  Time24(b, delta);
  U24(b, len);
  U8(b, type);
  Ext(b, delta);
}
inline void Fmt2(std::string& b, uint32_t csid, uint32_t delta) {
  Basic(b, 2, csid);
  Time24(b, delta);
  Ext(b, delta);
}
// A protocol control message (Set Chunk Size, Abort) on chunk stream 2, message stream 0.
inline void Control(std::string& b, uint8_t type, uint32_t value, uint32_t len = 4) {
  Fmt0(b, 2, 0, len, type, 0);
  for (uint32_t i = 0; i < len; ++i) U8(b, (value >> (8 * (3 - i))) & 0xFF);
}

inline std::string Payload(size_t n, int seed) {
  std::string p;
  for (size_t i = 0; i < n; ++i) p.push_back(static_cast<char>((i * 7 + seed * 31) & 0xFF));
  return p;
}

struct Fed {
  absl::Status status;
  std::vector<Message> messages;
};
inline Fed FeedAll(ChunkReader& r, std::string_view bytes) {
  Fed f;
  f.status = r.Feed(Span(bytes), f.messages);
  return f;
}
inline Fed FeedBytewise(ChunkReader& r, std::string_view bytes) {
  Fed f;
  for (size_t i = 0; i < bytes.size() && f.status.ok(); ++i) {
    f.status = r.Feed(Span(bytes.substr(i, 1)), f.messages);
  }
  return f;
}

inline Message Msg(uint32_t csid, uint8_t type, uint32_t sid, uint32_t ts, std::string payload) {
  return Message{csid, type, sid, ts, std::move(payload)};
}
inline void Expect(const std::vector<Message>& got, const std::vector<Message>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("message " << i);
    CHECK(got[i].chunk_stream == want[i].chunk_stream);
    CHECK(int{got[i].type} == int{want[i].type});
    CHECK(got[i].stream_id == want[i].stream_id);
    CHECK(got[i].timestamp == want[i].timestamp);
    CHECK(got[i].payload.size() == want[i].payload.size());
    CHECK((got[i].payload == want[i].payload));
  }
}
inline void ExpectError(const absl::Status& s, std::string_view needle) {
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  const std::string message(s.message());
  INFO(message);
  CHECK(message.find(needle) != std::string::npos);
}

}  // namespace meshwork::rtmp::test
