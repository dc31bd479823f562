// M-5: the per-stream part of a streamer's /status.
#include "streamer/delivery/node_status.h"

#include <catch2/catch.hpp>

namespace meshwork::streamer {
namespace {

v1::LoadReport TwoStreams() {
  v1::LoadReport report;
  auto* a = report.add_streams();
  a->set_name("a");
  a->set_working(true);
  auto* input = a->add_inputs();
  input->set_url("publish://");
  input->set_active(true);
  input->set_bitrate_kbit(900);
  input->set_last_frame_age_s(0.5);
  report.add_streams()->set_name("b");
  return report;
}

TEST_CASE("M-5 /status counts each stream's viewers by protocol") {
  PlaySessions::Counts viewers;
  viewers.by_stream_protocol[{"a", "hls"}] = 3;
  viewers.by_stream_protocol[{"a", "dash"}] = 2;
  viewers.by_stream_protocol[{"b", "ll-hls"}] = 1;
  auto streams = StreamsStatus(TwoStreams(), viewers);
  REQUIRE(streams.size() == 2);
  CHECK(streams[0]["name"] == "a");
  CHECK(streams[0]["play_sessions"] == 5);
  CHECK(streams[0]["viewers"] == nlohmann::json({{"dash", 2}, {"hls", 3}}));
  CHECK(streams[0]["inputs"][0]["bitrate_kbit"] == 900);
  CHECK(streams[1]["play_sessions"] == 1);
  CHECK(streams[1]["viewers"] == nlohmann::json({{"ll-hls", 1}}));
}

TEST_CASE("M-5 /status lists each stream's relay upstream and publish targets with queues") {
  auto streams = StreamsStatus(TwoStreams(), {});
  nlohmann::json relays = {{{"stream", "b"}, {"upstream", "ingest-2"}},
                           {{"stream", "c"}, {"upstream", "ingest-3"}}};
  std::map<std::string, nlohmann::json> targets;
  targets["a"] = {{{"to", "origin-1"}, {"queued_objects", 4}, {"queued_bytes", 4096}}};
  AddStreamRoutes(streams, relays, targets);
  CHECK(streams[0]["relay_upstream"].is_null());
  CHECK(streams[0]["publish_targets"] == targets["a"]);
  CHECK(streams[1]["relay_upstream"] == "ingest-2");
  CHECK(streams[1]["publish_targets"] == nlohmann::json::array());
}

}  // namespace
}  // namespace meshwork::streamer
