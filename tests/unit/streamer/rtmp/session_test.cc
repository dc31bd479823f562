#include "streamer/rtmp/session.h"

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

namespace meshwork::rtmp {
namespace {

using V = Amf0Value;

constexpr size_t kS0S1S2 = 1 + 2 * kHandshakeSize;  // what the server answers the handshake with
constexpr size_t kC0C1C2 = 1 + 2 * kHandshakeSize;  // what the client sends before chunks

std::string FromHex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoul(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}
std::string Be32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}
std::string Be24(uint32_t v) { return Be32(v).substr(1); }
std::string Be16(uint32_t v) { return Be32(v).substr(2); }
std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}
V S(std::string s) { return V::String(std::move(s)); }
V N(double n) { return V::Number(n); }

// libx264's SPS and PPS for a 320x240 testsrc2 (High profile, level 1.3), an IDR slice start.
const std::string kSps = FromHex("6764000dacd94141fb011000000300100000030320f1429960");
const std::string kPps = FromHex("68ebe3cb22c0");
const std::string kIdr = FromHex("65888400335ffe");

// FLV tag bodies as RTMP audio and video messages carry them.
std::string AvcSequenceHeader() {
  return FromHex("17000000000164000dffe1") + Be16(kSps.size()) + kSps + '\1' + Be16(kPps.size()) +
         kPps;
}
std::string AvcKeyFrame(uint32_t cts) {
  return FromHex("1701") + Be24(cts) + Be32(kIdr.size()) + kIdr;
}
std::string AacSequenceHeader() { return FromHex("af001210"); }  // AAC-LC, 44.1 kHz, stereo
std::string AacFrame(const std::string& raw) { return FromHex("af01") + raw; }
// An FLV tag as an aggregate message holds it: header, body, back pointer.
std::string FlvTag(uint8_t type, uint32_t ts, const std::string& body) {
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

TEST_CASE("S-1 RTMP session: an ffmpeg-style publish is answered and its media reaches the sink") {
  Server server;
  Client client;
  client.Handshake();
  REQUIRE(server.Feed(client.bytes).ok());
  CHECK((server.out.size() == kS0S1S2 && server.session->handshake_done()));

  client.Connect();
  REQUIRE(server.Feed(client.bytes).ok());
  auto replies = server.Replies();
  REQUIRE(replies.size() == 4);
  CHECK((replies[0].type == kWindowAckSize && replies[0].payload == Be32(2'500'000)));
  CHECK((replies[1].type == kSetPeerBandwidth && replies[1].payload == Be32(2'500'000) + '\2'));
  CHECK((replies[2].type == kSetChunkSize && replies[2].payload == Be32(4096)));
  CHECK(replies[3].Is("_result", 1));
  CHECK(replies[3].Info("code") == "NetConnection.Connect.Success");

  client.SetChunkSize(4096);
  client.Command(0, {S("releaseStream"), N(2), V::Null(), S("cam?token=abc")});
  CHECK(server.OneReply(client.bytes).Is("_result", 2));
  client.Command(0, {S("FCPublish"), N(3), V::Null(), S("cam?token=abc")});
  CHECK(server.OneReply(client.bytes).Is("_result", 3));
  client.CreateStream(4);
  Reply r = server.OneReply(client.bytes);
  CHECK(r.Is("_result", 4));
  REQUIRE(r.values.size() == 4);
  CHECK(r.values[3].number == 1);

  client.Publish(1, "cam?token=abc");
  REQUIRE(server.Feed(client.bytes).ok());
  REQUIRE(server.requests.size() == 1);
  CHECK(server.requests[0].app == "live");
  CHECK(server.requests[0].tc_url == "rtmp://127.0.0.1:1935/live");
  CHECK(server.requests[0].name == "cam?token=abc");
  CHECK(server.session->publishing());
  replies = server.Replies();
  REQUIRE(replies.size() == 2);
  CHECK((replies[0].type == kUserControl && replies[0].payload == FromHex("000000000001")));
  CHECK((replies[1].Name() == "onStatus" && replies[1].stream_id == 1));
  CHECK(replies[1].Info("code") == "NetStream.Publish.Start");
  CHECK(replies[1].Info("description") == "cam is now published.");

  client.Command(1, {S("@setDataFrame"), S("onMetaData"), V::Object({{"width", N(320)}})});
  client.SomeMedia(1);
  REQUIRE(server.Feed(client.bytes).ok());
  CHECK(server.Replies().empty());
  CHECK(server.session->media_messages() == 4);
  REQUIRE(server.tracks.size() == 2);
  const media::TrackInfo& v = server.tracks[0];
  CHECK((v.pid == kVideoPid && v.codec == media::Codec::kH264 && v.codec_string == "avc1.64000d"));
  CHECK((v.width == 320 && v.height == 240));
  CHECK(v.parameter_sets == std::vector<std::string>{kSps, kPps});
  const media::TrackInfo& a = server.tracks[1];
  CHECK((a.pid == kAudioPid && a.codec_string == "mp4a.40.2"));
  CHECK((a.sample_rate == 44100 && a.channels == 2));
  REQUIRE(server.frames.size() == 2);
  const media::Frame& video = server.frames[0];
  CHECK((video.keyframe && video.dts == 40 * 90 && video.pts == 120 * 90));
  const std::string sc("\0\0\0\1", 4);
  CHECK(*video.data == sc + FromHex("09f0") + sc + kSps + sc + kPps + sc + kIdr);
  const media::Frame& audio = server.frames[1];
  CHECK((audio.pid == kAudioPid && audio.pts == 23 * 90));
  CHECK(*audio.data == AdtsHeaderFor(2, 4, 2, 7) + "raw-aac");

  client.Command(0, {S("deleteStream"), N(6), V::Null(), N(1)});
  CHECK(server.OneReply(client.bytes).Is("_result", 6));
  CHECK(server.unpublished == 1);
  CHECK_FALSE(server.session->publishing());
  client.Command(0, {S("closeStream"), N(0), V::Null()});
  REQUIRE(server.Feed(client.bytes).ok());
  server.session.reset();
  CHECK(server.unpublished == 1);
}

TEST_CASE("S-1 RTMP session: a digest-form handshake gets a digest-form answer and goes on") {
  const int scheme = GENERATE(0, 1);
  Server server;
  Client client;
  client.UpToPublish("cam", scheme);
  REQUIRE(server.Feed(client.bytes).ok());
  REQUIRE(server.out.size() > kS0S1S2);
  CHECK(VerifyServerDigest(Bytes(server.out).subspan(1, kHandshakeSize), scheme));
  CHECK(VerifyS2(Bytes(server.out).subspan(1 + kHandshakeSize, kHandshakeSize), Bytes(client.c1),
                 scheme));
  CHECK(server.session->publishing());
}

TEST_CASE("S-1 RTMP session: destroying the session while publishing ends the publishing once") {
  Server server;
  Client client;
  client.UpToPublish();
  REQUIRE(server.Feed(client.bytes).ok());
  REQUIRE(server.session->publishing());
  CHECK(server.unpublished == 0);
  server.session.reset();
  CHECK(server.unpublished == 1);
}

TEST_CASE("M-3 RTMP session: a connect to another application is rejected and names it") {
  Server server;
  Client client;
  client.Handshake();
  client.Connect("other");
  absl::Status status = server.Feed(client.bytes);
  CHECK_FALSE(status.ok());
  CHECK_THAT(std::string(status.message()), Catch::Contains("\"other\""));
  auto replies = server.Replies();
  REQUIRE(replies.size() == 1);
  CHECK(replies[0].Is("_error", 1));
  CHECK(replies[0].Info("code") == "NetConnection.Connect.Rejected");
  CHECK_THAT(replies[0].Info("description"), Catch::Contains("\"other\""));
}

TEST_CASE(
    "M-3 RTMP session: a refused publish gets Denied or BadName and no media reaches a sink") {
  struct Case {
    absl::Status verdict;
    const char* code;
  };
  const Case c =
      GENERATE(Case{absl::UnauthenticatedError("bad token"), "NetStream.Publish.Denied"},
               Case{absl::PermissionDeniedError("not yours"), "NetStream.Publish.Denied"},
               Case{absl::AlreadyExistsError("cam is live"), "NetStream.Publish.BadName"},
               Case{absl::NotFoundError("no such stream"), "NetStream.Publish.BadName"});
  Server server;
  server.verdict = c.verdict;
  Client client;
  client.UpToPublish();
  client.SomeMedia(1);  // in the same read as the publish: the session stops before it
  CHECK(server.Feed(client.bytes) == c.verdict);
  auto replies = server.Replies();
  REQUIRE_FALSE(replies.empty());
  const Reply& last = replies.back();
  CHECK((last.Name() == "onStatus" && last.stream_id == 1 && last.Info("level") == "error"));
  CHECK(last.Info("code") == c.code);
  CHECK(last.Info("description") == c.verdict.message());
  CHECK(server.requests.size() == 1);
  CHECK_FALSE(server.session->publishing());
  CHECK(server.session->media_messages() == 0);
  CHECK((server.tracks.empty() && server.frames.empty()));
  server.session.reset();
  CHECK(server.unpublished == 0);
}

TEST_CASE("M-3 RTMP session: a publish out of order or without a name is refused") {
  struct Case {
    bool connect;
    uint32_t stream_id;
    const char* name;  // nullptr: no name argument at all
    bool twice;
    const char* message;
    const char* on_status;  // the onStatus code expected last, if any
  };
  const char* kNoName = "publish without a stream name";
  const Case c =
      GENERATE_REF(Case{false, 1, "cam", false, "publish before connect", nullptr},
                   Case{true, 0, "cam", false,
                        "publish on message stream 0, which createStream did not make", nullptr},
                   Case{true, 2, "cam", false,
                        "publish on message stream 2, which createStream did not make", nullptr},
                   Case{true, 1, nullptr, false, kNoName, "NetStream.Publish.BadName"},
                   Case{true, 1, "", false, kNoName, "NetStream.Publish.BadName"},
                   Case{true, 1, "cam", true, "publish sent twice on one connection", nullptr});
  Server server;
  Client client;
  client.Handshake();
  if (c.connect) {
    client.Connect();
    client.CreateStream(2);
  }
  if (c.name == nullptr) {
    client.Command(c.stream_id, {S("publish"), N(3), V::Null()});
  } else {
    client.Publish(c.stream_id, c.name);
  }
  if (c.twice) {
    client.CreateStream(6);
    client.Publish(2, "other");
  }
  absl::Status status = server.Feed(client.bytes);
  CHECK_FALSE(status.ok());
  CHECK(status.message() == c.message);
  if (c.on_status != nullptr) {
    auto replies = server.Replies();
    REQUIRE_FALSE(replies.empty());
    CHECK(replies.back().Info("code") == c.on_status);
  }
  CHECK(server.requests.size() == (c.twice ? 1u : 0u));
  server.session.reset();
  CHECK(server.unpublished == (c.twice ? 1 : 0));
}

TEST_CASE("R-3 RTMP session: more createStream calls than max_streams end the connection") {
  ServerSession::Options options;
  options.max_streams = 2;
  Server server(options);
  Client client;
  client.Handshake();
  client.Connect();
  REQUIRE(server.Feed(client.bytes).ok());
  server.Replies();
  for (uint32_t id = 1; id <= 2; ++id) {
    client.CreateStream(1 + id);
    Reply r = server.OneReply(client.bytes);
    REQUIRE(r.values.size() == 4);
    CHECK(r.values[3].number == id);
  }
  client.CreateStream(4);
  absl::Status status = server.Feed(client.bytes);
  CHECK(absl::IsResourceExhausted(status));
  CHECK(status.message() == "more than 2 streams on one connection");
}

TEST_CASE("R-3 RTMP session: a message larger than the configured limit ends the connection") {
  ServerSession::Options options;
  options.limits.max_message_size = 1000;
  Server server(options);
  Client client;
  client.UpToPublish();
  client.Media(kVideo, 1, 0, std::string(1001, 'x'));
  absl::Status status = server.Feed(client.bytes);
  CHECK(absl::IsInvalidArgument(status));
  CHECK_THAT(std::string(status.message()), Catch::Contains("exceeds the limit of 1000"));
}

TEST_CASE("S-1 RTMP session: play is answered with NetStream.Play.Failed and ends the connection") {
  Server server;
  Client client;
  client.Handshake();
  client.Connect();
  client.CreateStream(2);
  client.Command(1, {S("play"), N(3), V::Null(), S("cam")});
  CHECK_FALSE(server.Feed(client.bytes).ok());
  auto replies = server.Replies();
  REQUIRE_FALSE(replies.empty());
  CHECK((replies.back().Name() == "onStatus" && replies.back().stream_id == 1));
  CHECK(replies.back().Info("code") == "NetStream.Play.Failed");
}

TEST_CASE("S-1 RTMP session: media before publish or on another message stream is ignored") {
  Server server;
  Client client;
  client.Handshake();
  client.Connect();
  client.CreateStream(2);
  client.CreateStream(3);
  client.SomeMedia(1);  // before publish
  client.Publish(1, "cam");
  client.SomeMedia(2);  // on another message stream
  REQUIRE(server.Feed(client.bytes).ok());
  REQUIRE(server.session->publishing());
  CHECK(server.session->media_messages() == 0);
  CHECK((server.tracks.empty() && server.frames.empty()));
  client.Media(kVideo, 1, 80, AvcKeyFrame(0));  // no configuration has reached the sink yet
  REQUIRE(server.Feed(client.bytes).ok());
  CHECK(server.session->media_messages() == 1);
  CHECK(server.frames.empty());
  client.SomeMedia(1);
  REQUIRE(server.Feed(client.bytes).ok());
  CHECK((server.tracks.size() == 2 && server.frames.size() == 2));
}

TEST_CASE("S-1 RTMP session: the server acknowledges each window of bytes the client asked for") {
  constexpr uint32_t kWindow = 600;
  Server server;
  Client client;
  client.Handshake();
  client.Connect();
  client.Send(2, kWindowAckSize, 0, 0, Be32(kWindow));
  REQUIRE(server.Feed(client.bytes).ok());
  REQUIRE(client.bytes.size() - kC0C1C2 < kWindow);
  uint64_t acked = 0;
  int acks = 0;
  for (int i = 0; i < 20; ++i) {
    client.Send(5, kDataAmf0, 0, 0, std::string(100, 'd'));
    REQUIRE(server.Feed(client.bytes).ok());
    const uint64_t received = client.bytes.size() - kC0C1C2;  // chunk stream bytes
    std::vector<Reply> sent = server.Replies();
    std::erase_if(sent, [](const Reply& r) { return r.type != kAcknowledgement; });
    if (received - acked >= kWindow) {
      REQUIRE(sent.size() == 1);
      CHECK(sent[0].payload == Be32(received));
      acked = received;
      ++acks;
    } else {
      CHECK(sent.empty());
    }
  }
  CHECK(acks >= 3);
}

TEST_CASE("S-1 RTMP session: a command in an AMF3 command message is understood") {
  Server server;
  Client client;
  client.Handshake();
  client.Connect("live", kCommandAmf3);
  client.Command(0, {S("createStream"), N(2), V::Null()}, kCommandAmf3);
  REQUIRE(server.Feed(client.bytes).ok());
  auto replies = server.Replies();
  REQUIRE(replies.size() == 5);
  CHECK(replies[3].Info("code") == "NetConnection.Connect.Success");
  CHECK(replies[4].Is("_result", 2));
}

TEST_CASE("S-1 RTMP session: an aggregate message's tags reach the sink at the message's time") {
  Server server;
  Client client;
  client.UpToPublish();
  client.Media(kAudio, 1, 2000, AacSequenceHeader());
  client.Send(
      4, kAggregate, 1, 2000,
      FlvTag(kAudio, 0x01000010, AacFrame("one")) + FlvTag(kAudio, 0x01000027, AacFrame("two")));
  REQUIRE(server.Feed(client.bytes).ok());
  REQUIRE(server.frames.size() == 2);
  CHECK((server.frames[0].pts == 2000 * 90 && server.frames[0].data->substr(7) == "one"));
  CHECK((server.frames[1].pts == 2023 * 90 && server.frames[1].data->substr(7) == "two"));
}

TEST_CASE("R-2 RTMP session: malformed media is dropped with a notice and the stream goes on") {
  Server server;
  Client client;
  client.UpToPublish();
  client.Media(kVideo, 1, 0, FromHex("1709000000"));  // AVC packet type 9
  client.Send(4, kAggregate, 1, 0, FlvTag(kAudio, 0, AacFrame("x")).substr(0, 12));
  client.SomeMedia(1);
  REQUIRE(server.Feed(client.bytes).ok());
  CHECK(server.notices ==
        std::vector<std::string>{"AVC packet type 9", "aggregate message with a truncated tag"});
  CHECK(server.frames.size() == 2);
}

TEST_CASE("R-2 RTMP session: malformed input ends the connection with a status naming the fault") {
  Server server;
  Client client;
  client.Handshake();
  std::string expected;
  SECTION("a C0 with another version than 3") {
    client.bytes[0] = 6;
    expected = "client asks for version 6, not 3";
  }
  SECTION("an undecodable command") {
    client.Send(3, kCommandAmf0, 0, 0, FromHex("020010616263"));
    expected = "undecodable command: AMF0: truncated string";
  }
  SECTION("a command whose first value is not a string") {
    client.Command(0, {N(1), N(2)});
    expected = "a command message without a command name";
  }
  SECTION("connect twice") {
    client.Connect();
    client.Connect();
    expected = "connect sent twice";
  }
  SECTION("a chunk stream that begins with a format 1 header") {
    client.bytes += FromHex("43000000000004140000");
    expected = "format 0 expected";
  }
  absl::Status status = server.Feed(client.bytes);
  CHECK_FALSE(status.ok());
  CHECK_THAT(std::string(status.message()), Catch::Contains(expected));
}

TEST_CASE("S-1 RTMP session: the byte stream fed a byte at a time gets the same answers") {
  const int scheme = GENERATE(-1, 0);
  Client client;
  client.UpToPublish("cam?token=abc", scheme);
  client.SomeMedia(1);
  client.Command(0, {S("deleteStream"), N(6), V::Null(), N(1)});
  Server whole, bytewise;
  REQUIRE(whole.Feed(client.bytes).ok());
  REQUIRE(bytewise.Feed(client.bytes, 1).ok());
  CHECK(whole.out.size() > kS0S1S2);
  CHECK(bytewise.out == whole.out);
  REQUIRE(whole.frames.size() == 2);
  REQUIRE(bytewise.frames.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(*bytewise.frames[i].data == *whole.frames[i].data);
    CHECK(bytewise.frames[i].pts == whole.frames[i].pts);
  }
  CHECK(bytewise.tracks.size() == whole.tracks.size());
  CHECK((bytewise.unpublished == 1 && whole.unpublished == 1));
}

TEST_CASE("S-1 RTMP session: SplitStreamKey takes the token from a query or after a dash") {
  auto split = [](std::string_view name, std::vector<std::string> streams) {
    std::string stream = "junk", token = "junk";
    auto known = [&](std::string_view s) {
      return std::find(streams.begin(), streams.end(), s) != streams.end();
    };
    SplitStreamKey(name, known, stream, token);
    return std::pair(stream, token);
  };
  using P = std::pair<std::string, std::string>;
  CHECK(split("news?token=T", {}) == P("news", "T"));
  CHECK(split("news?x=1&token=T", {}) == P("news", "T"));
  CHECK(split("news?x=1", {"news"}) == P("news", ""));
  CHECK(split("news", {"news"}) == P("news", ""));
  CHECK(split("news-T", {"news"}) == P("news", "T"));
  CHECK(split("a-b-T", {"a-b", "a"}) == P("a-b", "T"));
  CHECK(split("x-y", {"news"}) == P("x-y", ""));
}

}  // namespace
}  // namespace meshwork::rtmp
