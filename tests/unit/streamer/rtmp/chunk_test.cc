// S-1 RTMP chunk stream, R-2/R-3 its limits. The wire bytes are written by hand from the
// RTMP 1.0 specification (section 5.3): a basic header of 1, 2 or 3 bytes (format in the top
// two bits; chunk stream id 2..63 inline, 0 → one more byte + 64, 1 → two more bytes,
// little-endian, + 64), a message header of 11/7/3/0 bytes (24-bit big-endian timestamp or
// delta, 24-bit length, type, 32-bit little-endian message stream id), then a 32-bit
// extended timestamp when the 24-bit field reads 0xFFFFFF, on format 3 chunks too.
#include "streamer/rtmp/chunk.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tests/unit/streamer/rtmp/chunk_test_util.h"

namespace meshwork::rtmp {
namespace {

using namespace test;

TEST_CASE("S-1 RTMP chunks: basic headers of 1, 2 and 3 bytes carry chunk stream ids 2 to 65599") {
  struct Case {
    std::string basic;
    uint32_t csid;
  };
  const std::vector<Case> cases = {
      {std::string("\x02", 1), 2},
      {std::string("\x3f", 1), 63},
      {std::string("\x00\x00", 2), 64},
      {std::string("\x00\xff", 2), 319},
      {std::string("\x01\x00\x01", 3), 320},
      {std::string("\x01\x2c\x01", 3), 64 + 0x12c},
      {std::string("\x01\xff\xff", 3), 65599},
  };
  for (const auto& c : cases) {
    INFO("csid " << c.csid);
    // Format 0: timestamp 0x123456, length 3, type 20, stream id 0x12345678 little-endian.
    std::string b = c.basic + std::string("\x12\x34\x56\x00\x00\x03\x14\x78\x56\x34\x12", 11);
    b += "abc";
    ChunkReader r;
    auto f = FeedAll(r, b);
    REQUIRE(f.status.ok());
    Expect(f.messages, {Msg(c.csid, kCommandAmf0, 0x12345678, 0x123456, "abc")});
    CHECK(r.bytes_read() == b.size());
    CHECK(r.buffered_bytes() == 0);
  }
}

TEST_CASE("S-5 RTMP timestamps: format 1 and 2 deltas accumulate and format 3 repeats the delta") {
  std::string b;
  Fmt0(b, 5, 1000, 2, kAudio, 1);
  b += "a0";
  Fmt1(b, 5, 40, 3, kVideo);  // new length and type
  b += "v01";
  Fmt2(b, 5, 20);  // same length and type
  b += "v02";
  Basic(b, 3, 5);  // a new message: the last delta again
  b += "v03";
  Basic(b, 3, 5);
  b += "v04";
  ChunkReader r;
  auto f = FeedAll(r, b);
  REQUIRE(f.status.ok());
  Expect(f.messages, {Msg(5, kAudio, 1, 1000, "a0"), Msg(5, kVideo, 1, 1040, "v01"),
                      Msg(5, kVideo, 1, 1060, "v02"), Msg(5, kVideo, 1, 1080, "v03"),
                      Msg(5, kVideo, 1, 1100, "v04")});
}

TEST_CASE("S-5 RTMP timestamps: a format 3 message after a format 0 one adds its timestamp") {
  // RTMP 1.0 5.3.1.2.4: the delta of a type 3 chunk after a type 0 one is that timestamp.
  std::string b;
  Fmt0(b, 3, 100, 1, kDataAmf0, 1);
  b += "x";
  Basic(b, 3, 3);
  b += "y";
  ChunkReader r;
  auto f = FeedAll(r, b);
  REQUIRE(f.status.ok());
  Expect(f.messages, {Msg(3, kDataAmf0, 1, 100, "x"), Msg(3, kDataAmf0, 1, 200, "y")});
}

TEST_CASE("S-1 RTMP chunks: a message is split into 128-byte chunks with format 3 continuations") {
  const std::string p = Payload(300, 1);
  std::string b("\x06\x00\x00\x28\x00\x01\x2c\x09\x01\x00\x00\x00", 12);  // csid 6, ts 40
  b += p.substr(0, 128);
  b += '\xc6';
  b += p.substr(128, 128);
  b += '\xc6';
  b += p.substr(256);
  ChunkReader r;
  std::vector<Message> out;
  // Everything but the last byte: nothing yet, the two whole chunks are held.
  REQUIRE(r.Feed(Span(b).first(b.size() - 1), out).ok());
  CHECK(out.empty());
  CHECK(r.buffered_bytes() == 256 + 44);  // two chunks' payload, the third's bytes so far
  REQUIRE(r.Feed(Span(b).last(1), out).ok());
  Expect(out, {Msg(6, kVideo, 1, 40, p)});
  CHECK(r.buffered_bytes() == 0);
}

TEST_CASE("S-1 RTMP chunks: Set Chunk Size applies to the very next chunk in the same Feed") {
  const std::string p = Payload(300, 2);
  std::string b;
  Control(b, kSetChunkSize, 200);
  Fmt0(b, 6, 0, 300, kVideo, 1);
  b += p.substr(0, 200);
  Basic(b, 3, 6);
  b += p.substr(200);
  ChunkReader r;
  auto f = FeedAll(r, b);
  REQUIRE(f.status.ok());
  Expect(f.messages, {Msg(6, kVideo, 1, 0, p)});  // Set Chunk Size itself is not handed up
  CHECK(r.chunk_size() == 200);
}

TEST_CASE("S-1 RTMP chunks: two chunk streams interleave mid-message") {
  const std::string audio = Payload(200, 3), video = Payload(250, 4);
  std::string b;
  Fmt0(b, 4, 10, 200, kAudio, 1);
  b += audio.substr(0, 128);
  Fmt0(b, 6, 20, 250, kVideo, 1);
  b += video.substr(0, 128);
  Basic(b, 3, 4);
  b += audio.substr(128);
  Basic(b, 3, 6);
  b += video.substr(128);
  ChunkReader r;
  auto f = FeedAll(r, b);
  REQUIRE(f.status.ok());
  Expect(f.messages, {Msg(4, kAudio, 1, 10, audio), Msg(6, kVideo, 1, 20, video)});
}

TEST_CASE("S-1 RTMP chunks: Abort discards the partial message of the chunk stream it names") {
  std::string b;
  Fmt0(b, 6, 0, 300, kVideo, 1);
  b += Payload(128, 5);
  ChunkReader r;
  auto f = FeedAll(r, b);
  REQUIRE(f.status.ok());
  CHECK(r.buffered_bytes() == 128);
  b.clear();
  Control(b, kAbort, 6);
  Fmt0(b, 6, 40, 3, kVideo, 1);  // the next message starts afresh
  b += "new";
  f = FeedAll(r, b);
  REQUIRE(f.status.ok());
  Expect(f.messages, {Msg(6, kVideo, 1, 40, "new")});
  CHECK(r.buffered_bytes() == 0);
}

// A stream exercising every rule at once, with the messages it must give.
std::string Everything(std::vector<Message>& want) {
  const std::string a1 = Payload(200, 6), v1 = Payload(300, 7), big = Payload(250, 8);
  std::string b;
  Fmt0(b, 4, 10, 200, kAudio, 1);
  b += a1.substr(0, 128);
  Fmt0(b, 300, 0x01000000, 300, kVideo, 1);  // 2-byte basic header, extended timestamp
  b += v1.substr(0, 128);
  Basic(b, 3, 4);
  b += a1.substr(128);
  want.push_back(Msg(4, kAudio, 1, 10, a1));
  Control(b, kSetChunkSize, 100);
  Basic(b, 3, 300);
  U32(b, 0x01000000);  // the continuation repeats the extended timestamp
  b += v1.substr(128, 100);
  Basic(b, 3, 300);
  U32(b, 0x01000000);
  b += v1.substr(228);
  want.push_back(Msg(300, kVideo, 1, 0x01000000, v1));
  Fmt1(b, 4, 20, 150, kAudio);  // 100 bytes of it, then a new header abandons it
  b += Payload(100, 9);
  Fmt0(b, 4, 500, 10, kAudio, 1);
  b += "abandoned!";
  want.push_back(Msg(4, kAudio, 1, 500, "abandoned!"));
  Fmt0(b, 65530, 600, 250, kVideo, 1);  // 3-byte basic header
  b += big.substr(0, 100);
  Basic(b, 1, 2);  // Abort on chunk stream 2 with a format 1 header
  U24(b, 0);
  U24(b, 4);
  U8(b, kAbort);
  U32(b, 65530);
  Fmt0(b, 65530, 700, 5, kVideo, 1);
  b += "after";
  want.push_back(Msg(65530, kVideo, 1, 700, "after"));
  Basic(b, 3, 4);  // a new message: delta 500 again
  b += "third-msg!";
  want.push_back(Msg(4, kAudio, 1, 1000, "third-msg!"));
  return b;
}

TEST_CASE("S-1 RTMP chunks: one byte at a time gives the same messages as all at once") {
  std::vector<Message> want;
  const std::string b = Everything(want);
  ChunkReader whole, bytewise;
  auto f1 = FeedAll(whole, b);
  REQUIRE(f1.status.ok());
  Expect(f1.messages, want);
  auto f2 = FeedBytewise(bytewise, b);
  REQUIRE(f2.status.ok());
  Expect(f2.messages, want);
  for (ChunkReader* r : {&whole, &bytewise}) {
    CHECK(r->chunk_size() == 100);
    CHECK(r->bytes_read() == b.size());
    CHECK(r->buffered_bytes() == 0);
  }
}

TEST_CASE("S-5 RTMP timestamps: an extended timestamp follows format 0 and its continuations") {
  const std::string p = Payload(200, 10);
  // The 24-bit field 0xFFFFFF itself needs the extended form.
  for (uint32_t ts : {0xFFFFFFu, 0x01000000u, 0xFEDCBA98u}) {
    INFO("timestamp " << ts);
    std::string b("\x05\xff\xff\xff\x00\x00\xc8\x09\x01\x00\x00\x00", 12);
    U32(b, ts);
    b += p.substr(0, 128);
    b += '\xc5';
    U32(b, ts);  // a format 3 continuation carries the 4 bytes too
    b += p.substr(128);
    ChunkReader r;
    auto f = FeedAll(r, b);
    REQUIRE(f.status.ok());
    Expect(f.messages, {Msg(5, kVideo, 1, ts, p)});
    CHECK(r.buffered_bytes() == 0);
  }
}

TEST_CASE("S-5 RTMP timestamps: extended deltas and crossing 2^32 wrap the 32-bit timestamp") {
  std::string b;
  Fmt0(b, 4, 0xFFFFFFF0u, 1, kAudio, 1);
  b += "a";
  Fmt2(b, 4, 0x20);  // crosses 2^32
  b += "b";
  Fmt1(b, 4, 0x01000000, 2, kAudio);  // an extended delta
  b += "cd";
  Basic(b, 3, 4);  // a new message: the extended delta again, its 4 bytes present
  U32(b, 0x01000000);
  b += "ef";
  ChunkReader r;
  auto f = FeedAll(r, b);
  REQUIRE(f.status.ok());
  Expect(f.messages, {Msg(4, kAudio, 1, 0xFFFFFFF0u, "a"), Msg(4, kAudio, 1, 0x10, "b"),
                      Msg(4, kAudio, 1, 0x01000010, "cd"), Msg(4, kAudio, 1, 0x02000010, "ef")});
}

TEST_CASE("R-2 RTMP chunks: a message longer than max_message_size is refused") {
  ChunkLimits limits;
  limits.max_message_size = 1000;
  std::string ok;
  Fmt0(ok, 4, 0, 1000, kVideo, 1);
  ok += Payload(1000, 11).substr(0, 128);
  ChunkReader r1(limits);
  CHECK(FeedAll(r1, ok).status.ok());
  std::string b;
  Fmt0(b, 4, 0, 1001, kVideo, 1);
  ChunkReader r2(limits);
  auto f = FeedAll(r2, b);
  ExpectError(f.status, "message of 1001 bytes on chunk stream 4");
  ExpectError(f.status, "limit of 1000");
}

TEST_CASE("R-2 RTMP chunks: a Set Chunk Size of 0, above max_chunk_size or short is refused") {
  ChunkLimits limits;
  limits.max_chunk_size = 4096;
  for (uint32_t size : {0u, 4097u, 0x80000080u, 0xFFFFFFFFu}) {
    INFO("size " << size);
    std::string b;
    Control(b, kSetChunkSize, size);
    ChunkReader r(limits);
    auto f = FeedAll(r, b);
    ExpectError(f.status, "chunk size " + std::to_string(size));
    CHECK(r.chunk_size() == 128);
  }
  std::string b;
  Control(b, kSetChunkSize, 4096);
  ChunkReader r(limits);
  REQUIRE(FeedAll(r, b).status.ok());
  CHECK(r.chunk_size() == 4096);
  // With the default limits too (1 MiB): the reserved top bit is refused.
  std::string top;
  Control(top, kSetChunkSize, 0x80000000u);
  ChunkReader d;
  ExpectError(FeedAll(d, top).status, "chunk size");
  for (uint8_t type : {kSetChunkSize, kAbort}) {  // and so is a value of 3 bytes
    std::string b;
    Control(b, type, 0x000100, 3);
    ChunkReader r;
    ExpectError(FeedAll(r, b).status, "shorter than 4 bytes");
  }
}

TEST_CASE("R-2 RTMP chunks: a chunk stream whose first chunk is not format 0 is refused") {
  std::vector<std::string> firsts(3);
  Fmt1(firsts[0], 7, 0, 1, kAudio);
  Fmt2(firsts[1], 7, 0);
  Basic(firsts[2], 3, 7);
  for (int fmt = 1; fmt <= 3; ++fmt) {
    std::string b = firsts[fmt - 1] + "x";
    ChunkReader r;
    auto f = FeedAll(r, b);
    ExpectError(f.status, "chunk stream 7 begins with a format " + std::to_string(fmt));
    CHECK(f.messages.empty());
  }
}

TEST_CASE("R-3 RTMP chunks: more chunk streams than max_chunk_streams are refused") {
  ChunkLimits limits;
  limits.max_chunk_streams = 3;
  ChunkReader r(limits);
  std::string b;
  for (uint32_t csid : {3u, 4u, 5u, 3u}) {  // the 4th reuses a known chunk stream
    Fmt0(b, csid, 0, 1, kAudio, 1);
    b += "x";
  }
  auto f = FeedAll(r, b);
  REQUIRE(f.status.ok());
  CHECK(f.messages.size() == 4);
  b.clear();
  Fmt0(b, 6, 0, 1, kAudio, 1);
  b += "x";
  ExpectError(FeedAll(r, b).status, "more than 3 chunk streams");
}

TEST_CASE("R-3 RTMP chunks: partial messages beyond max_buffered_bytes in all are refused") {
  ChunkLimits limits;
  limits.max_buffered_bytes = 300;
  ChunkReader r(limits);
  std::string b;
  for (uint32_t csid : {4u, 5u}) {
    Fmt0(b, csid, 0, 1000, kVideo, 1);
    b += Payload(128, 12);
  }
  REQUIRE(FeedAll(r, b).status.ok());
  CHECK(r.buffered_bytes() == 256);
  b.clear();
  Fmt0(b, 6, 0, 1000, kVideo, 1);
  b += Payload(128, 13);
  ExpectError(FeedAll(r, b).status, "partial messages exceed 300 bytes");
}

TEST_CASE(
    "R-3 RTMP chunks: a multi-megabyte message in 128-byte chunks reassembles in linear time") {
  // 64K chunks. No clock here (tests never fail on absolute times): a reader that copied the
  // message so far for every chunk needs minutes for this (over a minute measured, more than
  // ten under ASan), which the test's ctest timeout turns into a failure.
  const std::string p = Payload(8 << 20, 14);
  Message m = Msg(6, kVideo, 1, 0, p);
  std::string b;
  ChunkWriter().Write(m, b);
  ChunkReader r;
  auto f = FeedAll(r, b);
  REQUIRE(f.status.ok());
  Expect(f.messages, {m});
}

TEST_CASE("S-1 RTMP chunks: ChunkWriter writes format 0 then format 3 continuation headers") {
  const std::string p = Payload(300, 15);
  std::string want("\x03\x00\x03\xe8\x00\x01\x2c\x14\x01\x00\x00\x00", 12);  // ts 1000, len 300
  want += p.substr(0, 128) + '\xc3' + p.substr(128, 128) + '\xc3' + p.substr(256);
  std::string got;
  ChunkWriter().Write(Msg(3, kCommandAmf0, 1, 1000, p), got);
  CHECK((got == want));
  // An empty message is a format 0 header alone.
  got.clear();
  ChunkWriter().Write(Msg(2, kUserControl, 0, 0, ""), got);
  CHECK((got == std::string("\x02\x00\x00\x00\x00\x00\x00\x04\x00\x00\x00\x00", 12)));
}

TEST_CASE("S-1 RTMP chunks: ChunkWriter uses 2- and 3-byte basic headers for large ids") {
  struct Case {
    uint32_t csid;
    std::string first, cont;
  };
  const std::vector<Case> cases = {
      {64, std::string("\x00\x00", 2), std::string("\xc0\x00", 2)},
      {319, std::string("\x00\xff", 2), std::string("\xc0\xff", 2)},
      {320, std::string("\x01\x00\x01", 3), std::string("\xc1\x00\x01", 3)},
      {65599, std::string("\x01\xff\xff", 3), std::string("\xc1\xff\xff", 3)},
  };
  const std::string p = Payload(130, 16);
  for (const auto& c : cases) {
    INFO("csid " << c.csid);
    std::string want = c.first + std::string("\x00\x00\x07\x00\x00\x82\x08\x01\x00\x00\x00", 11);
    want += p.substr(0, 128) + c.cont + p.substr(128);
    std::string got;
    ChunkWriter().Write(Msg(c.csid, kAudio, 1, 7, p), got);
    CHECK((got == want));
  }
}

TEST_CASE("S-5 RTMP timestamps: ChunkWriter repeats the extended timestamp in continuations") {
  const std::string p = Payload(200, 17);
  std::string want("\x04\xff\xff\xff\x00\x00\xc8\x09\x01\x00\x00\x00\x12\x34\x56\x78", 16);
  want += p.substr(0, 128) + std::string("\xc4\x12\x34\x56\x78", 5) + p.substr(128);
  std::string got;
  ChunkWriter().Write(Msg(4, kVideo, 1, 0x12345678, p), got);
  CHECK((got == want));
  got.clear();  // 0xFFFFFF is already extended, 0xFFFFFE is not
  ChunkWriter().Write(Msg(4, kVideo, 1, 0xFFFFFF, "x"), got);
  CHECK((got ==
         std::string("\x04\xff\xff\xff\x00\x00\x01\x09\x01\x00\x00\x00\x00\xff\xff\xffx", 17)));
  got.clear();
  ChunkWriter().Write(Msg(4, kVideo, 1, 0xFFFFFE, "x"), got);
  CHECK((got == std::string("\x04\xff\xff\xfe\x00\x00\x01\x09\x01\x00\x00\x00x", 13)));
}

TEST_CASE("S-1 RTMP chunks: ChunkWriter cuts at the size given to set_chunk_size") {
  ChunkWriter w;
  w.set_chunk_size(4096);
  CHECK(w.chunk_size() == 4096);
  const std::string p = Payload(5000, 18);
  std::string got;
  w.Write(Msg(6, kVideo, 1, 0, p), got);
  REQUIRE(got.size() == 12 + 5000 + 1);
  CHECK(got.substr(12, 4096) == p.substr(0, 4096));
  CHECK(got[12 + 4096] == '\xc6');
  CHECK(got.substr(12 + 4097) == p.substr(4096));
}

TEST_CASE("S-1 RTMP chunks: messages written by ChunkWriter read back unchanged") {
  const std::vector<Message> msgs = {
      Msg(3, kCommandAmf0, 0, 0, Payload(20, 19)),
      Msg(4, kAudio, 1, 23, Payload(300, 20)),
      Msg(64, kVideo, 1, 0xFFFFFF, Payload(129, 21)),
      Msg(65599, kVideo, 0x01020304, 0xFFFFFFFFu, Payload(1000, 22)),
      Msg(6, kDataAmf0, 1, 5, ""),
  };
  for (uint32_t size : {1u, 128u, 4096u}) {
    INFO("chunk size " << size);
    ChunkWriter w;
    std::string b;
    w.Write(Msg(2, kSetChunkSize, 0, 0, std::string("\0\0", 2) + char(size >> 8) + char(size)), b);
    w.set_chunk_size(size);
    for (const auto& m : msgs) w.Write(m, b);
    ChunkReader whole, bytewise;
    auto f1 = FeedAll(whole, b);
    REQUIRE(f1.status.ok());
    Expect(f1.messages, msgs);
    auto f2 = FeedBytewise(bytewise, b);
    REQUIRE(f2.status.ok());
    Expect(f2.messages, msgs);
  }
}

TEST_CASE("R-3 RTMP chunks: each message is handed out as it completes and new limits apply next") {
  ChunkWriter w;
  std::string b;
  w.Write(Msg(3, kCommandAmf0, 0, 0, Payload(100, 1)), b);
  w.Write(Msg(4, kVideo, 1, 0, Payload(5000, 2)), b);
  ChunkReader r(ChunkLimits{.max_message_size = 1000});
  std::vector<Message> out;
  auto handler = [&](Message& m) {
    out.push_back(std::move(m));
    // With the old limit the 5000-byte message would be refused; raised, it is read.
    if (out.size() == 1) r.set_limits(ChunkLimits{.max_message_size = 8000});
    return absl::OkStatus();
  };
  REQUIRE(r.Feed(Span(b), handler).ok());
  REQUIRE(out.size() == 2);
  CHECK(out[0].payload == Payload(100, 1));
  CHECK(out[1].payload == Payload(5000, 2));
  CHECK(r.buffered_bytes() == 0);
  // A handler's error stops the parse there: the message after it is not handed out.
  ChunkReader r2(ChunkLimits{.max_message_size = 8000});
  int calls = 0;
  absl::Status s = r2.Feed(Span(b), [&](Message&) {
    ++calls;
    return absl::PermissionDeniedError("no");
  });
  CHECK(s.code() == absl::StatusCode::kPermissionDenied);
  CHECK(calls == 1);
}

TEST_CASE("R-3 RTMP chunks: a message's memory reserved at its declared length counts in full") {
  // A 300-byte message fits half the 600-byte budget: its buffer is allocated whole at its
  // first chunk and counts 300 bytes though 128 have arrived. The next message, too long to
  // reserve, counts what it holds: 128 + 384 > 600 − 300 is refused at its third chunk,
  // though only 512 payload bytes have arrived.
  ChunkLimits limits;
  limits.max_buffered_bytes = 600;
  ChunkReader r(limits);
  std::string b;
  Fmt0(b, 4, 0, 300, kVideo, 1);
  b += Payload(128, 30);
  Fmt0(b, 5, 0, 1000, kVideo, 1);
  b += Payload(128, 31);
  Basic(b, 3, 5);
  b += Payload(128, 32);
  REQUIRE(FeedAll(r, b).status.ok());
  CHECK(r.buffered_bytes() == 384);  // bytes held, not bytes reserved
  b.clear();
  Basic(b, 3, 5);
  b += Payload(128, 33);
  ExpectError(FeedAll(r, b).status, "partial messages exceed 600 bytes");
}

TEST_CASE("P-7 RTMP chunks: reads cut anywhere give the messages of one whole read") {
  // Chunks are parsed in place from each read; only a chunk cut by a read's end is held.
  std::vector<Message> msgs;
  for (int i = 0; i < 40; ++i) {
    msgs.push_back(
        Msg(4 + i % 3, i % 2 ? kVideo : kAudio, 1, 40 * i, Payload(37 * i * i % 9000, i)));
  }
  for (uint32_t size : {128u, 4096u}) {
    ChunkWriter w;
    std::string b;
    w.Write(Msg(2, kSetChunkSize, 0, 0, std::string("\0\0", 2) + char(size >> 8) + char(size)), b);
    w.set_chunk_size(size);
    for (const auto& m : msgs) w.Write(m, b);
    for (size_t piece :
         {size_t{1}, size_t{7}, size_t{130}, size_t{4113}, size_t{4114}, size_t{65536}}) {
      INFO("chunk size " << size << ", reads of " << piece);
      ChunkReader r;
      Fed f;
      for (size_t at = 0; at < b.size() && f.status.ok(); at += piece) {
        f.status = r.Feed(Span(std::string_view(b).substr(at, piece)), f.messages);
        CHECK(r.buffered_bytes() <= 9000 + 18 + size);
      }
      REQUIRE(f.status.ok());
      Expect(f.messages, msgs);
      CHECK(r.buffered_bytes() == 0);
      CHECK(r.bytes_read() == b.size());
    }
  }
}

}  // namespace
}  // namespace meshwork::rtmp
