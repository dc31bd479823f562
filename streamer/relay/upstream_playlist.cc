#include "streamer/relay/upstream_playlist.h"

#include <charconv>
#include <cmath>

#include "absl/time/time.h"

namespace meshwork::streamer::relay {

namespace {

template <typename T>
std::optional<T> Integer(std::string_view text) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// Program date-times past this (about the year 37 700) are not dates.
constexpr int64_t kMaxProgramDateTimeMs = int64_t{1} << 50;

// Seconds with an optional fraction ("2.00000") → microseconds; nullopt when malformed or
// outside [0, 1 day].
std::optional<int64_t> Micros(std::string_view text) {
  double seconds = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(seconds) ||
      seconds < 0 || seconds > 86400) {
    return std::nullopt;
  }
  return static_cast<int64_t>(std::llround(seconds * 1e6));
}

// The value of ATTRIBUTE in an attribute list ("A=1,URI=\"x\""), quotes removed.
std::string_view Attribute(std::string_view list, std::string_view name) {
  size_t at = 0;
  while (at < list.size()) {
    size_t eq = list.find('=', at);
    if (eq == std::string_view::npos) return {};
    std::string_view key = list.substr(at, eq - at);
    size_t value_start = eq + 1;
    size_t value_end;
    if (value_start < list.size() && list[value_start] == '"') {
      size_t close = list.find('"', value_start + 1);
      if (close == std::string_view::npos) return {};
      value_end = close + 1;
      if (key == name) return list.substr(value_start + 1, close - value_start - 1);
    } else {
      value_end = list.find(',', value_start);
      if (value_end == std::string_view::npos) value_end = list.size();
      if (key == name) return list.substr(value_start, value_end - value_start);
    }
    at = list.find(',', value_end);
    if (at == std::string_view::npos) return {};
    ++at;
  }
  return {};
}

// The next line of `rest` (up to '\n', a view into it), which then starts after it. Lines are
// walked in place: a playlist of millions of empty lines costs no memory.
std::string_view NextLine(std::string_view& rest) {
  const size_t end = rest.find('\n');
  std::string_view line = rest.substr(0, end);
  rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  return line;
}

bool Tag(std::string_view line, std::string_view tag, std::string_view& rest) {
  if (!line.starts_with(tag)) return false;
  rest = line.substr(tag.size());
  return true;
}

// "{name}/index.ll.m3u8" → name, when name is one path segment.
std::optional<std::string> RenditionOf(std::string_view uri) {
  constexpr std::string_view kSuffix = "/index.ll.m3u8";
  if (!uri.ends_with(kSuffix)) return std::nullopt;
  std::string_view name = uri.substr(0, uri.size() - kSuffix.size());
  if (name.empty() || name.size() > 64 || name.find('/') != std::string_view::npos || name == "." ||
      name == "..") {
    return std::nullopt;
  }
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.';
    if (!ok) return std::nullopt;
  }
  return std::string(name);
}

}  // namespace

std::optional<std::pair<int64_t, int>> ParseObjectName(std::string_view uri) {
  uri = uri.substr(0, uri.find('?'));  // a cache version (?v=N, L-14) or a viewer's query
  if (!uri.ends_with(".m4s")) return std::nullopt;
  uri.remove_suffix(4);
  size_t dot = uri.find('.');
  auto msn = Integer<int64_t>(uri.substr(0, dot));
  if (!msn || *msn < 0) return std::nullopt;
  if (dot == std::string_view::npos) return std::make_pair(*msn, -1);
  auto part = Integer<int>(uri.substr(dot + 1));
  if (!part || *part < 0 || *part > 1000) return std::nullopt;
  return std::make_pair(*msn, *part);
}

std::optional<UpstreamMediaPlaylist> ParseMediaPlaylist(std::string_view text) {
  if (!text.starts_with("#EXTM3U")) return std::nullopt;
  UpstreamMediaPlaylist out;
  int64_t pdt_ms = 0;       // of the next segment
  int64_t part_offset = 0;  // µs into the segment of the next part
  int64_t pending_us = -1;  // from #EXTINF, for the next URI line
  bool discontinuity = false;
  bool gap = false;  // #EXT-X-GAP: the next segment is not to be fetched
  for (std::string_view rest_of_text = text; !rest_of_text.empty();) {
    std::string_view line = NextLine(rest_of_text);
    if (out.entries.size() >= kMaxEntries) break;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::string_view rest;
    if (Tag(line, "#EXT-X-MEDIA-SEQUENCE:", rest)) {
      out.media_sequence = Integer<int64_t>(rest).value_or(0);
    } else if (Tag(line, "#EXT-X-TARGETDURATION:", rest)) {
      out.target_duration_s = Integer<int>(rest).value_or(0);
    } else if (Tag(line, "#EXT-X-PART-INF:", rest)) {
      out.part_target_us = Micros(Attribute(rest, "PART-TARGET")).value_or(0);
    } else if (Tag(line, "#EXT-X-PROGRAM-DATE-TIME:", rest)) {
      absl::Time t;
      std::string error;
      // A date that does not parse leaves what follows undated (not dated on from an older
      // tag), and so does one that is not a date: RFC 3339 as absl reads it also takes
      // "infinite-future" and years in the millions (adding durations to those overflowed).
      if (absl::ParseTime(absl::RFC3339_full, std::string(rest), &t, &error) &&
          t > absl::UnixEpoch() && t < absl::FromUnixMillis(kMaxProgramDateTimeMs)) {
        pdt_ms = absl::ToUnixMillis(t);
      } else {
        pdt_ms = 0;
      }
      part_offset = 0;
    } else if (line == "#EXT-X-DISCONTINUITY") {
      discontinuity = true;
    } else if (line == "#EXT-X-GAP") {
      gap = true;
    } else if (Tag(line, "#EXT-X-PART:", rest)) {
      auto name = ParseObjectName(Attribute(rest, "URI"));
      auto duration = Micros(Attribute(rest, "DURATION"));
      if (!name || name->second < 0 || !duration) continue;
      UpstreamEntry e;
      e.msn = name->first;
      e.part = name->second;
      e.duration_us = *duration;
      e.program_date_time_ms = pdt_ms ? pdt_ms + part_offset / 1000 : 0;
      e.independent = Attribute(rest, "INDEPENDENT") == "YES";
      e.gap = Attribute(rest, "GAP") == "YES";
      part_offset += *duration;
      out.entries.push_back(e);
    } else if (Tag(line, "#EXT-X-PRELOAD-HINT:", rest)) {
      auto name = ParseObjectName(Attribute(rest, "URI"));
      if (name && name->second >= 0) out.hint = name;
    } else if (Tag(line, "#EXTINF:", rest)) {
      pending_us = Micros(rest.substr(0, rest.find(','))).value_or(-1);
    } else if (!line.empty() && line.front() != '#') {
      auto name = ParseObjectName(line);
      if (name && name->second < 0 && pending_us >= 0) {
        UpstreamEntry e;
        e.msn = name->first;
        e.duration_us = pending_us;
        e.program_date_time_ms = pdt_ms;
        e.discontinuity = discontinuity;
        e.gap = gap;
        out.entries.push_back(e);
        if (pdt_ms) pdt_ms += pending_us / 1000;
      }
      pending_us = -1;
      discontinuity = false;
      gap = false;
      part_offset = 0;
    }
  }
  return out;
}

std::vector<std::string> ParseMasterRenditions(std::string_view text) {
  std::vector<std::string> out;
  auto add = [&out](std::string_view uri) {
    auto name = RenditionOf(uri);
    if (!name || out.size() >= 64) return;
    for (const auto& n : out) {
      if (n == *name) return;
    }
    out.push_back(std::move(*name));
  };
  for (std::string_view rest_of_text = text; !rest_of_text.empty();) {
    std::string_view line = NextLine(rest_of_text);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::string_view rest;
    if (Tag(line, "#EXT-X-MEDIA:", rest)) {
      add(Attribute(rest, "URI"));
    } else if (!line.empty() && line.front() != '#') {
      add(line);
    }
  }
  return out;
}

bool SameTimeline(const std::map<int64_t, int64_t>& relayed_pdt,
                  const UpstreamMediaPlaylist& playlist, int64_t tolerance_ms, int64_t segment_ms) {
  const UpstreamEntry* newest = nullptr;
  for (auto e = playlist.entries.rbegin(); e != playlist.entries.rend(); ++e) {
    if (e->part >= 0 || e->program_date_time_ms == 0) continue;
    if (!newest) newest = &*e;
    auto known = relayed_pdt.find(e->msn);
    if (known == relayed_pdt.end()) continue;
    const int64_t delta = e->program_date_time_ms - known->second;
    return delta <= tolerance_ms && delta >= -tolerance_ms;
  }
  if (!newest || relayed_pdt.empty() || segment_ms <= 0) return true;
  // No msn in common: the time between the two newest segments against their msn distance
  // (128-bit: the values come from an upstream's text).
  const auto& [relayed_msn, relayed_ms] = *relayed_pdt.rbegin();
  const __int128 msns = static_cast<__int128>(newest->msn) - relayed_msn;
  const __int128 ms = static_cast<__int128>(newest->program_date_time_ms) - relayed_ms;
  const __int128 slack = static_cast<__int128>(segment_ms) + tolerance_ms;
  if (msns > 0) return ms >= msns * segment_ms - slack;
  if (msns < 0) return -ms >= -msns * segment_ms - slack;
  return true;
}

std::string FormatPartTiming(const UpstreamEntry& t) {
  std::string out = "duration_us=" + std::to_string(t.duration_us) +
                    ";pdt=" + std::to_string(t.program_date_time_ms) +
                    ";independent=" + (t.independent ? "1" : "0") +
                    ";discontinuity=" + (t.discontinuity ? "1" : "0");
  if (t.timeline_origin) out += ";origin=" + std::to_string(*t.timeline_origin);
  if (t.start) out += ";start=" + std::to_string(*t.start);
  if (t.last_part) out += ";last=1";
  return out;
}

std::optional<UpstreamEntry> ParsePartTiming(std::string_view field, int64_t msn, int part) {
  if (field.size() > 256 || msn < 0 || part < 0) return std::nullopt;
  UpstreamEntry e;
  e.msn = msn;
  e.part = part;
  e.duration_us = -1;
  e.program_date_time_ms = -1;
  while (!field.empty()) {
    size_t end = field.find(';');
    std::string_view item = field.substr(0, end);
    field = end == std::string_view::npos ? std::string_view() : field.substr(end + 1);
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "duration_us") {
      e.duration_us = Integer<int64_t>(value).value_or(-1);
    } else if (key == "pdt") {
      e.program_date_time_ms = Integer<int64_t>(value).value_or(-1);
    } else if (key == "independent") {
      e.independent = value == "1";
    } else if (key == "discontinuity") {
      e.discontinuity = value == "1";
    } else if (key == "origin") {
      e.timeline_origin = Integer<int64_t>(value);
    } else if (key == "start") {
      e.start = Integer<int64_t>(value);
    } else if (key == "last") {
      e.last_part = value == "1";
    }
  }
  if (e.duration_us <= 0 || e.duration_us > 86'400'000'000 || e.program_date_time_ms <= 0) {
    return std::nullopt;
  }
  // Times any node's arithmetic can take without overflow: a date before the year 10000, and
  // 90 kHz timeline points within ±2^50 (about 400 years).
  constexpr int64_t kLatestPdtMs = 253'402'300'799'999;
  constexpr int64_t kMaxTicks = int64_t{1} << 50;
  auto in_range = [](const std::optional<int64_t>& v) {
    return !v || (*v <= kMaxTicks && *v >= -kMaxTicks);
  };
  if (e.program_date_time_ms > kLatestPdtMs || !in_range(e.start) || !in_range(e.timeline_origin)) {
    return std::nullopt;
  }
  return e;
}

bool SameFingerprint(const std::map<int64_t, int64_t>& relayed_start, std::string_view fingerprint,
                     int64_t tolerance_90k) {
  const size_t first = fingerprint.find(':');
  if (first == std::string_view::npos || fingerprint.size() > 64) return true;
  const size_t second = fingerprint.find(':', first + 1);
  if (second == std::string_view::npos) return true;
  auto msn = Integer<int64_t>(fingerprint.substr(0, first));
  auto start = Integer<int64_t>(fingerprint.substr(first + 1, second - first - 1));
  if (!msn || !start) return true;
  auto known = relayed_start.find(*msn);
  if (known == relayed_start.end()) return true;
  const __int128 delta = static_cast<__int128>(*start) - known->second;
  return delta <= tolerance_90k && delta >= -tolerance_90k;
}

}  // namespace meshwork::streamer::relay
