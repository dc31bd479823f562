#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "streamer/rtmp/session.h"
#include "tests/unit/streamer/rtmp/session_test_util.h"

namespace meshwork::rtmp {
namespace {

using namespace testing;  // NOLINT: the helpers are this file's vocabulary

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

TEST_CASE(
    "R-3 RTMP session: before a publish is admitted a message over 64 KiB ends the connection") {
  Server server;
  Client client;
  client.Handshake();
  client.Connect();
  client.SetChunkSize(4096);
  client.Command(0, {S("releaseStream"), N(2), V::Null(), S(std::string(70 << 10, 'k'))});
  absl::Status status = server.Feed(client.bytes);
  CHECK(absl::IsInvalidArgument(status));
  CHECK_THAT(std::string(status.message()), Catch::Contains("exceeds the limit of 65536"));
  CHECK(server.requests.empty());
}

TEST_CASE("R-3 RTMP session: an admitted publish raises the limit for media in the same read") {
  // A key frame of 200 KiB sent right behind publish, without waiting for its answer: the
  // publish is handled before the frame's header is read.
  const std::string nal = "\x65" + std::string((200 << 10) - 1, 'v');
  Server server;
  Client client;
  client.UpToPublish();
  client.Media(kVideo, 1, 0, AvcSequenceHeader());
  client.Media(kVideo, 1, 40, FromHex("1701000000") + Be32(nal.size()) + nal);
  REQUIRE(server.Feed(client.bytes).ok());
  REQUIRE(server.frames.size() == 1);
  CHECK(server.frames[0].data->size() > nal.size());
}

TEST_CASE("R-3 RTMP session: a publish name over 1 KiB is refused before anything looks it up") {
  Server server;
  Client client;
  client.UpToPublish(std::string(2000, '-'));
  absl::Status status = server.Feed(client.bytes);
  CHECK(absl::IsInvalidArgument(status));
  CHECK(status.message() == "publish name of 2000 bytes (stream and key): at most 1024");
  CHECK(server.requests.empty());  // on_publish (the stream lookup, the key split) never ran
  auto replies = server.Replies();
  REQUIRE(!replies.empty());
  CHECK(replies.back().Info("code") == "NetStream.Publish.BadName");
}

TEST_CASE("R-3 RTMP session: a refusal's text is cut before it is echoed, however long") {
  // A handler whose refusal names what it was given: the reply must still be framable (RTMP
  // messages end below 2^24 bytes; the writer refuses to frame one past it).
  Server server;
  server.verdict = absl::NotFoundError(std::string((1 << 24) + 10, 'A'));
  Client client;
  client.UpToPublish("cam");
  absl::Status status = server.Feed(client.bytes);
  CHECK(absl::IsNotFound(status));
  auto replies = server.Replies();
  REQUIRE(!replies.empty());
  const std::string description = replies.back().Info("description");
  CHECK(description.size() < 600);
  CHECK_THAT(description, Catch::EndsWith("(16777226 bytes)"));
}

TEST_CASE("R-3 RTMP session: unpublishing returns the connection to the pre-publish limits") {
  Server server;
  Client client;
  client.UpToPublish("cam");
  client.SomeMedia(1);
  client.Command(0, {S("FCUnpublish"), N(6), V::Null(), S("cam")});
  REQUIRE(server.Feed(client.bytes).ok());
  CHECK(server.unpublished == 1);
  // A 100 KiB message was within the publishing limits; not any more.
  client.Media(kVideo, 1, 80, std::string(100 << 10, 'x'));
  absl::Status status = server.Feed(client.bytes);
  CHECK(absl::IsInvalidArgument(status));
  CHECK_THAT(std::string(status.message()), Catch::Contains("exceeds the limit of 65536"));
}

TEST_CASE("R-3 RTMP session: an ignored command's name is cut in its notice") {
  Server server;
  Client client;
  client.Handshake();
  client.Connect();
  client.Command(0, {S(std::string(60'000, 'z')), N(2), V::Null()});
  REQUIRE(server.Feed(client.bytes).ok());
  REQUIRE(server.notices.size() == 1);
  CHECK(server.notices[0].size() < 600);
  CHECK_THAT(server.notices[0], Catch::StartsWith("ignored command zzz"));
}

}  // namespace
}  // namespace meshwork::rtmp
