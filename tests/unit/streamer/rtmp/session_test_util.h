// Helpers of the RTMP session tests: a scripted client as bytes and a recording server.
// Header-only, for session_test.cc and session_limits_test.cc (one binary: inline).
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "streamer/rtmp/handshake.h"
#include "streamer/rtmp/session.h"

namespace meshwork::rtmp::testing {

using V = Amf0Value;

constexpr size_t kS0S1S2 = 1 + 2 * kHandshakeSize;  // what the server answers the handshake with
constexpr size_t kC0C1C2 = 1 + 2 * kHandshakeSize;  // what the client sends before chunks

inline std::string FromHex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoul(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}
inline std::string Be32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}
inline std::string Be24(uint32_t v) { return Be32(v).substr(1); }
inline std::string Be16(uint32_t v) { return Be32(v).substr(2); }
inline std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}
inline V S(std::string s) { return V::String(std::move(s)); }
inline V N(double n) { return V::Number(n); }

// libx264's SPS and PPS for a 320x240 testsrc2 (High profile, level 1.3), an IDR slice start.
inline const std::string kSps = FromHex("6764000dacd94141fb011000000300100000030320f1429960");
inline const std::string kPps = FromHex("68ebe3cb22c0");
inline const std::string kIdr = FromHex("65888400335ffe");

// FLV tag bodies as RTMP audio and video messages carry them.
inline std::string AvcSequenceHeader() {
  return FromHex("17000000000164000dffe1") + Be16(kSps.size()) + kSps + '\1' + Be16(kPps.size()) +
         kPps;
}
inline std::string AvcKeyFrame(uint32_t cts) {
  return FromHex("1701") + Be24(cts) + Be32(kIdr.size()) + kIdr;
}
inline std::string AacSequenceHeader() { return FromHex("af001210"); }  // AAC-LC, 44.1 kHz, stereo
inline std::string AacFrame(const std::string& raw) { return FromHex("af01") + raw; }
// An FLV tag as an aggregate message holds it: header, body, back pointer.
inline std::string FlvTag(uint8_t type, uint32_t ts, const std::string& body) {
  return std::string(1, static_cast<char>(type)) + Be24(body.size()) + Be24(ts & 0xffffff) +
         static_cast<char>(ts >> 24) + std::string(3, '\0') + body + Be32(11 + body.size());
}

// An RTMP client as bytes: what it sends accumulates in `bytes`.
class Client {
 public:
  std::string bytes;
  std::string c1;

  // C0 + C1 (the simple form, or signed under digest scheme 0 or 1), then C2.
  void Handshake(int digest_scheme = -1) {
    c1.assign(kHandshakeSize, '\0');
    for (size_t i = 8; i < c1.size(); ++i) c1[i] = static_cast<char>(i * 7 + 1);
    if (digest_scheme >= 0) {
      c1.replace(4, 4, FromHex("80000702"));
      SignClientC1({reinterpret_cast<uint8_t*>(c1.data()), c1.size()}, digest_scheme);
    }
    bytes += '\3' + c1 + std::string(kHandshakeSize, 'c');
  }
  void Send(uint32_t chunk_stream, uint8_t type, uint32_t stream_id, uint32_t ts,
            std::string payload) {
    writer_.Write(Message{chunk_stream, type, stream_id, ts, std::move(payload)}, bytes);
  }
  void Command(uint32_t stream_id, const std::vector<V>& values, uint8_t type = kCommandAmf0) {
    std::string payload = type == kCommandAmf3 ? std::string(1, '\0') : "";
    for (const V& v : values) EncodeAmf0(v, payload);
    Send(3, type, stream_id, 0, std::move(payload));
  }
  void SetChunkSize(uint32_t n) {
    Send(2, kSetChunkSize, 0, 0, Be32(n));
    writer_.set_chunk_size(n);
  }
  void Connect(const std::string& app = "live", uint8_t type = kCommandAmf0) {
    Command(0,
            {S("connect"), N(1),
             V::Object({{"app", S(app)},
                        {"type", S("nonprivate")},
                        {"flashVer", S("FMLE/3.0 (compatible; Lavf61.7.100)")},
                        {"tcUrl", S("rtmp://127.0.0.1:1935/" + app)}})},
            type);
  }
  void CreateStream(double txn) { Command(0, {S("createStream"), N(txn), V::Null()}); }
  void Publish(uint32_t stream_id, const std::string& name) {
    Command(stream_id, {S("publish"), N(5), V::Null(), S(name), S("live")});
  }
  void Media(uint8_t type, uint32_t stream_id, uint32_t ts, std::string body) {
    Send(type == kVideo ? 6 : 4, type, stream_id, ts, std::move(body));
  }
  // As ffmpeg: connect, Set Chunk Size, releaseStream, FCPublish, createStream, publish.
  void UpToPublish(const std::string& name = "cam?token=abc", int digest_scheme = -1) {
    Handshake(digest_scheme);
    Connect();
    SetChunkSize(4096);
    Command(0, {S("releaseStream"), N(2), V::Null(), S(name)});
    Command(0, {S("FCPublish"), N(3), V::Null(), S(name)});
    CreateStream(4);
    Publish(1, name);
  }
  // Configuration and one frame each of video and audio: two frames once published.
  void SomeMedia(uint32_t stream_id) {
    Media(kVideo, stream_id, 0, AvcSequenceHeader());
    Media(kAudio, stream_id, 0, AacSequenceHeader());
    Media(kVideo, stream_id, 40, AvcKeyFrame(80));
    Media(kAudio, stream_id, 23, AacFrame("raw-aac"));
  }

 private:
  ChunkWriter writer_;
};

// One message the server sent. Set Chunk Size (which ChunkReader applies itself) appears in
// its place with the new size as payload.
struct Reply {
  uint8_t type = 0;
  uint32_t stream_id = 0;
  std::string payload;
  std::vector<V> values;  // of a command message

  std::string Name() const { return values.empty() ? "" : values[0].string; }
  bool Is(const char* name, double txn) const {
    return Name() == name && values.size() > 1 && values[1].number == txn;
  }
  std::string Info(const char* key) const {
    return values.size() > 3 ? values[3].StringOr(key, "") : "";
  }
};

// A ServerSession whose Handler records everything, and a reader of its answers.
struct Server {
  explicit Server(ServerSession::Options options = {}) {
    ServerSession::Handler h;
    h.on_publish = [this](PublishRequest& r) -> absl::StatusOr<FlvDepacketizer::Sink> {
      SplitStreamKey(
          r.name, [](std::string_view s) { return s == "cam"; }, r.stream, r.token);
      requests.push_back(r);
      if (!verdict.ok()) return verdict;
      return FlvDepacketizer::Sink{[this](const media::TrackInfo& t) { tracks.push_back(t); },
                                   [this](media::Frame&& f) { frames.push_back(std::move(f)); }};
    };
    h.on_unpublish = [this] { ++unpublished; };
    h.on_notice = [this](const std::string& text) { notices.push_back(text); };
    auto random = [](std::span<uint8_t> r) {
      for (size_t i = 0; i < r.size(); ++i) r[i] = static_cast<uint8_t>(i * 13 + 5);
    };
    session = std::make_unique<ServerSession>(std::move(options), std::move(h), random, 12345);
  }

  // Feeds what the client added since the last call, `piece` bytes at a time (0: at once).
  // Stops at the first non-OK status: the contract is that Feed is not called after it.
  absl::Status Feed(const std::string& client_bytes, size_t piece = 0) {
    REQUIRE(status.ok());
    while (fed < client_bytes.size() && status.ok()) {
      const size_t n =
          std::min(piece == 0 ? client_bytes.size() : piece, client_bytes.size() - fed);
      status = session->Feed(Bytes(client_bytes).subspan(fed, n), out);
      fed += n;
    }
    return status;
  }

  // The messages sent since the last call. The reader takes the answers a byte at a time so
  // that a Set Chunk Size shows in its place.
  std::vector<Reply> Replies() {
    std::vector<Reply> got;
    if (out.size() < kS0S1S2) return got;
    REQUIRE(out[0] == '\3');
    for (parsed_ = std::max(parsed_, kS0S1S2); parsed_ < out.size(); ++parsed_) {
      std::vector<Message> messages;
      const uint32_t chunk_size = reader_.chunk_size();
      REQUIRE(reader_.Feed(Bytes(out).subspan(parsed_, 1), messages).ok());
      if (reader_.chunk_size() != chunk_size) {
        got.push_back({kSetChunkSize, 0, Be32(reader_.chunk_size()), {}});
      }
      for (Message& m : messages) {
        Reply r{m.type, m.stream_id, m.payload, {}};
        if (m.type == kCommandAmf0) {
          auto values = DecodeAmf0(Bytes(m.payload));
          REQUIRE(values.ok());
          r.values = *values;
        }
        got.push_back(std::move(r));
      }
    }
    return got;
  }
  // Feeds, requires OK, and returns the one message expected in answer.
  Reply OneReply(const std::string& client_bytes) {
    REQUIRE(Feed(client_bytes).ok());
    auto replies = Replies();
    REQUIRE(replies.size() == 1);
    return replies[0];
  }

  absl::Status verdict;  // what on_publish answers (OK: admit)
  std::vector<PublishRequest> requests;
  std::vector<media::TrackInfo> tracks;
  std::vector<media::Frame> frames;
  std::vector<std::string> notices;
  int unpublished = 0;
  std::string out;
  size_t fed = 0;
  absl::Status status;
  std::unique_ptr<ServerSession> session;  // last: destroyed before what its Handler touches

 private:
  ChunkReader reader_;
  size_t parsed_ = 0;
};

}  // namespace meshwork::rtmp::testing
