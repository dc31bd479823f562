#include "streamer/delivery/node_metrics.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "common/metrics/metrics.h"

namespace meshwork::streamer {
namespace {

TEST_CASE("M-4 viewers by stream and protocol are exported, and a stream without viewers drops") {
  auto registry = std::make_shared<prometheus::Registry>();
  NodeMetrics metrics(registry.get());
  PlaySessions::Counts counts;
  counts.total = 3;
  counts.by_stream_protocol[{"ch1", "hls"}] = 2;
  counts.by_stream_protocol[{"ch2", "dash"}] = 1;
  metrics.Update(counts, 7);
  std::string text = metrics::RenderText(*registry);
  CHECK(text.find("meshwork_viewers{protocol=\"hls\",stream=\"ch1\"} 2") != std::string::npos);
  CHECK(text.find("meshwork_viewers{protocol=\"dash\",stream=\"ch2\"} 1") != std::string::npos);
  CHECK(text.find("meshwork_held_requests 7") != std::string::npos);
  counts.by_stream_protocol.erase({"ch2", "dash"});
  counts.by_stream_protocol[{"ch1", "hls"}] = 5;
  metrics.Update(counts, 0);
  text = metrics::RenderText(*registry);
  CHECK(text.find("meshwork_viewers{protocol=\"hls\",stream=\"ch1\"} 5") != std::string::npos);
  CHECK(text.find("stream=\"ch2\"") == std::string::npos);
  CHECK(text.find("meshwork_held_requests 0") != std::string::npos);
}

}  // namespace
}  // namespace meshwork::streamer
