// The edge's MPEG-TS from relayed CMAF segments (S-25): what TsMaker keeps and pairs.
#include "streamer/relay/ts_maker.h"

#include <catch2/catch.hpp>

namespace meshwork::streamer::relay {
namespace ts_maker_test {

std::shared_ptr<const RenditionInfo> InfoOf(const std::string& name, media::Codec codec) {
  auto info = std::make_shared<RenditionInfo>();
  info->name = name;
  media::TrackInfo track;
  track.codec = codec;
  info->cmaf_tracks.push_back(track);
  return info;
}

TEST_CASE("S-25 an audio segment older than every kept one is not kept (it would be trimmed)") {
  TsMaker maker("a1", {});
  auto video = InfoOf("v1", media::Codec::kH264);
  auto audio = InfoOf("a1", media::Codec::kAac);
  auto bytes = std::make_shared<const std::string>("not a CMAF segment");
  auto timing = std::make_shared<const MediaTiming>();
  // v1's msn 10 waits for its audio; eight later audio segments fill what is kept.
  CHECK(maker.Offer({"v1", 10, {bytes}, timing, video}, true).empty());
  for (int64_t msn = 11; msn < 11 + static_cast<int64_t>(TsMaker::kKeptAudio); ++msn) {
    CHECK(maker.Offer({"a1", msn, {bytes}, timing, audio}, false).empty());
  }
  // Audio msn 10 arrives late (a publisher out of order): not kept, not paired, no muxing.
  CHECK(maker.Offer({"a1", 10, {bytes}, timing, audio}, false).empty());
  CHECK(maker.made() + maker.failures() == 0);
}

}  // namespace ts_maker_test
}  // namespace meshwork::streamer::relay
