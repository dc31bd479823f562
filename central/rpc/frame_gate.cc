#include "central/rpc/frame_gate.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace meshwork::central {
namespace {

constexpr std::string_view kPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
constexpr size_t kFrameHeader = 9;

enum FrameType : uint8_t {
  kHeaders = 0x1,
  kRstStream = 0x3,
  kSettings = 0x4,
  kPing = 0x6,
  kContinuation = 0x9,
};
constexpr uint8_t kFlagAck = 0x1;
constexpr uint8_t kFlagEndHeaders = 0x4;

struct Header {
  uint32_t length;
  uint8_t type;
  uint8_t flags;
  uint32_t stream_id;
};

Header Decode(const uint8_t* h) {
  return Header{(uint32_t{h[0]} << 16) | (uint32_t{h[1]} << 8) | h[2], h[3], h[4],
                ((uint32_t{h[5]} << 24) | (uint32_t{h[6]} << 16) | (uint32_t{h[7]} << 8) | h[8]) &
                    0x7fffffffu};
}

// Advances a frame-header/payload reader over `bytes`; calls `on_header` as each header
// completes with the offset in `bytes` where that frame began (negative: in an earlier
// call). Stops early when `on_header` returns false; returns the bytes consumed.
template <typename OnHeader>
size_t WalkFrames(std::span<const uint8_t> bytes, uint8_t* header, size_t* header_seen,
                  uint64_t* payload_left, OnHeader&& on_header) {
  size_t at = 0;
  while (at < bytes.size()) {
    if (*payload_left > 0) {
      size_t skip = static_cast<size_t>(std::min<uint64_t>(*payload_left, bytes.size() - at));
      at += skip;
      *payload_left -= skip;
      continue;
    }
    const ptrdiff_t frame_start = static_cast<ptrdiff_t>(at) - static_cast<ptrdiff_t>(*header_seen);
    size_t take = std::min(kFrameHeader - *header_seen, bytes.size() - at);
    std::memcpy(header + *header_seen, bytes.data() + at, take);
    *header_seen += take;
    at += take;
    if (*header_seen < kFrameHeader) break;
    *header_seen = 0;
    Header h = Decode(header);
    *payload_left = h.length;
    if (!on_header(h, frame_start)) return at;
  }
  return at;
}

}  // namespace

void ClientFrameCheck::Fail(uint32_t code, const char* rule, std::string reason) {
  if (failed()) return;
  error_code_ = code;
  rule_ = rule;
  reason_ = std::move(reason);
}

bool ClientFrameCheck::Count(uint32_t* counter, uint32_t limit, int64_t now_ms) {
  if (now_ms - window_start_ms_ >= 1000 || now_ms < window_start_ms_) {
    window_start_ms_ = now_ms;
    pings_ = resets_ = settings_ = 0;
  }
  return ++*counter <= limit;
}

void ClientFrameCheck::OnFrameHeader(uint32_t length, uint8_t type, uint8_t flags,
                                     uint32_t stream_id, int64_t now_ms) {
  if (in_header_block_) {
    if (type != kContinuation || stream_id != block_stream_id_) {
      return Fail(kH2ProtocolError, "protocol",
                  "a frame other than CONTINUATION inside a header block");
    }
    header_block_bytes_ += length;
  } else if (type == kContinuation) {
    return Fail(kH2ProtocolError, "protocol", "CONTINUATION outside a header block");
  }
  switch (type) {
    case kHeaders:
      if (stream_id > last_stream_id_ && (stream_id & 1) == 1) {
        last_stream_id_ = stream_id;
        if (!acknowledged_ && ++streams_before_ack_ > limits_.streams_before_ack) {
          return Fail(kH2EnhanceYourCalm, "streams_before_ack",
                      absl::StrCat("more than ", limits_.streams_before_ack,
                                   " streams opened before acknowledging the server's SETTINGS"));
        }
      }
      in_header_block_ = (flags & kFlagEndHeaders) == 0;
      block_stream_id_ = stream_id;
      header_block_bytes_ = length;
      break;
    case kContinuation:
      in_header_block_ = (flags & kFlagEndHeaders) == 0;
      break;
    case kSettings:
      if (flags & kFlagAck) acknowledged_ = true;
      if (!Count(&settings_, limits_.settings_per_second, now_ms)) {
        return Fail(kH2EnhanceYourCalm, "settings_flood",
                    absl::StrCat("more than ", limits_.settings_per_second,
                                 " SETTINGS frames in a second"));
      }
      break;
    case kPing:
      if ((flags & kFlagAck) == 0 && !Count(&pings_, limits_.pings_per_second, now_ms)) {
        return Fail(kH2EnhanceYourCalm, "ping_flood",
                    absl::StrCat("more than ", limits_.pings_per_second, " PINGs in a second"));
      }
      break;
    case kRstStream:
      if (!Count(&resets_, limits_.resets_per_second, now_ms)) {
        return Fail(kH2EnhanceYourCalm, "reset_flood",
                    absl::StrCat("more than ", limits_.resets_per_second,
                                 " RST_STREAM frames in a second"));
      }
      break;
    default:
      break;
  }
  if ((type == kHeaders || type == kContinuation) &&
      header_block_bytes_ > limits_.header_block_bytes) {
    Fail(kH2EnhanceYourCalm, "header_block",
         absl::StrCat("a header block over ", limits_.header_block_bytes, " bytes"));
  }
}

size_t ClientFrameCheck::Feed(std::span<const uint8_t> bytes, int64_t now_ms) {
  if (failed()) return 0;
  size_t at = 0;
  while (preface_seen_ < kPreface.size() && at < bytes.size()) {
    if (bytes[at] != static_cast<uint8_t>(kPreface[preface_seen_])) {
      Fail(kH2ProtocolError, "preface", "not an HTTP/2 client preface");
      return 0;
    }
    ++preface_seen_;
    ++at;
  }
  size_t forward = bytes.size();
  WalkFrames(bytes.subspan(at), header_, &header_seen_, &payload_left_,
             [&](const Header& h, ptrdiff_t frame_start) {
               OnFrameHeader(h.length, h.type, h.flags, h.stream_id, now_ms);
               if (!failed()) return true;
               forward = static_cast<size_t>(
                   std::max<ptrdiff_t>(0, static_cast<ptrdiff_t>(at) + frame_start));
               return false;
             });
  return forward;
}

void FrameBoundary::Feed(std::span<const uint8_t> bytes) {
  WalkFrames(bytes, header_, &header_seen_, &payload_left_,
             [](const Header&, ptrdiff_t) { return true; });
}

std::string GoawayFrame(uint32_t last_stream_id, uint32_t code, std::string_view debug) {
  debug = debug.substr(0, 256);
  const uint32_t length = 8 + static_cast<uint32_t>(debug.size());
  std::string f;
  f.reserve(kFrameHeader + length);
  auto put32 = [&f](uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8)
      f.push_back(static_cast<char>((v >> shift) & 0xff));
  };
  f.push_back(static_cast<char>((length >> 16) & 0xff));
  f.push_back(static_cast<char>((length >> 8) & 0xff));
  f.push_back(static_cast<char>(length & 0xff));
  f.push_back(0x7);  // GOAWAY
  f.push_back(0);    // no flags
  put32(0);          // stream 0
  put32(last_stream_id & 0x7fffffffu);
  put32(code);
  f.append(debug);
  return f;
}

}  // namespace meshwork::central
