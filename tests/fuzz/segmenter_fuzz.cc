// Fuzzes the segmenter (S-4, S-5, S-7, S-10, S-16a) with frame sequences no source should
// send but any source can: timestamps that stand still, step back, jump by hours or across
// the 33-bit wrap, B-frame offsets, video without keyframes, audio far ahead of or behind
// the video, AAC access units of many ADTS frames (and bytes that are not ADTS), tracks
// announced again mid-stream, source changes, central's anchor arriving or changing at any
// moment, and a wall clock that moves by anything from nothing to minutes between frames.
// The frames are what a demuxer that checked only their framing would hand on (the TS and
// FLV demuxers have fuzz targets of their own), built from the input by a small op
// language read with FuzzedDataProvider.
//
// Properties (a violation traps):
//  * per rendition, published segments have consecutive msn (increasing when two video
//    tracks disagree on the time; a track announced mid-stream once left a hole), a positive
//    duration shorter than 26.5 h (the 33-bit wrap; a jump right after a rendition's first frame
//    once closed a segment 60 years long), MPEG-TS bytes in whole 188-byte packets,
//    the configured size cap respected;
//  * a CMAF segment is the concatenation of its parts, numbered 0, 1, … ("a1": as v1's,
//    increasing) with the last flagged ("a1": only a last one), each published
//    (PublishPartFn) before its segment with the same msn and index; its duration is
//    their span, which is the sum of their durations (parts of one segment are contiguous
//    in time; "a1"'s are dated by their samples);
//  * no crash, no sanitizer report, no hang (libFuzzer's timeout).

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/log/log.h"
#include "common/time/clock.h"
#include "streamer/packager/segmenter.h"

namespace {

using meshwork::FakeClock;
using meshwork::TimelineAnchor;
using meshwork::media::Codec;
using meshwork::media::Frame;
using meshwork::media::TrackInfo;
using meshwork::streamer::Part;
using meshwork::streamer::RenditionInfo;
using meshwork::streamer::Segment;
using meshwork::streamer::Segmenter;
using meshwork::streamer::SegmenterOptions;
using meshwork::streamer::TimelineAnchors;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

// SEGMENTER_FUZZ_TRACE=1 prints every frame and every publish (to read a crash input).
const bool kTrace = std::getenv("SEGMENTER_FUZZ_TRACE") != nullptr;

constexpr uint16_t kVideoPids[] = {0x100, 0x102};
constexpr uint16_t kAudioPid = 0x101;
constexpr int kSampleRates[] = {96000, 88200, 64000, 48000, 44100, 32000,
                                24000, 22050, 16000, 12000, 11025, 8000};

TrackInfo Video(uint16_t pid, bool hevc) {
  TrackInfo t;
  t.pid = pid;
  t.codec = hevc ? Codec::kHevc : Codec::kH264;
  t.codec_string = hevc ? "hvc1.1.6.L93.B0" : "avc1.64001e";
  t.width = 640;
  t.height = 360;
  t.frame_rate = 25;
  t.parameter_sets = {std::string("\x67\x64\x00\x1e\xac", 5), std::string("\x68\xee\x3c\x80", 4)};
  return t;
}

TrackInfo Audio(int rate_index, int channels) {
  TrackInfo t;
  t.pid = kAudioPid;
  t.codec = Codec::kAac;
  t.codec_string = "mp4a.40.2";
  t.sample_rate = kSampleRates[rate_index];
  t.channels = channels;
  t.aac_object_type = 2;
  t.audio_specific_config =
      std::string({static_cast<char>(0x10 | (rate_index >> 1)),
                   static_cast<char>(((rate_index & 1) << 7) | (channels << 3))});
  return t;
}

// One ADTS frame of AAC-LC at `rate_index`, `payload` bytes after its 7-byte header.
void AppendAdts(std::string& out, int rate_index, int channels, size_t payload) {
  const size_t length = payload + 7;
  const uint8_t h[7] = {
      0xff,
      0xf1,
      static_cast<uint8_t>((1 << 6) | (rate_index << 2) | (channels >> 2)),
      static_cast<uint8_t>(((channels & 3) << 6) | ((length >> 11) & 3)),
      static_cast<uint8_t>((length >> 3) & 0xff),
      static_cast<uint8_t>(((length & 7) << 5) | 0x1f),
      0xfc,
  };
  out.append(reinterpret_cast<const char*>(h), 7);
  out.append(payload, '\x21');
}

struct Rendition {
  int64_t last_msn = 0;
  bool any = false;
  // Parts published for the open segment: msn → their index, start, duration.
  std::map<int64_t, std::vector<std::shared_ptr<const Part>>> parts;
};

struct Checker {
  size_t cap = 0;
  bool two_videos = false;
  std::map<std::string, Rendition> renditions;

  void OnPart(const RenditionInfo& info, int64_t msn, int64_t segment_start,
              std::shared_ptr<const Part> part) {
    Check(part != nullptr);
    if (kTrace) {
      std::fprintf(stderr, "  part %s %lld.%d start %lld dur %lld%s\n", info.name.c_str(),
                   (long long)msn, part->index, (long long)part->start, (long long)part->duration,
                   part->last ? " last" : "");
    }
    Check(part->duration >= 0);
    auto& list = renditions[info.name].parts[msn];
    // "a1" numbers its parts as v1 does; one of v1's parts with no audio in its time has no
    // twin in "a1" (an empty fragment is no part), so there its numbers may skip.
    if (info.name == "a1") {
      Check(list.empty() ? part->index >= 0 : part->index > list.back()->index);
    } else {
      Check(part->index == static_cast<int>(list.size()));
    }
    // Contiguous ("a1"'s are dated by their samples, which a source may send overlapping).
    if (!list.empty() && info.name != "a1") {
      Check(part->start == list.back()->start + list.back()->duration);
    }
    Check(part->data != nullptr);
    list.push_back(std::move(part));
  }

  void OnSegment(const RenditionInfo& info, std::shared_ptr<const Segment> s) {
    Check(s != nullptr);
    if (kTrace) {
      std::fprintf(stderr, "  segment %s %lld start %lld dur %lld parts %zu ts %zu%s\n",
                   info.name.c_str(), (long long)s->msn, (long long)s->start,
                   (long long)s->duration, s->parts.size(), s->ts ? s->ts->size() : 0,
                   s->discontinuity ? " discontinuity" : "");
    }
    Rendition& r = renditions[info.name];
    // Positive, and shorter than the 33-bit wrap (26.5 h): 4 000 ops of at most
    // max_forward_gap_ms (20 s) each cannot make a longer one.
    Check(s->duration > 0 && s->duration < Segmenter::kWrap);
    if (r.any) {
      // Consecutive (RFC 8216), unless two video tracks disagree on the time (no muxer
      // writes that, any input can: a rendition may skip the msn the other took); then
      // increasing.
      Check(two_videos ? s->msn > r.last_msn : s->msn == r.last_msn + 1);
    }
    r.any = true;
    r.last_msn = s->msn;
    if (s->ts) {
      Check(s->ts->size() % 188 == 0);
      Check(s->ts->size() <= cap + 64 * 1024);
    }
    if (!s->parts.empty()) {
      int64_t sum = 0;
      uint64_t bytes = 0;
      for (size_t i = 0; i < s->parts.size(); ++i) {
        const Part& p = *s->parts[i];
        if (info.name == "a1") {
          Check(i == 0 ? p.index >= 0 : p.index > s->parts[i - 1]->index);
        } else {
          Check(p.index == static_cast<int>(i));
        }
        // "a1"'s last part is flagged when audio reaches the segment's end; with none in the
        // last part's time, the part before it was published unflagged, and stays so.
        if (info.name == "a1") {
          Check(!p.last || i + 1 == s->parts.size());
        } else {
          Check(p.last == (i + 1 == s->parts.size()));
        }
        Check(p.duration >= 0);
        if (i > 0 && info.name != "a1") {
          Check(p.start == s->parts[i - 1]->start + s->parts[i - 1]->duration);
        }
        sum += p.duration;
        bytes += p.data ? p.data->size() : 0;
      }
      const Part& back = *s->parts.back();
      // Their span (a tick at least: "a1"'s may run backwards with their samples).
      Check(std::max<int64_t>(back.start + back.duration - s->start, 1) == s->duration);
      if (info.name != "a1") Check(sum == s->duration);
      Check(s->parts.front()->start == s->start);
      if (s->m4s_bytes != 0) Check(s->m4s_bytes == bytes);
      // Each was published as a part first, the same object.
      auto it = r.parts.find(s->msn);
      Check(it != r.parts.end() && it->second.size() == s->parts.size());
      for (size_t i = 0; i < s->parts.size(); ++i) Check(it->second[i] == s->parts[i]);
    }
    r.parts.erase(r.parts.begin(), r.parts.upper_bound(s->msn));
  }
};

// A timestamp step: mostly a frame's worth, sometimes anything.
int64_t Step(FuzzedDataProvider& in, int64_t usual) {
  switch (in.ConsumeIntegralInRange<int>(0, 7)) {
    case 0:
      return 0;
    case 1:
      return -in.ConsumeIntegralInRange<int64_t>(1, 90'000);  // back up to a second
    case 2:
      return in.ConsumeIntegralInRange<int64_t>(90'000, 90'000LL * 3600 * 30);  // to 30 h
    case 3:
      return -in.ConsumeIntegralInRange<int64_t>(90'000, int64_t{1} << 34);
    case 4:
      return in.ConsumeIntegralInRange<int64_t>(1, 20 * usual);
    default:
      return usual;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static bool quiet = [] {
    meshwork::log::SetMinLevel(meshwork::log::Level::kError);
    return true;
  }();
  (void)quiet;
  FuzzedDataProvider in(data, size);
  SegmenterOptions options;
  options.segment_ms = in.ConsumeIntegralInRange<int>(1, 12) * 500;
  options.part_ms = in.ConsumeIntegralInRange<int>(50, options.segment_ms);
  options.max_segment_bytes = in.ConsumeIntegralInRange<size_t>(1, 64) * 4096;
  options.max_forward_gap_ms = in.ConsumeIntegralInRange<int>(100, 20'000);
  FakeClock clock;
  clock.Advance(std::chrono::milliseconds(in.ConsumeIntegralInRange<int64_t>(0, 1LL << 40)));
  TimelineAnchors anchors;
  Checker checker;
  checker.cap = options.max_segment_bytes;
  Segmenter segmenter(
      options, clock, in.ConsumeBool() ? &anchors : nullptr,
      [&](const RenditionInfo& info, std::shared_ptr<const Segment> s) {
        checker.OnSegment(info, std::move(s));
      },
      [&](const RenditionInfo& info, int64_t msn, int64_t start, std::shared_ptr<const Part> p) {
        checker.OnPart(info, msn, start, std::move(p));
      });

  int64_t video_ts[2] = {in.ConsumeIntegral<int64_t>() & ((int64_t{1} << 33) - 1), 0};
  video_ts[1] = video_ts[0];
  int64_t audio_ts = video_ts[0] + in.ConsumeIntegralInRange<int64_t>(-90'000, 90'000);
  int rate_index = 3;
  int channels = 2;
  bool announced[3] = {false, false, false};
  bool hevc[2] = {false, false};
  for (int ops = 0; ops < 4000 && in.remaining_bytes() > 0; ++ops) {
    switch (in.ConsumeIntegralInRange<int>(0, 15)) {
      case 0: {  // announce (or re-announce) a track
        int which = in.ConsumeIntegralInRange<int>(0, 2);
        if (which == 2) {
          rate_index = in.ConsumeIntegralInRange<int>(0, 11);
          channels = in.ConsumeIntegralInRange<int>(1, 2);
          segmenter.OnTrack(Audio(rate_index, channels));
        } else {
          hevc[which] = in.ConsumeBool();
          if (which == 1) checker.two_videos = true;
          segmenter.OnTrack(Video(kVideoPids[which], hevc[which]));
        }
        announced[which] = true;
        break;
      }
      case 1:
        if (kTrace) std::fprintf(stderr, "source changed\n");
        segmenter.OnSourceChanged();
        break;
      case 2: {
        std::optional<TimelineAnchor> a;
        if (in.ConsumeBool()) {
          a = TimelineAnchor{
              video_ts[0] + in.ConsumeIntegralInRange<int64_t>(-1LL << 36, 1LL << 36),
              in.ConsumeIntegralInRange<int64_t>(0, 1LL << 42)};
        }
        anchors.SetCentral(a);
        break;
      }
      case 3:
        clock.Advance(std::chrono::milliseconds(in.ConsumeIntegralInRange<int>(0, 300'000)));
        break;
      case 4:
      case 5:
      case 6:
      case 7: {  // audio: an access unit of one or more ADTS frames, or other bytes
        if (!announced[2]) break;
        Frame f;
        f.pid = kAudioPid;
        f.codec = Codec::kAac;
        f.keyframe = true;
        const int frames = in.ConsumeBool() ? 1 : in.ConsumeIntegralInRange<int>(1, 12);
        audio_ts += Step(in, 1920 * frames);
        f.pts = f.dts = audio_ts;
        auto bytes = std::make_shared<std::string>();
        if (in.ConsumeIntegralInRange<int>(0, 15) == 0) {
          *bytes = in.ConsumeBytesAsString(in.ConsumeIntegralInRange<size_t>(0, 64));
        } else {
          for (int i = 0; i < frames; ++i) {
            AppendAdts(*bytes, rate_index, channels, in.ConsumeIntegralInRange<size_t>(0, 300));
          }
        }
        f.data = std::move(bytes);
        if (kTrace)
          std::fprintf(stderr, "audio dts %lld bytes %zu\n", (long long)f.dts, f.data->size());
        segmenter.OnFrame(f);
        break;
      }
      default: {  // video on one of the two tracks
        const int which = in.ConsumeIntegralInRange<int>(0, 9) == 0 ? 1 : 0;
        if (!announced[which]) break;
        Frame f;
        f.pid = kVideoPids[which];
        f.codec = hevc[which] ? Codec::kHevc : Codec::kH264;
        video_ts[which] += Step(in, 3600);
        f.dts = video_ts[which];
        f.pts = f.dts + (in.ConsumeBool() ? 0 : in.ConsumeIntegralInRange<int64_t>(-3600, 14'400));
        f.keyframe = in.ConsumeIntegralInRange<int>(0, 7) == 0;
        // An access unit delimiter, then an IDR or a non-IDR slice's header.
        std::string bytes =
            hevc[which] ? std::string("\x00\x00\x00\x01\x46\x01\x50\x00\x00\x00\x01", 11) +
                              (f.keyframe ? std::string("\x26\x01", 2) : std::string("\x02\x01", 2))
                        : std::string("\x00\x00\x00\x01\x09\xf0\x00\x00\x00\x01", 10) +
                              (f.keyframe ? "\x65" : "\x41");
        if (in.ConsumeIntegralInRange<int>(0, 15) == 0) {
          bytes = in.ConsumeBytesAsString(in.ConsumeIntegralInRange<size_t>(0, 64));
        } else {
          bytes.append(in.ConsumeIntegralInRange<size_t>(0, 5000), '\x11');
        }
        f.data = std::make_shared<const std::string>(std::move(bytes));
        if (kTrace) {
          std::fprintf(stderr, "video %x dts %lld pts %lld%s\n", f.pid, (long long)f.dts,
                       (long long)f.pts, f.keyframe ? " key" : "");
        }
        segmenter.OnFrame(f);
        if (in.ConsumeBool()) clock.Advance(std::chrono::milliseconds(40));
        break;
      }
    }
  }
  return 0;
}
