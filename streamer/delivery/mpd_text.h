// The XML pieces both MPDs (live, dash.cc; archive, archive_mpd.cc) are written with: escaping,
// xs:duration and xs:dateTime values, frame rates and one Representation element. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "streamer/media/frame.h"

namespace meshwork::streamer::mpd {

std::string XmlEscape(std::string_view in);
// xs:duration from milliseconds: "PT2S", "PT1.5S", "PT0.04S" (negative counts as 0).
std::string Duration(int64_t ms);
// Seconds with at most three decimals, trailing zeros trimmed ("1.5", "2").
std::string DecimalSeconds(int64_t ms);
// xs:dateTime in UTC; milliseconds only when not whole seconds.
std::string DateTime(int64_t unix_ms);
// FrameRateType: an integer, or "N/1001" for the NTSC rates, else a ratio over 1000.
std::string FrameRate(double fps);

// `indent`<Representation id bandwidth codecs width height frameRate | audioSamplingRate>
// with an AudioChannelConfiguration for audio, then `children` (already indented, may be
// empty), closed. `track` may be null (no size or rate attributes).
std::string Representation(std::string_view indent, std::string_view id, uint64_t bandwidth,
                           std::string_view codecs, const media::TrackInfo* track,
                           std::string_view children);

}  // namespace meshwork::streamer::mpd
