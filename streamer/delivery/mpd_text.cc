#include "streamer/delivery/mpd_text.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "streamer/delivery/playlists.h"

namespace meshwork::streamer::mpd {

std::string XmlEscape(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (char c : in) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Duration(int64_t ms) {
  ms = std::max<int64_t>(ms, 0);
  std::string out = absl::StrCat("PT", ms / 1000);
  if (int64_t frac = ms % 1000; frac != 0) {
    std::string digits = absl::StrFormat("%03d", frac);
    while (digits.back() == '0') digits.pop_back();
    absl::StrAppend(&out, ".", digits);
  }
  return out + "S";
}

std::string DecimalSeconds(int64_t ms) {
  std::string d = Duration(ms);
  return d.substr(2, d.size() - 3);
}

std::string DateTime(int64_t unix_ms) {
  std::string s = FormatProgramDateTime(unix_ms);
  if (s.size() > 5 && s.compare(s.size() - 5, 5, ".000Z") == 0) s.replace(s.size() - 5, 5, "Z");
  return s;
}

std::string FrameRate(double fps) {
  int64_t whole = std::llround(fps);
  if (std::abs(fps - static_cast<double>(whole)) < 0.001) return absl::StrCat(whole);
  int64_t ntsc = std::llround(fps * 1.001);
  if (std::abs(fps - static_cast<double>(ntsc) * 1000.0 / 1001.0) < 0.001) {
    return absl::StrCat(ntsc * 1000, "/1001");
  }
  return absl::StrCat(std::llround(fps * 1000), "/1000");
}

std::string Representation(std::string_view indent_view, std::string_view id, uint64_t bandwidth,
                           std::string_view codecs, const media::TrackInfo* track,
                           std::string_view children_view) {
  // absl's string_view is not std's here (Abseil 20220623).
  const absl::string_view indent(indent_view.data(), indent_view.size());
  const absl::string_view children(children_view.data(), children_view.size());
  std::string out = absl::StrCat(indent, "<Representation id=\"", XmlEscape(id), "\" bandwidth=\"",
                                 std::max<uint64_t>(bandwidth, 1), "\"");
  if (!codecs.empty()) absl::StrAppend(&out, " codecs=\"", XmlEscape(codecs), "\"");
  const bool video = track && track->is_video();
  const bool audio = track && track->is_audio();
  if (video && track->width > 0 && track->height > 0) {
    absl::StrAppend(&out, " width=\"", track->width, "\" height=\"", track->height, "\"");
  }
  if (video && track->frame_rate > 0) {
    absl::StrAppend(&out, " frameRate=\"", FrameRate(track->frame_rate), "\"");
  }
  if (audio && track->sample_rate > 0) {
    absl::StrAppend(&out, " audioSamplingRate=\"", track->sample_rate, "\"");
  }
  std::string inner;
  if (audio && track->channels > 0) {
    absl::StrAppend(&inner, indent,
                    "  <AudioChannelConfiguration "
                    "schemeIdUri=\"urn:mpeg:dash:23003:3:audio_channel_configuration:2011\" "
                    "value=\"",
                    track->channels, "\"/>\n");
  }
  inner.append(children.data(), children.size());
  if (inner.empty()) return out + "/>\n";
  absl::StrAppend(&out, ">\n", inner, indent, "</Representation>\n");
  return out;
}

}  // namespace meshwork::streamer::mpd
