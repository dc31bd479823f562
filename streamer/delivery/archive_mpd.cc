#include "streamer/delivery/archive_mpd.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "absl/strings/str_cat.h"
#include "streamer/delivery/mpd_text.h"

namespace meshwork::streamer {

namespace {

using archive::Proto;
using archive::TrackKey;

constexpr size_t kMaxSegments = 100'000;
constexpr size_t kMaxInitBytes = 1 << 20;
// The first moof of a recorded segment (a CMAF chunk's header) fits well inside this.
constexpr size_t kMaxFragmentHeadBytes = 256 << 10;

// Up to `limit` bytes from the start of `path`; nullopt when it cannot be read.
std::optional<std::string> ReadPrefix(const std::filesystem::path& path, size_t limit) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out(limit, '\0');
  size_t got = 0;
  while (got < limit) {
    ssize_t n = ::pread(fd, out.data() + got, limit - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(got);
  return out;
}

std::optional<media::ProbedTrack> ProbeInitFile(const std::filesystem::path& path) {
  auto bytes = ReadPrefix(path, kMaxInitBytes);
  if (!bytes) return std::nullopt;
  auto tracks = media::ProbeInitSegment(*bytes);
  if (tracks.empty() || tracks.front().timescale == 0) return std::nullopt;
  return tracks.front();
}

constexpr uint64_t kMaxDecodeTime = uint64_t{1} << 53;

// `ms` on a timeline of `timescale` ticks per second, rounded to the nearest tick.
int64_t Ticks(int64_t ms, uint32_t timescale) {
  return static_cast<int64_t>(std::llround(static_cast<double>(ms) * timescale / 1000.0));
}

std::string SegmentList(const ArchiveMpdTrack& t, int64_t period_start_ms,
                        const std::string& query) {
  const uint32_t ts = t.probe->timescale;
  const auto& first = t.segments.front();
  const int64_t base = static_cast<int64_t>(t.first_decode_time);
  const int64_t pto = std::max<int64_t>(0, base - Ticks(first.start_ms - period_start_ms, ts));
  std::string out =
      absl::StrCat("          <SegmentList timescale=\"", ts, "\" presentationTimeOffset=\"", pto,
                   "\">\n", "            <Initialization sourceURL=\"", t.rendition, "/dvr-init-",
                   t.init_ms, ".mp4", query, "\"/>\n", "            <SegmentTimeline>\n");
  std::string urls;
  for (size_t i = 0; i < t.segments.size(); ++i) {
    const auto& s = t.segments[i];
    int64_t start = base + Ticks(s.start_ms - first.start_ms, ts);
    int64_t duration = Ticks(s.duration_ms, ts);
    // Back to back with the next: end exactly where it starts (no one-tick holes).
    if (i + 1 < t.segments.size() &&
        std::llabs(t.segments[i + 1].start_ms - s.end_ms()) <= kArchiveGapToleranceMs) {
      duration = base + Ticks(t.segments[i + 1].start_ms - first.start_ms, ts) - start;
    }
    // A track whose first sample comes a little after the period's start ("a1" is dated by
    // its samples: up to an AAC frame after v1's cut) is listed from the period's start, its
    // first segment that much longer: dash.js 5 looked up that track's segment for time 0,
    // found none, and at times never asked for one again (the video buffered, the audio
    // never, the start's seek never completing). The samples keep their own times.
    if (i == 0 && start > pto && first.start_ms - period_start_ms <= kArchiveGapToleranceMs) {
      duration += start - pto;
      start = pto;
    }
    absl::StrAppend(&out, "              <S t=\"", start, "\" d=\"", std::max<int64_t>(1, duration),
                    "\"/>\n");
    absl::StrAppend(&urls, "            <SegmentURL media=\"", t.rendition, "/dvr-", s.start_ms,
                    "-", s.duration_ms, ".m4s", query, "\"/>\n");
  }
  absl::StrAppend(&out, "            </SegmentTimeline>\n", urls, "          </SegmentList>\n");
  return out;
}

uint64_t PeakBitrate(const std::vector<archive::ArchivedSegment>& segments) {
  double peak = 0;
  for (const auto& s : segments) {
    peak = std::max(peak, static_cast<double>(s.size) * 8000.0 /
                              static_cast<double>(std::max<int64_t>(1, s.duration_ms)));
  }
  return static_cast<uint64_t>(std::llround(peak));
}

}  // namespace

std::vector<ArchiveMpdPeriod> PlanArchiveMpd(const archive::ArchiveIndex& index,
                                             const std::string& stream,
                                             const std::string& reference,
                                             const std::vector<std::string>& others,
                                             int64_t from_ms, int64_t to_ms) {
  std::vector<ArchiveMpdPeriod> periods;
  TrackKey ref{stream, Proto::kFmp4, reference};
  std::optional<int64_t> init;
  for (const auto& s : index.Range(ref, from_ms, to_ms, kMaxSegments)) {
    auto wanted = index.InitFor(ref, s.start_ms);
    if (!wanted) continue;  // a CMAF segment without its init cannot be played
    if (periods.empty() || wanted != init ||
        std::llabs(s.start_ms - periods.back().end_ms) > kArchiveGapToleranceMs) {
      ArchiveMpdPeriod p;
      p.start_ms = s.start_ms;
      p.tracks.push_back(ArchiveMpdTrack{.rendition = reference, .init_ms = *wanted});
      periods.push_back(std::move(p));
      init = wanted;
    }
    periods.back().tracks.front().segments.push_back(s);
    periods.back().end_ms = s.end_ms();
  }
  for (const auto& other : others) {
    TrackKey key{stream, Proto::kFmp4, other};
    for (auto& p : periods) {
      ArchiveMpdTrack t{.rendition = other};
      for (const auto& s : index.Range(key, p.start_ms, p.end_ms, kMaxSegments)) {
        int64_t middle = s.start_ms + s.duration_ms / 2;
        if (middle >= p.start_ms && middle < p.end_ms) t.segments.push_back(s);
      }
      if (t.segments.empty()) continue;
      auto i = index.InitFor(key, t.segments.front().start_ms);
      if (!i) continue;
      t.init_ms = *i;
      p.tracks.push_back(std::move(t));
    }
  }
  return periods;
}

void ProbeArchiveMpd(const std::filesystem::path& root, const std::string& stream,
                     std::vector<ArchiveMpdPeriod>& periods) {
  std::map<std::filesystem::path, std::optional<media::ProbedTrack>> inits;
  for (auto& p : periods) {
    for (auto& t : p.tracks) {
      auto dir = archive::TrackDir(root, stream, Proto::kFmp4, t.rendition);
      auto init_path = archive::InitPath(dir, t.init_ms);
      auto it = inits.find(init_path);
      if (it == inits.end()) it = inits.emplace(init_path, ProbeInitFile(init_path)).first;
      if (!it->second) continue;
      const auto& first = t.segments.front();
      auto head =
          ReadPrefix(archive::SegmentPath(dir, Proto::kFmp4, first.start_ms, first.duration_ms),
                     kMaxFragmentHeadBytes);
      auto start = head ? media::ProbeFragmentStart(*head) : std::nullopt;
      // A decode time past 2^53 ticks is left out: dash.js holds times as doubles, and the
      // timeline's sums (base + offsets in the period) must stay far from int64's end.
      if (!start || start->base_media_decode_time > kMaxDecodeTime) continue;
      t.probe = it->second;
      t.first_decode_time = start->base_media_decode_time;
    }
  }
}

std::optional<media::ProbedTrack> ProbeArchiveInit(const std::filesystem::path& root,
                                                   const archive::ArchiveIndex& index,
                                                   const TrackKey& track, int64_t at_ms) {
  auto init = index.InitFor(track, at_ms);
  if (!init) return std::nullopt;
  return ProbeInitFile(archive::InitPath(
      archive::TrackDir(root, track.stream, track.proto, track.rendition), *init));
}

std::string ArchiveMpd(const std::vector<ArchiveMpdPeriod>& periods, const std::string& uri_query) {
  const std::string query = uri_query.empty() ? "" : mpd::XmlEscape("?" + uri_query);
  std::string body;
  // Periods follow each other in presentation time: a gap in the recording is skipped, as
  // an HLS player skips it at a discontinuity.
  int64_t presented_ms = 0, longest_ms = 0;
  for (const auto& p : periods) {
    std::string sets[2];  // video, audio
    for (const auto& t : p.tracks) {
      if (!t.probe) continue;
      for (const auto& s : t.segments) longest_ms = std::max(longest_ms, s.duration_ms);
      bool video = t.probe->info.is_video();
      sets[video ? 0 : 1] += mpd::Representation("        ", t.rendition, PeakBitrate(t.segments),
                                                 t.probe->info.codec_string, &t.probe->info,
                                                 SegmentList(t, p.start_ms, query));
    }
    if (sets[0].empty() && sets[1].empty()) continue;
    absl::StrAppend(&body, "  <Period id=\"p", p.start_ms, "\" start=\"",
                    mpd::Duration(presented_ms), "\" duration=\"",
                    mpd::Duration(p.end_ms - p.start_ms), "\">\n");
    presented_ms += p.end_ms - p.start_ms;
    for (int i = 0; i < 2; ++i) {
      if (sets[i].empty()) continue;
      absl::StrAppend(
          &body, "    <AdaptationSet id=\"", i, "\" contentType=\"", i == 0 ? "video" : "audio",
          "\" mimeType=\"", i == 0 ? "video/mp4" : "audio/mp4",
          "\" segmentAlignment=\"true\" startWithSAP=\"1\">\n", sets[i], "    </AdaptationSet>\n");
    }
    body += "  </Period>\n";
  }
  if (body.empty()) return "";
  return absl::StrCat("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
                      "<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\" "
                      "profiles=\"urn:mpeg:dash:profile:full:2011\" type=\"static\" "
                      "mediaPresentationDuration=\"",
                      mpd::Duration(presented_ms), "\" minBufferTime=\"",
                      mpd::Duration(std::max<int64_t>(longest_ms, 1000)),
                      "\" maxSegmentDuration=\"", mpd::Duration(longest_ms), "\">\n", body,
                      "</MPD>\n");
}

}  // namespace meshwork::streamer
