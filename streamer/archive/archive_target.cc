#include "streamer/archive/archive_target.h"

#include "streamer/archive/layout.h"

namespace meshwork::streamer::archive {

namespace {

ArchiveTarget Bad(std::string error) {
  ArchiveTarget t;
  t.kind = ArchiveTarget::kBad;
  t.error = std::move(error);
  return t;
}

// "{from}-{duration|now}" of a playlist name.
ArchiveTarget ParsePeriod(std::string_view period, ArchiveTarget t) {
  auto dash = period.find('-');
  if (dash == std::string_view::npos) return Bad("expected {from}-{duration} in the file name");
  auto from = ParseDecimal(period.substr(0, dash));
  if (!from || *from > kMaxArchiveFromS) {
    return Bad("from must be Unix seconds (a non-negative integer)");
  }
  std::string_view duration = period.substr(dash + 1);
  t.from_ms = *from * 1000;
  if (duration == "now") {
    t.duration_ms.reset();
  } else {
    auto d = ParseDecimal(duration);
    if (!d || *d == 0 || *d > 10 * 365 * 86400LL) {
      return Bad("duration must be a positive number of seconds, or now");
    }
    t.duration_ms = *d * 1000;
  }
  t.kind = ArchiveTarget::kPlaylist;
  return t;
}

}  // namespace

ArchiveTarget ParseArchiveTarget(std::string_view path) {
  if (path.starts_with("/")) path.remove_prefix(1);
  if (path.size() > 2048) return {};
  auto slash = path.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return {};
  std::string_view file = path.substr(slash + 1);
  // Every viewer request comes here first: a file name no archive form starts with is no
  // archive target, said before anything is copied.
  if (!file.starts_with("index-") && !file.starts_with("archive-") &&
      !file.starts_with("timeshift_abs-") && !file.starts_with("dvr-")) {
    return {};
  }
  ArchiveTarget t;
  t.prefix = std::string(path.substr(0, slash));
  // D-8: "..", empty parts and characters no stream or rendition name has are refused here
  // (400), before any lookup or question to central or an upstream.
  if (!SafeStreamName(t.prefix)) {
    return Bad(
        "the path before the file name must be a stream (and rendition) name: parts of "
        "[A-Za-z0-9._-] separated by '/', none starting with '.'");
  }
  if (file.starts_with("index-") || file.starts_with("archive-")) {
    std::string_view rest = file.substr(file.find('-') + 1);
    if (rest.ends_with(".mpd")) {
      // DASH: a static MPD over the CMAF recording, for a finished period only.
      rest.remove_suffix(4);
      t.proto = Proto::kFmp4;
      t.dash = true;
      t = ParsePeriod(rest, std::move(t));
      if (t.kind == ArchiveTarget::kPlaylist && !t.duration_ms) {
        return Bad("an archive MPD is static: give a duration in seconds, not now");
      }
      return t;
    }
    if (rest.ends_with(".ll.m3u8")) {
      if (file.starts_with("archive-")) return Bad("archive-… names the HLS-TS form only (.m3u8)");
      t.proto = Proto::kFmp4;
      rest.remove_suffix(8);
    } else if (rest.ends_with(".m3u8")) {
      t.proto = Proto::kTs;
      rest.remove_suffix(5);
    } else {
      return Bad("an archive playlist ends in .m3u8, .ll.m3u8 or .mpd");
    }
    return ParsePeriod(rest, std::move(t));
  }
  if (file.starts_with("timeshift_abs-")) {
    std::string_view rest = file.substr(14);
    if (!rest.ends_with(".m3u8")) return Bad("timeshift_abs-{from} ends in .m3u8");
    rest.remove_suffix(5);
    // A live playlist that starts at `from`: the event form, from `from` to the live edge.
    return ParsePeriod(std::string(rest) + "-now", std::move(t));
  }
  if (file.starts_with("dvr-init-")) {
    std::string_view rest = file.substr(9);
    if (!rest.ends_with(".mp4")) return Bad("an archived init segment ends in .mp4");
    rest.remove_suffix(4);
    auto start = ParseDecimal(rest);
    if (!start) return Bad("the init segment's start must be Unix milliseconds");
    t.kind = ArchiveTarget::kInit;
    t.proto = Proto::kFmp4;
    t.start_ms = *start;
    return t;
  }
  if (file.starts_with("dvr-")) {
    std::string_view rest = file.substr(4);
    if (rest.ends_with(".ts")) {
      t.proto = Proto::kTs;
    } else if (rest.ends_with(".m4s")) {
      t.proto = Proto::kFmp4;
    } else {
      return Bad("an archived segment ends in .ts or .m4s");
    }
    auto parsed = ParseSegmentName(rest, SegmentExtension(t.proto));
    if (!parsed) return Bad("an archived segment is dvr-{start_ms}-{duration_ms}");
    t.kind = ArchiveTarget::kSegment;
    t.start_ms = parsed->first;
    t.segment_duration_ms = parsed->second;
    return t;
  }
  return {};
}

}  // namespace meshwork::streamer::archive
