#include "streamer/rtmp/session.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tests/unit/streamer/rtmp/session_test_util.h"

namespace meshwork::rtmp {
namespace {

using namespace testing;  // NOLINT: the helpers are this file's vocabulary

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
