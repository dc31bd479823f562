// the frame rules in front of central's gRPC: what a client may do before it
// acknowledges SETTINGS, header blocks, floods, and where the cut falls.
#include "central/rpc/frame_gate.h"

#include <catch2/catch.hpp>
#include <string>

namespace meshwork::central {
namespace {

const std::string kGatePreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

std::string GateFrame(uint8_t type, uint8_t flags, uint32_t stream, size_t length = 0) {
  std::string f;
  for (uint32_t v : {uint32_t(length >> 16), uint32_t(length >> 8), uint32_t(length)})
    f.push_back(static_cast<char>(v & 0xff));
  f.push_back(static_cast<char>(type));
  f.push_back(static_cast<char>(flags));
  for (int shift = 24; shift >= 0; shift -= 8) f.push_back(static_cast<char>(stream >> shift));
  return f + std::string(length, 'x');
}

size_t FeedText(ClientFrameCheck& check, const std::string& bytes, int64_t now_ms = 0) {
  return check.Feed({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, now_ms);
}

TEST_CASE("R-3 gate: streams before the SETTINGS ACK are capped, the 101st frame is cut") {
  ClientFrameCheck check(FrameGateLimits{});
  std::string head = kGatePreface + GateFrame(0x4, 0, 0);
  REQUIRE(FeedText(check, head) == head.size());
  std::string streams;
  for (uint32_t i = 0; i < 100; ++i) streams += GateFrame(0x1, 0x4, 2 * i + 1, 20);
  REQUIRE(FeedText(check, streams) == streams.size());
  CHECK_FALSE(check.failed());
  // Two more frames in one read: the bytes before the 101st HEADERS go on, not the rest.
  std::string more = GateFrame(0x8, 0, 0, 4) + GateFrame(0x1, 0x4, 201, 20);
  CHECK(FeedText(check, more) == 13);
  CHECK(check.failed());
  CHECK(check.error_code() == kH2EnhanceYourCalm);
  CHECK(std::string(check.rule()) == "streams_before_ack");
  CHECK(check.last_stream_id() == 201);
  CHECK(FeedText(check, GateFrame(0x0, 0, 1, 3)) == 0);  // nothing more, ever
}

TEST_CASE("R-3 gate: after the SETTINGS ACK, new streams are gRPC's to limit") {
  ClientFrameCheck check(FrameGateLimits{});
  FeedText(check, kGatePreface + GateFrame(0x4, 0, 0) + GateFrame(0x4, 0x1, 0));
  CHECK(check.acknowledged());
  std::string streams;
  for (uint32_t i = 0; i < 500; ++i) streams += GateFrame(0x1, 0x5, 2 * i + 1, 10);
  CHECK(FeedText(check, streams) == streams.size());
  CHECK_FALSE(check.failed());
}

TEST_CASE("R-3 gate: a header block over the limit is cut, frames split anywhere") {
  FrameGateLimits limits;
  limits.header_block_bytes = 1000;
  ClientFrameCheck check(limits);
  std::string bytes = kGatePreface + GateFrame(0x4, 0x1, 0) + GateFrame(0x1, 0, 1, 400);
  for (int i = 0; i < 3; ++i) bytes += GateFrame(0x9, 0, 1, 300);
  // One byte at a time, as a slow socket would deliver it.
  size_t forwarded = 0;
  for (char c : bytes) forwarded += FeedText(check, std::string(1, c));
  CHECK(check.failed());
  CHECK(std::string(check.rule()) == "header_block");
  // The third CONTINUATION (400 + 300 + 300 + 300 > 1000) is the cut: its header's first
  // eight bytes went on before its ninth showed what it was; none of its payload did.
  CHECK(forwarded == bytes.size() - 300 - 1);
}

TEST_CASE("R-3 gate: CONTINUATION out of place is a protocol error") {
  ClientFrameCheck outside(FrameGateLimits{});
  FeedText(outside, kGatePreface + GateFrame(0x9, 0x4, 1, 5));
  CHECK(outside.error_code() == kH2ProtocolError);
  ClientFrameCheck interleaved(FrameGateLimits{});
  FeedText(interleaved, kGatePreface + GateFrame(0x1, 0, 1, 5) + GateFrame(0x0, 0, 1, 5));
  CHECK(interleaved.error_code() == kH2ProtocolError);
  ClientFrameCheck other_stream(FrameGateLimits{});
  FeedText(other_stream, kGatePreface + GateFrame(0x1, 0, 1, 5) + GateFrame(0x9, 0x4, 3, 5));
  CHECK(other_stream.error_code() == kH2ProtocolError);
  ClientFrameCheck finished(FrameGateLimits{});
  FeedText(finished, kGatePreface + GateFrame(0x1, 0, 1, 5) + GateFrame(0x9, 0x4, 1, 5) +
                         GateFrame(0x0, 0x1, 1, 5));
  CHECK_FALSE(finished.failed());
}

TEST_CASE("R-3 gate: ping, reset and settings floods are counted per second") {
  FrameGateLimits limits;
  limits.pings_per_second = 5;
  ClientFrameCheck check(limits);
  FeedText(check, kGatePreface + GateFrame(0x4, 0x1, 0));
  for (int i = 0; i < 5; ++i) FeedText(check, GateFrame(0x6, 0, 0, 8), 100);
  FeedText(check, GateFrame(0x6, 0x1, 0, 8), 100);  // an ACK is an answer, not counted
  CHECK_FALSE(check.failed());
  for (int i = 0; i < 5; ++i) FeedText(check, GateFrame(0x6, 0, 0, 8), 1200);  // a new second
  CHECK_FALSE(check.failed());
  FeedText(check, GateFrame(0x6, 0, 0, 8), 1300);
  CHECK(std::string(check.rule()) == "ping_flood");
  ClientFrameCheck resets(FrameGateLimits{});
  FeedText(resets, kGatePreface);
  std::string frames;
  for (uint32_t i = 0; i < 201; ++i) {
    frames += GateFrame(0x1, 0x4, 2 * i + 1, 4) + GateFrame(0x3, 0, 2 * i + 1, 4);
  }
  FeedText(resets, GateFrame(0x4, 0x1, 0) + frames, 0);
  CHECK(std::string(resets.rule()) == "reset_flood");
}

TEST_CASE("R-3 gate: a wrong preface is refused before any byte goes on") {
  ClientFrameCheck check(FrameGateLimits{});
  CHECK(FeedText(check, "GET / HTTP/1.1\r\n\r\n") == 0);
  CHECK(std::string(check.rule()) == "preface");
}

TEST_CASE("R-3 gate: the server's frame boundary and the GOAWAY frame") {
  FrameBoundary boundary;
  std::string frames = GateFrame(0x4, 0, 0, 6) + GateFrame(0x0, 0, 1, 100);
  auto feed = [&](size_t from, size_t n) {
    boundary.Feed({reinterpret_cast<const uint8_t*>(frames.data()) + from, n});
  };
  CHECK(boundary.at_boundary());
  feed(0, 10);
  CHECK_FALSE(boundary.at_boundary());
  feed(10, 5);
  CHECK(boundary.at_boundary());  // the SETTINGS frame is whole
  feed(15, 50);
  CHECK_FALSE(boundary.at_boundary());
  feed(65, frames.size() - 65);
  CHECK(boundary.at_boundary());
  std::string goaway = GoawayFrame(201, kH2EnhanceYourCalm, "why");
  CHECK(goaway.size() == 9 + 8 + 3);
  CHECK(goaway.substr(0, 9) == std::string("\0\0\x0b\x07\0\0\0\0\0", 9));
  CHECK(goaway.substr(9, 8) == std::string("\0\0\0\xc9\0\0\0\x0b", 8));
  CHECK(goaway.substr(17) == "why");
}

}  // namespace
}  // namespace meshwork::central
