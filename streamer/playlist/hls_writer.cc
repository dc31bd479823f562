#include "streamer/playlist/hls_writer.h"

#include <algorithm>
#include <ctime>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace meshwork::streamer::hls {
namespace {

std::string Seconds(int64_t ticks90k, int decimals) {
  return absl::StrFormat("%.*f", decimals, static_cast<double>(ticks90k) / 90000.0);
}

void AppendPart(std::string& out, const PartLine& p, std::string_view query) {
  absl::StrAppend(&out, "#EXT-X-PART:DURATION=", Seconds(p.duration90k, 5), ",URI=\"",
                  WithQuery(p.uri, query), "\"", p.independent ? ",INDEPENDENT=YES" : "",
                  p.gap ? ",GAP=YES" : "", "\n");
}

void AppendDate(std::string& out, const std::optional<int64_t>& unix_ms) {
  if (unix_ms)
    absl::StrAppend(&out, "#EXT-X-PROGRAM-DATE-TIME:", FormatProgramDateTime(*unix_ms), "\n");
}

}  // namespace

std::string WithQuery(std::string_view uri, std::string_view query) {
  std::string out(uri);
  if (query.empty()) return out;
  out += uri.find('?') == std::string_view::npos ? '?' : '&';
  out += query;
  return out;
}

std::string FormatProgramDateTime(int64_t unix_ms) {
  int64_t secs = unix_ms >= 0 ? unix_ms / 1000 : -((-unix_ms + 999) / 1000);
  int ms = static_cast<int>(unix_ms - secs * 1000);
  std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm;
  gmtime_r(&t, &tm);
  return absl::StrFormat("%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                         tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

std::string StreamInf(const Variant& v, std::string_view audio_group) {
  std::string line =
      absl::StrCat("#EXT-X-STREAM-INF:BANDWIDTH=", std::max<uint64_t>(v.bandwidth, 1));
  if (!v.codecs.empty()) absl::StrAppend(&line, ",CODECS=\"", v.codecs, "\"");
  if (v.width > 0 && v.height > 0) absl::StrAppend(&line, ",RESOLUTION=", v.width, "x", v.height);
  if (v.frame_rate > 0)
    absl::StrAppend(&line, ",FRAME-RATE=", absl::StrFormat("%.3f", v.frame_rate));
  if (v.audio_group) absl::StrAppend(&line, ",AUDIO=\"", std::string(audio_group), "\"");
  return line;
}

std::string Write(const Master& m) {
  if (m.variants.empty()) return "";
  std::string out =
      absl::StrCat("#EXTM3U\n#EXT-X-VERSION:", m.version, "\n#EXT-X-INDEPENDENT-SEGMENTS\n");
  const bool steered = m.steering && !m.steering->pathways.empty();
  static const std::vector<Pathway> kOnlyHere = {Pathway{}};
  const std::vector<Pathway>& pathways = steered ? m.steering->pathways : kOnlyHere;
  if (steered) {
    absl::StrAppend(&out, "#EXT-X-CONTENT-STEERING:SERVER-URI=\"", m.steering->server_uri,
                    "\",PATHWAY-ID=\"", m.steering->pathway_id, "\"\n");
  }
  auto group_of = [steered](const Pathway& p) {
    return steered ? absl::StrCat(kAudioGroup, "-", p.id) : std::string(kAudioGroup);
  };
  if (m.audio) {
    for (const Pathway& p : pathways) {
      const std::string group = group_of(p);
      absl::StrAppend(&out, "#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"", group, "\",NAME=\"", kAudioGroup,
                      "\",DEFAULT=YES,AUTOSELECT=YES");
      if (m.audio->channels > 0) absl::StrAppend(&out, ",CHANNELS=\"", m.audio->channels, "\"");
      absl::StrAppend(&out, ",URI=\"", WithQuery(p.base + m.audio->uri, m.uri_query), "\"\n");
    }
  }
  for (const Pathway& p : pathways) {
    const std::string group = group_of(p);
    for (const Variant& v : m.variants) {
      absl::StrAppend(&out, StreamInf(v, group));
      if (steered) absl::StrAppend(&out, ",PATHWAY-ID=\"", p.id, "\"");
      absl::StrAppend(&out, "\n", WithQuery(p.base + v.uri, m.uri_query), "\n");
    }
  }
  return out;
}

std::string Write(const Media& m) {
  std::string out = absl::StrCat("#EXTM3U\n#EXT-X-VERSION:", m.version,
                                 "\n#EXT-X-TARGETDURATION:", m.target_duration_s, "\n");
  if (m.server_control) {
    absl::StrAppend(&out, "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=",
                    absl::StrFormat("%.3f", m.server_control->part_hold_back_s),
                    ",CAN-SKIP-UNTIL=", absl::StrFormat("%.1f", m.server_control->can_skip_until_s),
                    "\n");
  }
  if (m.part_target_s) {
    absl::StrAppend(&out, "#EXT-X-PART-INF:PART-TARGET=", absl::StrFormat("%.3f", *m.part_target_s),
                    "\n");
  }
  absl::StrAppend(&out, "#EXT-X-MEDIA-SEQUENCE:", m.media_sequence, "\n");
  if (m.discontinuity_sequence > 0) {
    absl::StrAppend(&out, "#EXT-X-DISCONTINUITY-SEQUENCE:", m.discontinuity_sequence, "\n");
  }
  if (m.playlist_type) absl::StrAppend(&out, "#EXT-X-PLAYLIST-TYPE:", *m.playlist_type, "\n");
  if (m.map_uri)
    absl::StrAppend(&out, "#EXT-X-MAP:URI=\"", WithQuery(*m.map_uri, m.uri_query), "\"\n");
  if (m.skipped_segments > 0) {
    absl::StrAppend(&out, "#EXT-X-SKIP:SKIPPED-SEGMENTS=", m.skipped_segments, "\n");
  }
  for (const SegmentLine& s : m.segments) {
    if (s.discontinuity) out += "#EXT-X-DISCONTINUITY\n";
    if (s.map_uri)
      absl::StrAppend(&out, "#EXT-X-MAP:URI=\"", WithQuery(*s.map_uri, m.uri_query), "\"\n");
    AppendDate(out, s.program_date_time_ms);
    if (s.gap) out += "#EXT-X-GAP\n";
    for (const PartLine& p : s.parts) AppendPart(out, p, m.uri_query);
    absl::StrAppend(&out, "#EXTINF:", Seconds(s.duration90k, m.extinf_decimals), ",\n",
                    WithQuery(s.uri, m.uri_query), "\n");
  }
  if (m.open) {
    AppendDate(out, m.open->program_date_time_ms);
    for (const PartLine& p : m.open->parts) AppendPart(out, p, m.uri_query);
  }
  if (m.preload_hint_uri) {
    absl::StrAppend(&out, "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"",
                    WithQuery(*m.preload_hint_uri, m.uri_query), "\"\n");
  }
  for (const RenditionReport& r : m.rendition_reports) {
    absl::StrAppend(&out, "#EXT-X-RENDITION-REPORT:URI=\"", WithQuery(r.uri, m.uri_query),
                    "\",LAST-MSN=", r.last_msn, ",LAST-PART=", r.last_part, "\n");
  }
  if (m.endlist) out += "#EXT-X-ENDLIST\n";
  return out;
}

}  // namespace meshwork::streamer::hls
