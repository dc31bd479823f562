// Box layouts from ISO/IEC 14496-12 §8.8 (moof, traf, tfhd, tfdt, trun) and 14496-15
// (length-prefixed NAL units); ADTS from ISO/IEC 13818-7.
#include "streamer/media/fmp4_demuxer.h"

#include <cstdlib>
#include <limits>
#include <optional>

#include "streamer/media/mp4_reader.h"

namespace meshwork::media {
namespace {

using mp4_reader::Box;
using mp4_reader::Child;
using mp4_reader::Children;
using mp4_reader::Reader;

constexpr uint32_t kNonSyncSample = 0x00010000;  // sample_is_non_sync_sample
constexpr size_t kMaxNalUnits = 4096;            // per access unit

struct Sample {
  int64_t dts = 0;  // track timescale
  int64_t duration = 0;
  int64_t cto = 0;
  bool sync = true;
  std::string_view data;
};

// The samples of one traf whose data lies in `buffer`, `moof_at` being where its moof starts.
// Empty, or what is malformed.
std::string ReadTraf(std::string_view traf, std::string_view buffer, size_t moof_at,
                     uint32_t track_id, std::vector<Sample>& out) {
  auto tfhd = Child(traf, "tfhd");
  if (!tfhd) return "traf without tfhd";
  Reader h(*tfhd);
  const uint64_t tf_flags = h.Uint(4) & 0xffffff;
  if (h.Uint(4) != track_id) return "";  // another track
  uint64_t base = moof_at;
  if (tf_flags & 0x01) base = h.Uint(8);
  if (tf_flags & 0x02) h.Skip(4);  // sample_description_index
  const uint64_t default_duration = (tf_flags & 0x08) ? h.Uint(4) : 0;
  const uint64_t default_size = (tf_flags & 0x10) ? h.Uint(4) : 0;
  const uint64_t default_flags = (tf_flags & 0x20) ? h.Uint(4) : 0;
  if (!h.ok()) return "tfhd is truncated";
  auto tfdt = Child(traf, "tfdt");
  if (!tfdt) return "traf without tfdt";
  Reader d(*tfdt);
  const uint64_t tfdt_version = d.Uint(1);
  d.Skip(3);
  int64_t dts = static_cast<int64_t>(d.Uint(tfdt_version == 1 ? 8 : 4) & 0x3fffffffffffffff);
  if (!d.ok()) return "tfdt is truncated";
  uint64_t data_at = base;  // where the next trun without a data_offset continues
  for (const Box& box : Children(traf)) {
    if (box.type != "trun") continue;
    Reader r(box.payload);
    const uint64_t version = r.Uint(1);
    const uint64_t flags = r.Uint(3);
    const uint64_t count = r.Uint(4);
    if (flags & 0x01) {
      data_at = base + static_cast<int64_t>(static_cast<int32_t>(r.Uint(4)));
    }
    const bool first_flags_present = flags & 0x04;
    const uint64_t first_flags = first_flags_present ? r.Uint(4) : 0;
    const size_t per_sample =
        4 * (((flags >> 8) & 1) + ((flags >> 9) & 1) + ((flags >> 10) & 1) + ((flags >> 11) & 1));
    if (!r.ok() || (per_sample > 0 && count > r.remaining() / per_sample) ||
        (per_sample == 0 && count > kMaxDemuxedSamples) ||
        out.size() + count > kMaxDemuxedSamples) {
      return "trun sample count exceeds its box or the bound";
    }
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t duration = (flags & 0x100) ? r.Uint(4) : default_duration;
      const uint64_t size = (flags & 0x200) ? r.Uint(4) : default_size;
      uint64_t sample_flags = (flags & 0x400) ? r.Uint(4) : default_flags;
      if (i == 0 && first_flags_present) sample_flags = first_flags;
      int64_t cto = 0;
      if (flags & 0x800) {
        uint64_t raw = r.Uint(4);
        cto = version == 0 ? static_cast<int64_t>(raw)
                           : static_cast<int64_t>(static_cast<int32_t>(raw));
      }
      if (!r.ok()) return "trun is truncated";
      if (data_at > buffer.size() || size > buffer.size() - data_at) {
        return "a sample lies outside the fragment's bytes";
      }
      out.push_back(Sample{dts, static_cast<int64_t>(duration), cto,
                           !(sample_flags & kNonSyncSample), buffer.substr(data_at, size)});
      data_at += size;
      dts += static_cast<int64_t>(duration);
    }
  }
  return "";
}

constexpr int64_t kMaxTime90k = int64_t{1} << 52;

// Ticks of `timescale` to 90 kHz: the smallest 90 kHz time Fmp4Writer's Rescale (a floor)
// maps to `ticks`, so a packager's timestamps come back as they were (exactly at 90 kHz).
int64_t To90k(int64_t ticks, uint32_t timescale) {
  if (timescale == 90000) return ticks;
  __int128 n = static_cast<__int128>(ticks) * 90000;
  __int128 q = n / timescale;
  if (q * timescale < n) ++q;  // ceiling (ticks are never negative here)
  // Out of int64's range: a value the caller refuses (kMaxTime90k), not a wrapped one.
  if (q > std::numeric_limits<int64_t>::max()) return std::numeric_limits<int64_t>::max();
  if (q < -std::numeric_limits<int64_t>::max()) return -std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(q);
}

// A length-prefixed (4-byte) access unit as Annex B, with `parameter_sets` first when given;
// nullopt when the lengths do not add up.
std::optional<std::string> ToAnnexB(std::string_view sample,
                                    const std::vector<std::string>* parameter_sets) {
  static constexpr char kStart[] = {0, 0, 0, 1};
  std::string out;
  out.reserve(sample.size() + 64);
  if (parameter_sets) {
    for (const auto& ps : *parameter_sets) {
      out.append(kStart, 4);
      out.append(ps);
    }
  }
  size_t units = 0;
  while (!sample.empty()) {
    if (sample.size() < 4 || ++units > kMaxNalUnits) return std::nullopt;
    uint32_t n = (static_cast<uint8_t>(sample[0]) << 24) | (static_cast<uint8_t>(sample[1]) << 16) |
                 (static_cast<uint8_t>(sample[2]) << 8) | static_cast<uint8_t>(sample[3]);
    sample.remove_prefix(4);
    if (n == 0 || n > sample.size()) return std::nullopt;
    out.append(kStart, 4);
    out.append(sample.substr(0, n));
    sample.remove_prefix(n);
  }
  return out;
}

}  // namespace

std::string AdtsHeaderFor(std::string_view asc, size_t payload_bytes) {
  if (asc.size() < 2) return "";
  const uint8_t a = static_cast<uint8_t>(asc[0]), b = static_cast<uint8_t>(asc[1]);
  const int object_type = a >> 3;
  const int sampling_index = ((a & 7) << 1) | (b >> 7);
  const int channels = (b >> 3) & 0xf;
  const size_t length = payload_bytes + 7;
  // ADTS carries profiles 1…4 (object types 1…4) and sampling indices 0…12 only.
  if (object_type < 1 || object_type > 4 || sampling_index > 12 || channels > 7 ||
      length >= (1u << 13)) {
    return "";
  }
  std::string h(7, '\0');
  h[0] = static_cast<char>(0xff);
  h[1] = static_cast<char>(0xf1);  // MPEG-4, layer 0, protection absent
  h[2] = static_cast<char>(((object_type - 1) << 6) | (sampling_index << 2) | (channels >> 2));
  h[3] = static_cast<char>(((channels & 3) << 6) | (length >> 11));
  h[4] = static_cast<char>((length >> 3) & 0xff);
  h[5] = static_cast<char>(((length & 7) << 5) | 0x1f);  // buffer fullness 0x7ff: VBR
  h[6] = static_cast<char>(0xfc);                        // one raw data block
  return h;
}

FragmentFrames DemuxFragments(std::string_view fragments, const ProbedTrack& track,
                              int audio_frames_per_pes) {
  auto fail = [](std::string error) { return FragmentFrames{{}, std::move(error)}; };
  const TrackInfo& info = track.info;
  if (track.timescale == 0) return fail("the track has no timescale");
  if (!info.is_video() && !info.is_audio()) {
    return fail("the track's codec cannot go into MPEG-TS");
  }
  if (info.is_audio() && AdtsHeaderFor(info.audio_specific_config, 0).empty()) {
    return fail("the audio track's AudioSpecificConfig cannot make ADTS");
  }
  std::vector<Sample> samples;
  for (const Box& box : Children(fragments)) {
    if (box.type != "moof") continue;
    const size_t moof_at = box.offset;
    for (const Box& traf : Children(box.payload)) {
      if (traf.type != "traf") continue;
      auto error = ReadTraf(traf.payload, fragments, moof_at, track.track_id, samples);
      if (!error.empty()) return fail(std::move(error));
    }
  }
  if (samples.empty()) return fail("no sample of the track");
  std::vector<Frame> frames;
  frames.reserve(info.is_video() ? samples.size() : samples.size() / 2 + 1);
  // the frames are the samples plus parameter sets before keyframes and ADTS headers —
  // a few percent of a real fragment. A fragment of tiny sync samples would multiply the
  // init's parameter sets instead: refused past twice its size (and a megabyte).
  const size_t budget = 2 * fragments.size() + (size_t{1} << 20);
  size_t produced = 0;
  const Codec codec = info.codec;
  for (size_t i = 0; i < samples.size();) {
    const Sample& s = samples[i];
    Frame f;
    f.pid = info.pid;
    f.codec = codec;
    f.dts = To90k(s.dts, track.timescale);
    f.pts = To90k(s.dts + s.cto, track.timescale);
    // times past ±2^52 at 90 kHz (~1 600 years) are no stream's; every later step adds
    // to them (PCR leads, segment ends) and must not overflow.
    if (std::abs(f.dts) > kMaxTime90k || std::abs(f.pts) > kMaxTime90k) {
      return fail("a sample's decode or presentation time is out of range");
    }
    if (info.is_video()) {
      if (s.data.empty()) {  // no access unit: nothing to mux (the packager skips these too)
        ++i;
        continue;
      }
      f.keyframe = s.sync;
      auto annexb = ToAnnexB(s.data, s.sync ? &info.parameter_sets : nullptr);
      if (!annexb) return fail("a video sample's NAL unit lengths do not add up");
      f.data = std::make_shared<const std::string>(*std::move(annexb));
      ++i;
    } else {
      f.keyframe = true;
      std::string data;
      // Consecutive samples only: a gap in the timeline starts a new PES with its own time.
      int grouped = 0;
      int64_t expected = s.dts;
      while (i < samples.size() && grouped < audio_frames_per_pes && samples[i].dts == expected) {
        data += AdtsHeaderFor(info.audio_specific_config, samples[i].data.size());
        data += samples[i].data;
        expected = samples[i].dts + samples[i].duration;
        ++grouped;
        ++i;
      }
      f.data = std::make_shared<const std::string>(std::move(data));
    }
    produced += f.data->size();
    if (produced > budget) {
      return fail("the fragment's frames would take more than twice its size");
    }
    frames.push_back(std::move(f));
  }
  if (frames.empty()) return fail("no sample of the track holds data");
  return FragmentFrames{std::move(frames), ""};
}

}  // namespace meshwork::media
