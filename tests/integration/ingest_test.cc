// Network inputs through the whole pipeline with real ffmpeg senders: UDP, SRT (listener),
// and ordered failover between inputs (S-1, S-2).
#include <sys/socket.h>

#include <catch2/catch.hpp>

#include "tests/integration/media_harness.h"

namespace meshwork::testing {
namespace {

size_t Segments(const Streamer& node, const std::string& stream) {
  return Playlist(node, stream).entries.size();
}

TEST_CASE("S-1 UDP and SRT listener inputs are packaged") {
  auto dir = MakeTempDir("ingest");
  auto central = StartCentral(dir);
  std::string udp = "udp://127.0.0.1:" + std::to_string(FreePort(SOCK_DGRAM));
  std::string srt_port = std::to_string(FreePort(SOCK_DGRAM));
  auto node = StartIngestWithStream(central, "ingest-1", "by-udp", {udp});
  auto node_srt = StartIngestWithStream(central, "ingest-2", "by-srt",
                                        {"srt://127.0.0.1:" + srt_port + "?mode=listener"});
  auto udp_sender = SendTs(udp + "?pkt_size=1316");
  auto srt_sender = SendTs("srt://127.0.0.1:" + srt_port + "?mode=caller");
  CHECK(Eventually([&] { return Segments(node, "by-udp") >= 3; }, 20s));
  CHECK(Eventually([&] { return Segments(node_srt, "by-srt") >= 3; }, 20s));
}

TEST_CASE("R-3 an SRT listener lets a caller go once it has sent nothing for 10 s") {
  auto dir = MakeTempDir("srt-silent");
  auto central = StartCentral(dir);
  std::string port = std::to_string(FreePort(SOCK_DGRAM));
  auto node = StartIngestWithStream(central, "ingest-1", "quiet",
                                    {"srt://127.0.0.1:" + port + "?mode=listener"});
  // A caller that sends a little and then holds its connection without sending: ffmpeg
  // reading a pipe whose writer stops after 200 kB.
  const std::string script = "(head -c 200000 '" + SourceTs() +
                             "'; sleep 40) | exec /usr/bin/ffmpeg -hide_banner -loglevel error "
                             "-probesize 100000 -f mpegts -i pipe:0 -c copy -f mpegts "
                             "'srt://127.0.0.1:" +
                             port + "?mode=caller'";
  auto silent = Process::Start({"/bin/sh", "-c", script}, dir + "/silent.log");
  auto log_has = [&](const std::string& text) {
    return ReadFile(node.process->log_path()).find(text) != std::string::npos;
  };
  REQUIRE(Eventually([&] { return log_has("event=ingest_connected"); }, 10s));
  // The one slot is freed for the next caller.
  CHECK(Eventually([&] { return log_has("no payload for 10 s"); }, 20s));
  auto sender = SendTs("srt://127.0.0.1:" + port + "?mode=caller");
  CHECK(Eventually([&] { return Segments(node, "quiet") >= 2; }, 20s));
}

TEST_CASE("S-2 inputs fail over in order and go back to the first when it recovers") {
  auto dir = MakeTempDir("failover");
  auto central = StartCentral(dir);
  std::string first = "udp://127.0.0.1:" + std::to_string(FreePort(SOCK_DGRAM));
  std::string second = "udp://127.0.0.1:" + std::to_string(FreePort(SOCK_DGRAM));
  auto node = StartIngestWithStream(central, "ingest-1", "fo", {first, second});
  // Only the second input delivers: it takes over once the first has been silent for
  // input_timeout (3 s by default).
  auto backup = SendTs(second + "?pkt_size=1316");
  REQUIRE(Eventually([&] { return ActiveInput(central, "ingest-1", "fo") == second; }, 10s));
  REQUIRE(Eventually([&] { return Segments(node, "fo") >= 2; }, 15s));
  size_t before = Segments(node, "fo");
  // The first input recovers: it is preferred again.
  auto primary = SendTs(first + "?pkt_size=1316");
  REQUIRE(Eventually([&] { return ActiveInput(central, "ingest-1", "fo") == first; }, 10s));
  CHECK(Eventually([&] { return Segments(node, "fo") > before; }, 10s));
  // The first stops: back to the second after the timeout.
  primary.reset();
  CHECK(Eventually([&] { return ActiveInput(central, "ingest-1", "fo") == second; }, 10s));
}

}  // namespace
}  // namespace meshwork::testing
