// S-21 with S-6: an edge moves only to an upstream on the timeline it follows. Three ingest
// nodes hold the stream; ingest-a and ingest-c are fed the same source at once (one
// timeline), ingest-b the same source with its timestamps 100 s later (another timeline: by
// S-5 its msns run 50 ahead of the others' at the same date-times, so no msn both list
// means the same media, and none is listed by both). Central lists an unzoned edge's upstreams by
// node id, so when ingest-a fails the next one offered is ingest-b: the edge must pass it over for
// ingest-c. When ingest-c fails too, every upstream left is on the other timeline and the
// edge follows it (after three refusals in a row) rather than stopping.
#include <catch2/catch.hpp>
#include <csignal>
#include <string>

#include "tests/integration/media_harness.h"

namespace meshwork::testing::timeline_choice_test {
namespace {

std::string UpstreamOf(const Streamer& edge) {
  auto relays = Http("GET", edge.http, "/status").Json()["relays"];
  return relays.is_array() && !relays.empty() && relays[0]["upstream"].is_string()
             ? relays[0]["upstream"].get<std::string>()
             : std::string();
}

// The newest msn the edge's LL-HLS playlist lists (-1: none yet).
int64_t NewestAt(const Streamer& edge) {
  auto info = ParseMediaPlaylist(Http("GET", edge.http, "/live/v1/index.ll.m3u8").body);
  return info.entries.empty() ? -1 : info.entries.back().msn;
}

TEST_CASE(
    "S-21 S-6 an edge passes over an upstream on another timeline, and follows it once no "
    "other is left") {
  auto central = StartCentral(MakeTempDir("timeline-choice"));
  auto a = StartIngestWithStream(central, "ingest-a", "live");
  auto b = StartIngestWithStream(central, "ingest-b", "live");
  auto c = StartIngestWithStream(central, "ingest-c", "live");
  auto edge = StartStreamer(central.grpc, "edge-1", "edge");
  auto push_a = PushFile(SourceTs(60), a.publish, "live");
  auto push_c = PushFile(SourceTs(60), c.publish, "live");
  auto push_b = PushFile(SourceTs(60), b.publish, "live", {}, {"-output_ts_offset", "100"});
  // Every node lists segments.
  REQUIRE(Eventually(
      [&] {
        return HasSegments(a, "live", 2) && HasSegments(b, "live", 2) && HasSegments(c, "live", 2);
      },
      30s));
  REQUIRE(Eventually(
      [&] {
        Http("GET", edge.http, "/live/v1/index.ll.m3u8");  // a viewer starts the relay
        return UpstreamOf(edge) == "ingest-a" && NewestAt(edge) >= 0;
      },
      30s));
  // Some segments relayed from ingest-a: the timeline the edge follows is known.
  const int64_t before = NewestAt(edge);
  REQUIRE(Eventually([&] { return NewestAt(edge) >= before + 2; }, 20s));

  a.process->Signal(SIGKILL);
  a.process->Wait();
  REQUIRE(Eventually(
      [&] {
        NewestAt(edge);
        return UpstreamOf(edge) == "ingest-c";
      },
      20s));
  const std::string log_after_a = ReadFile(edge.process->log_path());
  INFO(log_after_a.substr(log_after_a.size() > 4000 ? log_after_a.size() - 4000 : 0));
  // It was offered ingest-b first and passed it over (S-21: same timeline only).
  CHECK(log_after_a.find("event=relay_upstream_other_timeline") != std::string::npos);
  CHECK(log_after_a.find("event=relay_failover stream=live node=ingest-b") != std::string::npos);
  const int64_t on_c = NewestAt(edge);
  REQUIRE(Eventually([&] { return NewestAt(edge) >= on_c + 2; }, 20s));

  // Only the other timeline is left: the edge follows it rather than stopping.
  c.process->Signal(SIGKILL);
  c.process->Wait();
  REQUIRE(Eventually(
      [&] {
        NewestAt(edge);
        return UpstreamOf(edge) == "ingest-b";
      },
      30s));
  const int64_t on_b = NewestAt(edge);
  CHECK(Eventually([&] { return NewestAt(edge) >= on_b + 2; }, 20s));
}

}  // namespace
}  // namespace meshwork::testing::timeline_choice_test
