// Test helpers for hand-built rendition windows: a 720p25 H.264 or stereo AAC track, and a
// 0.5 s LL-HLS part.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "streamer/store/rendition_window.h"

namespace meshwork::streamer::testing {

inline media::TrackInfo TestTrack(bool video) {
  media::TrackInfo t;
  t.codec = video ? media::Codec::kH264 : media::Codec::kAac;
  t.codec_string = video ? "avc1.64001f" : "mp4a.40.2";
  if (video) {
    t.width = 1280;
    t.height = 720;
    t.frame_rate = 25;
  } else {
    t.sample_rate = 48000;
    t.channels = 2;
  }
  return t;
}

// Part `index` starting at `start` (90 kHz), 0.5 s long.
inline std::shared_ptr<const Part> TestPart(int index, int64_t start, bool independent) {
  auto p = std::make_shared<Part>();
  p->index = index;
  p->start = start;
  p->duration = 45'000;
  p->independent = independent;
  p->data = std::make_shared<const std::string>("x");
  return p;
}

}  // namespace meshwork::streamer::testing
