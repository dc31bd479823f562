#include "streamer/ingest/url.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "streamer/ingest/source.h"

namespace meshwork::ingest {
namespace {

TEST_CASE("S-1 input URLs parse into source settings", "[ingest]") {
  SECTION("udp unicast") {
    auto url = ParseSourceUrl("udp://127.0.0.1:5000");
    REQUIRE(url.ok());
    CHECK(url->kind == SourceKind::kUdp);
    CHECK(url->host == "127.0.0.1");
    CHECK(url->port == 5000);
    CHECK_FALSE(url->multicast);
  }
  SECTION("udp multicast on an interface") {
    auto url = ParseSourceUrl("UDP://239.255.1.1:1234?localaddr=127.0.0.1");
    REQUIRE(url.ok());
    CHECK(url->multicast);
    CHECK(url->localaddr == "127.0.0.1");
  }
  SECTION("udp on IPv6") {
    auto url = ParseSourceUrl("udp://[::1]:5000/");
    REQUIRE(url.ok());
    CHECK(url->host == "::1");
    CHECK_FALSE(url->multicast);
  }
  SECTION("srt listener with options") {
    auto url = ParseSourceUrl(
        "srt://0.0.0.0:9000?mode=listener&latency=200&streamid=cam%201&passphrase=0123456789ab");
    REQUIRE(url.ok());
    CHECK(url->kind == SourceKind::kSrt);
    CHECK(url->srt_mode == SrtMode::kListener);
    CHECK(url->latency_ms == 200);
    CHECK(url->streamid == "cam 1");
    CHECK(url->passphrase == "0123456789ab");
  }
  SECTION("srt caller to a name") {
    auto url = ParseSourceUrl("srt://encoder.example.net:9000?mode=caller");
    REQUIRE(url.ok());
    CHECK(url->srt_mode == SrtMode::kCaller);
    CHECK(url->host == "encoder.example.net");
    CHECK(url->latency_ms == -1);
  }
  SECTION("http with default port, path and query") {
    auto url = ParseSourceUrl("http://origin.example.net/live/cam.ts?token=a%20b");
    REQUIRE(url.ok());
    CHECK(url->kind == SourceKind::kHttp);
    CHECK(url->port == 80);
    CHECK(url->target == "/live/cam.ts?token=a%20b");
  }
  SECTION("http without a path") {
    auto url = ParseSourceUrl("http://127.0.0.1:8080");
    REQUIRE(url.ok());
    CHECK(url->port == 8080);
    CHECK(url->target == "/");
  }
}

TEST_CASE("S-1 bad input URLs are rejected naming the URL", "[ingest]") {
  struct Case {
    std::string url;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"udp://127.0.0.1", "needs a port"},
      {"udp://127.0.0.1:", "bad port"},
      {"udp://127.0.0.1:70000", "bad port"},
      {"udp://127.0.0.1:0", "bad port"},
      {"udp://127.0.0.1:12ab", "bad port"},
      {"udp://:5000", "has no host"},
      {"udp://example.com:5000", "must be an IP address"},
      {"udp://127.0.0.1:5000?localaddr=127.0.0.1", "only to an IPv4 multicast group"},
      {"udp://239.1.1.1:5000?localaddr=lo", "not an IPv4 address"},
      {"udp://127.0.0.1:5000?pkt_size=1316", "unknown udp:// parameter \"pkt_size\""},
      {"udp://127.0.0.1:5000/stream", "takes no path"},
      {"udp://::1:5000", "in brackets"},
      {"rtmp://127.0.0.1/live", "unsupported scheme \"rtmp\""},
      {"https://example.com/live.ts", "unsupported scheme \"https\""},
      {"127.0.0.1:5000", "has no scheme"},
      {"", "has no scheme"},
      {"srt://127.0.0.1:9000", "needs mode=listener or mode=caller"},
      {"srt://127.0.0.1:9000?mode=rendezvous", "bad mode \"rendezvous\""},
      {"srt://127.0.0.1:9000?mode=caller&latency=-5", "bad latency"},
      {"srt://127.0.0.1:9000?mode=caller&latency=fast", "bad latency"},
      {"srt://127.0.0.1:9000?mode=caller&passphrase=short", "passphrase must be"},
      {"srt://127.0.0.1:9000?mode=bogus&passphrase=0123456789ab", "bad mode"},
      {"srt://127.0.0.1:9000?mode=caller&mode=listener", "given twice"},
      {"srt://127.0.0.1:9000?mode=caller&oops", "has no value"},
      {"srt://127.0.0.1:9000?mode=caller&streamid=%zz", "percent-encoding"},
      {"srt://example.com:9000?mode=listener", "must be a local IP address"},
      {"srt://127.0.0.1:9000?mode=caller&pbkeylen=32", "unknown srt:// parameter"},
      {"http://user:pw@example.com/live.ts", "credentials"},
      {"http://[::1/live.ts", "unterminated"},
      {"http://example.com/live.ts#top", "fragments"},
  };
  for (const Case& c : cases) {
    INFO(c.url);
    auto source = StartSource(c.url, [](std::span<const uint8_t>) {});
    REQUIRE_FALSE(source.ok());
    CHECK(source.status().code() == absl::StatusCode::kInvalidArgument);
    const std::string message(source.status().message());
    CHECK_THAT(message, Catch::Contains("\"" + RedactUrl(c.url) + "\""));
    CHECK_THAT(message, Catch::Contains(c.says));
  }
}

TEST_CASE("S-1 passphrases are kept out of logged URLs", "[ingest]") {
  CHECK(RedactUrl("srt://h:1?mode=caller&passphrase=0123456789ab&latency=5") ==
        "srt://h:1?mode=caller&passphrase=***&latency=5");
  CHECK(RedactUrl("srt://h:1?passphrase=0123456789ab") == "srt://h:1?passphrase=***");
  CHECK(RedactUrl("srt://h:1?mode=caller") == "srt://h:1?mode=caller");
  CHECK(RedactUrl("srt://h:1?mypassphrase=x") == "srt://h:1?mypassphrase=x");
  // other credentials an input URL carries (an SRT stream id, a pull URL's token).
  CHECK(RedactUrl("srt://h:1?streamid=#!::r=live,u=ops,s=sec") == "srt://h:1?streamid=***");
  CHECK(RedactUrl("http://h/a.ts?x=1&token=abcdef123456") == "http://h/a.ts?x=1&token=***");

  auto source = StartSource("srt://127.0.0.1:9000?mode=rendezvous&passphrase=0123456789ab",
                            [](std::span<const uint8_t>) {});
  REQUIRE_FALSE(source.ok());
  CHECK_THAT(std::string(source.status().message()),
             !Catch::Contains("0123456789ab") && Catch::Contains("passphrase=***"));
}

}  // namespace
}  // namespace meshwork::ingest
