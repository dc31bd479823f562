#include "streamer/media/ts_demuxer.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "streamer/media/codec_parsers.h"
#include "streamer/media/ts_muxer.h"
#include "streamer/media/ts_tables.h"

namespace meshwork::media {
namespace {

constexpr size_t kPacket = 188;
// Bytes from a packet's start needed to decide on it: its successor's sync byte, and a
// restart inside it confirmed by the sync byte one packet further.
constexpr size_t kLookahead = 2 * kPacket;
constexpr uint8_t kSync = 0x47;
constexpr int64_t kWrap = int64_t{1} << 33;
constexpr size_t kMaxSectionBytes = 4096;
constexpr size_t kMaxAdtsCarry = 8192;

int64_t ReadTimestamp(const uint8_t* p) {
  return (int64_t{(p[0] >> 1) & 0x07} << 30) | (int64_t{p[1]} << 22) | (int64_t{p[2] >> 1} << 15) |
         (int64_t{p[3]} << 7) | (p[4] >> 1);
}

// Extends a 33-bit timestamp to the value nearest to `ref` (a backwards or forwards jump of
// more than 2^32 is taken as a wrap).
int64_t Unwrap(int64_t raw, int64_t ref) {
  int64_t v = (ref & ~(kWrap - 1)) + raw;
  if (v < ref - (kWrap >> 1)) {
    v += kWrap;
  } else if (v > ref + (kWrap >> 1)) {
    v -= kWrap;
  }
  return v;
}

std::span<const uint8_t> AsSpan(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

}  // namespace

struct TsDemuxer::Impl {
  explicit Impl(TsDemuxer* owner) : owner(owner) {}

  // One elementary stream of the current program.
  struct Stream {
    uint8_t stream_type = 0;
    TrackInfo info;
    bool announced = false;  // on_track called with a usable TrackInfo
    std::string sps;         // the SPS the info was derived from
    // The PES being reassembled: its header (when the first packet holds all of it, as it
    // does in practice) apart from its payload, so that the payload becomes the frame's bytes
    // without a copy (P-7). `head_size` 0: `pes` holds the whole PES so far.
    std::array<uint8_t, 9 + 255> head{};  // the longest PES header
    size_t head_size = 0;
    std::string pes;
    size_t last_pes_bytes = 0;  // the previous PES's size: the next one's buffer is that big
    bool in_pes = false;
    // Timestamps (unwrapped) of the previous frame, for unwrapping and for PES without PTS.
    bool have_ts = false;
    int64_t last_pts = 0;
    int64_t last_dts = 0;
    int64_t last_duration = 0;
    std::string adts_carry;  // an ADTS frame split across PES packets
  };
  struct Section {
    std::string data;
    bool active = false;
  };

  TsDemuxer* owner;
  std::string buffer;     // input left undecided by the last read (< kLookahead bytes)
  std::string_view data;  // what Process reads: `buffer`, or the current read in place
  size_t pos = 0;         // read position in `data`
  bool synced = false;
  bool skipped_since_sync = false;
  // Per PID (13 bits), payload-carrying packets only; -1: none seen yet.
  std::array<int8_t, 0x2000> last_cc = [] {
    std::array<int8_t, 0x2000> a;
    a.fill(-1);
    return a;
  }();
  std::map<uint16_t, Section> sections;
  int pmt_pid = -1;
  int pmt_version = -1;
  uint16_t program_number = 0;
  bool new_program = false;
  std::map<uint16_t, Stream> streams;
  // The latest unwrapped DTS of any stream of the program: a stream's first timestamp is
  // unwrapped against it, so that all streams share one 2^33 period (a node joining where
  // audio has wrapped and video not yet, or a stream recreated by a PMT change after a wrap,
  // would otherwise sit 26.5 h from the others).
  std::optional<int64_t> program_dts;

  Stats& stats() { return owner->stats_; }

  // P-7: packets are read where the input lies. Only what a read leaves undecided (fewer
  // than kLookahead bytes) is copied, into `buffer`, and taken up with the next read's first
  // bytes.
  void Feed(std::span<const uint8_t> bytes) {
    std::string_view in(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    if (!buffer.empty()) {
      // Enough of this read that every byte held back is decided on.
      const size_t take = std::min(in.size(), 2 * kLookahead - buffer.size());
      buffer.append(in.substr(0, take));
      in.remove_prefix(take);
      data = buffer;
      pos = 0;
      Process(false);
      if (in.empty()) {
        buffer.erase(0, pos);
        data = buffer;
        pos = 0;
        return;
      }
      // Undecided: < kLookahead bytes, all from this read (take > kLookahead).
      const size_t rest = buffer.size() - pos;
      if (rest > take) {
        std::fprintf(stderr, "TsDemuxer: %zu bytes undecided after a %zu-byte stitch\n", rest,
                     take);
        std::abort();
      }
      in = std::string_view(in.data() - rest, in.size() + rest);
      buffer.clear();
    }
    data = in;
    pos = 0;
    Process(false);
    buffer.assign(data.substr(pos));
    data = buffer;
    pos = 0;
  }

  uint8_t At(size_t i) const { return static_cast<uint8_t>(data[i]); }

  void Skip(size_t n) {
    stats().bytes_skipped += n;
    pos += n;
    skipped_since_sync = true;
  }

  // Consumes whole packets from `data`. Before the end of the input a packet is decided on
  // only with kLookahead bytes from its start in view (its successor's sync byte, a restart
  // inside it), so that any chunking of the input gives the same packets. At the end
  // (`final`) a lone packet candidate is accepted without the confirming sync byte of its
  // successor.
  void Process(bool final) {
    while (data.size() - pos >= (final ? kPacket : kLookahead)) {
      size_t avail = data.size() - pos;
      if (At(pos) != kSync) {
        if (synced) synced = false;
        // Find the next candidate.
        size_t next = data.find(static_cast<char>(kSync), pos + 1);
        if (next == std::string_view::npos) next = data.size();
        Skip(next - pos);
        continue;
      }
      if (!synced) {
        // Acquiring sync: the next packet must start with 0x47 too.
        if (avail <= kPacket) {
          if (!final) return;  // wait for the confirming byte
        } else if (At(pos + kPacket) != kSync) {
          Skip(1);
          continue;
        }
        synced = true;
        if (skipped_since_sync) ++stats().resyncs;
        skipped_since_sync = false;
      } else if (avail > kPacket && At(pos + kPacket) != kSync) {
        // In sync but the successor does not start with 0x47: either garbage follows this
        // packet (keep it) or this packet was truncated and a new one starts inside it
        // (drop it and resync there).
        size_t restart = 0;
        for (size_t j = 1; j < kPacket && pos + j + kPacket < data.size(); ++j) {
          if (At(pos + j) == kSync && At(pos + j + kPacket) == kSync) {
            restart = j;
            break;
          }
        }
        if (restart != 0) {
          synced = false;
          Skip(restart);
          continue;
        }
      }
      HandlePacket(reinterpret_cast<const uint8_t*>(data.data() + pos));
      pos += kPacket;
    }
  }

  void Flush() {
    data = buffer;
    pos = 0;
    Process(true);
    // A trailing partial packet can never complete into a valid one now.
    if (buffer.size() > pos) stats().bytes_skipped += buffer.size() - pos;
    buffer.clear();
    data = {};
    pos = 0;
    synced = false;
    skipped_since_sync = false;
    for (auto& [pid, s] : streams) CompletePes(pid, s);
  }

  void HandlePacket(const uint8_t* p) {
    ++stats().packets;
    if (p[1] & 0x80) {
      ++stats().tei_dropped;
      return;
    }
    const uint16_t pid = static_cast<uint16_t>(((p[1] & 0x1f) << 8) | p[2]);
    if (pid == 0x1fff) return;
    const bool pusi = p[1] & 0x40;
    const int afc = (p[3] >> 4) & 0x03;
    const int cc = p[3] & 0x0f;
    if (afc == 0) return;  // reserved
    size_t offset = 4;
    bool discontinuity = false;
    if (afc & 0x02) {
      size_t af_len = p[4];
      if (af_len > 183 || (afc == 0x03 && af_len > 182)) return;  // malformed
      if (af_len > 0) discontinuity = p[5] & 0x80;
      offset = 5 + af_len;
    }
    const bool has_payload = afc & 0x01;
    if (!has_payload) return;  // the CC only advances with payload

    int8_t& last = last_cc[pid];
    if (last >= 0 && !discontinuity) {
      int expected = (last + 1) & 0x0f;
      if (cc == last) return;  // duplicate packet
      if (cc != expected) {
        ++stats().cc_errors;
        LoseData(pid);
      }
    }
    last = static_cast<int8_t>(cc);

    std::string_view payload(reinterpret_cast<const char*>(p) + offset, kPacket - offset);
    if (pid == 0 || (pmt_pid >= 0 && pid == pmt_pid)) {
      HandlePsi(pid, payload, pusi);
      return;
    }
    auto sit = streams.find(pid);
    if (sit != streams.end()) HandlePes(pid, sit->second, payload, pusi);
  }

  // Data of `pid` was lost: what is being reassembled there is incomplete.
  void LoseData(uint16_t pid) {
    auto sit = streams.find(pid);
    if (sit != streams.end()) {
      Stream& s = sit->second;
      if (s.in_pes) ++stats().pes_dropped;
      s.in_pes = false;
      s.head_size = 0;
      s.pes.clear();
      s.adts_carry.clear();
    }
    auto sec = sections.find(pid);
    if (sec != sections.end()) sec->second = Section{};
  }

  // ---- PSI ----

  void HandlePsi(uint16_t pid, std::string_view payload, bool pusi) {
    Section& sec = sections[pid];
    if (pusi) {
      if (payload.empty()) return;
      size_t pointer = static_cast<uint8_t>(payload[0]);
      if (1 + pointer > payload.size()) {
        sec = Section{};
        return;
      }
      if (sec.active) {
        sec.data.append(payload.substr(1, pointer));
        DrainSections(pid, sec, /*expect_more=*/false);
      }
      sec.data.assign(payload.substr(1 + pointer));
      sec.active = true;
      DrainSections(pid, sec, /*expect_more=*/true);
    } else if (sec.active) {
      sec.data.append(payload);
      DrainSections(pid, sec, /*expect_more=*/true);
    }
  }

  void DrainSections(uint16_t pid, Section& sec, bool expect_more) {
    while (sec.active) {
      if (sec.data.empty() || static_cast<uint8_t>(sec.data[0]) == 0xff) {
        // Stuffing: the rest of the packet carries no section.
        sec = Section{};
        return;
      }
      if (sec.data.size() < 3) break;
      size_t len = 3 + (((static_cast<uint8_t>(sec.data[1]) & 0x0f) << 8) |
                        static_cast<uint8_t>(sec.data[2]));
      if (len > kMaxSectionBytes) {
        sec = Section{};
        return;
      }
      if (sec.data.size() < len) break;
      std::string section = sec.data.substr(0, len);
      sec.data.erase(0, len);
      HandleSection(pid, section);
      // HandleSection may replace the tables (and `sections` entries stay valid in a map).
    }
    if (!expect_more) sec = Section{};
    if (sec.data.size() > kMaxSectionBytes) sec = Section{};
  }

  void HandleSection(uint16_t pid, std::string_view section) {
    auto b = AsSpan(section);
    if (!ApplicableSection(b)) return;
    if (pid == 0) {
      if (b[0] == 0x00) HandlePat(b);
    } else if (b[0] == 0x02) {
      HandlePmt(b);
    }
  }

  void HandlePat(std::span<const uint8_t> b) {
    auto first = FirstPatProgram(b);  // first program only
    if (!first) return;
    if (first->pmt_pid != pmt_pid || first->program != program_number) {
      if (pmt_pid >= 0) sections.erase(static_cast<uint16_t>(pmt_pid));
      pmt_pid = first->pmt_pid;
      program_number = first->program;
      pmt_version = -1;    // the next PMT applies whatever its version
      new_program = true;  // and replaces every track
    }
  }

  void HandlePmt(std::span<const uint8_t> b) {
    // A PMT repeats every ~100 ms unchanged: its program and version (ParsePmt's first
    // fields) decide before the stream loop is read.
    const uint16_t program = static_cast<uint16_t>((b[3] << 8) | b[4]);
    const int version = (b[5] >> 1) & 0x1f;
    if (program != program_number || version == pmt_version) return;
    PmtTable pmt = ParsePmt(b, pmt_pid);
    const std::map<uint16_t, uint8_t>& wanted = pmt.streams;
    pmt_version = version;
    // Replace the tracks: keep the streams whose PID and type did not change, finish the
    // others' pending frames and forget them.
    for (auto it = streams.begin(); it != streams.end();) {
      auto w = wanted.find(it->first);
      if (!new_program && w != wanted.end() && w->second == it->second.stream_type) {
        ++it;
        continue;
      }
      CompletePes(it->first, it->second);
      it = streams.erase(it);
    }
    new_program = false;
    for (auto [pid, type] : wanted) {
      if (streams.count(pid)) continue;
      Stream s;
      s.stream_type = type;
      s.info.pid = pid;
      s.info.codec = type == 0x1b ? Codec::kH264 : type == 0x24 ? Codec::kHevc : Codec::kAac;
      streams.emplace(pid, std::move(s));
    }
  }

  // ---- PES ----

  void HandlePes(uint16_t pid, Stream& s, std::string_view payload, bool pusi) {
    if (pusi) {
      CompletePes(pid, s);
      s.in_pes = true;
      s.head_size = 0;
      const auto* u = reinterpret_cast<const uint8_t*>(payload.data());
      if (payload.size() >= 9 && u[0] == 0 && u[1] == 0 && u[2] == 1 &&
          9 + size_t{u[8]} <= payload.size()) {
        s.head_size = 9 + size_t{u[8]};
        std::memcpy(s.head.data(), u, s.head_size);
        payload.remove_prefix(s.head_size);
      }
      // P-7: room for a PES like the last one (≤ kMaxPesBytes), so that a video frame is not
      // regrown (and copied) a dozen times from 184-byte packets.
      s.pes.reserve(std::max(payload.size(), s.last_pes_bytes + s.last_pes_bytes / 8));
      s.pes.assign(payload);
    } else if (s.in_pes) {
      if (s.head_size + s.pes.size() + payload.size() > kMaxPesBytes) {
        ++stats().pes_dropped;
        s.in_pes = false;
        s.pes.clear();
        s.pes.shrink_to_fit();
        return;
      }
      s.pes.append(payload);
    } else {
      return;
    }
    // A PES with a length completes as soon as it has all its bytes.
    const size_t have = s.head_size + s.pes.size();
    if (have >= 6) {
      const uint8_t* b =
          s.head_size ? s.head.data() : reinterpret_cast<const uint8_t*>(s.pes.data());
      size_t len = (size_t{b[4]} << 8) | b[5];
      if (len != 0 && have >= 6 + len) CompletePes(pid, s);
    }
  }

  void CompletePes(uint16_t pid, Stream& s) {
    if (!s.in_pes) return;
    s.in_pes = false;
    std::string es = std::move(s.pes);  // the payload: becomes the frame's bytes
    s.pes.clear();
    size_t head_size = s.head_size;
    s.head_size = 0;
    s.last_pes_bytes = es.size();
    if (head_size == 0) {
      // The header did not fit the first packet: it is at the front of `es`.
      auto b = AsSpan(es);
      if (b.size() < 9 || b[0] != 0 || b[1] != 0 || b[2] != 1) {
        ++stats().pes_dropped;
        return;
      }
    }
    const uint8_t* h = head_size ? s.head.data() : reinterpret_cast<const uint8_t*>(es.data());
    const size_t len = (size_t{h[4]} << 8) | h[5];
    if (len != 0 && head_size + es.size() < 6 + len) {  // ended early (Flush, a new PUSI)
      ++stats().pes_dropped;
      return;
    }
    const uint8_t stream_id = h[3];
    if (stream_id == 0xbc || stream_id == 0xbe || stream_id == 0xbf || stream_id == 0xf0 ||
        stream_id == 0xf1 || stream_id == 0xff || stream_id == 0xf2 || stream_id == 0xf8) {
      return;  // no PES header extension: not an elementary stream we carry
    }
    // The PES's bytes: its length's, or all that came.
    const size_t total = len != 0 ? 6 + len : head_size + es.size();
    if (9 + size_t{h[8]} > total) {  // the header runs past the PES
      ++stats().pes_dropped;
      return;
    }
    if (head_size == 0) {
      head_size = 9 + size_t{h[8]};
      std::memcpy(s.head.data(), es.data(), head_size);
      es.erase(0, head_size);
      h = s.head.data();
    }
    es.resize(total - head_size);
    // A frame keeps its buffer: one reserved for a much larger PES (the one after a
    // keyframe) is cut down to size rather than held for the frame's lifetime.
    if (es.capacity() > 2 * es.size() + 4096) es.shrink_to_fit();
    if ((h[6] & 0xc0) != 0x80) {
      ++stats().pes_dropped;
      return;
    }
    int pts_dts_flags = (h[7] >> 6) & 0x03;
    size_t header_len = h[8];
    std::optional<int64_t> pts, dts;
    if (pts_dts_flags & 0x02) {
      if (header_len < 5) {
        ++stats().pes_dropped;
        return;
      }
      pts = ReadTimestamp(h + 9);
      if (pts_dts_flags == 0x03 && header_len >= 10) dts = ReadTimestamp(h + 14);
    }
    if (!dts) dts = pts;

    // Unwrap against the previous frame's DTS (a stream's first frame against the program's
    // latest; the program's first frame keeps its raw value).
    int64_t upts, udts;
    if (pts) {
      udts = s.have_ts ? Unwrap(*dts, s.last_dts) : program_dts ? Unwrap(*dts, *program_dts) : *dts;
      upts = Unwrap(*pts, udts);
    } else if (s.have_ts) {
      udts = s.last_dts + s.last_duration;
      upts = s.last_pts + s.last_duration;
    } else {
      ++stats().pes_dropped;
      return;
    }
    program_dts = udts;
    if (s.info.codec == Codec::kAac) {
      HandleAudio(pid, s, std::move(es), upts);
    } else {
      HandleVideo(pid, s, std::move(es), upts, udts);
    }
  }

  void Announce(Stream& s) {
    s.announced = true;
    if (owner->callbacks_.on_track) owner->callbacks_.on_track(s.info);
  }

  void Emit(Stream& s, int64_t pts, int64_t dts, bool keyframe, std::string data) {
    if (s.have_ts) {
      int64_t d = dts - s.last_dts;
      if (d > 0 && d < 90000 * 10) s.last_duration = d;
    }
    s.have_ts = true;
    s.last_pts = pts;
    s.last_dts = dts;
    Frame f;
    f.pid = s.info.pid;
    f.codec = s.info.codec;
    f.pts = pts;
    f.dts = dts;
    f.keyframe = keyframe;
    f.data = std::make_shared<const std::string>(std::move(data));
    ++stats().frames;
    if (owner->callbacks_.on_frame) owner->callbacks_.on_frame(std::move(f));
  }

  void HandleVideo(uint16_t pid, Stream& s, std::string&& es, int64_t pts, int64_t dts) {
    const bool hevc = s.info.codec == Codec::kHevc;
    AccessUnitHead head = ScanAccessUnitHead(es, hevc);
    std::string_view sps = head.sps;
    if (!sps.empty()) {
      bool changed = false;
      if (sps != s.sps) {
        std::optional<VideoInfo> vi = hevc ? ParseHevcSps(sps) : ParseH264Sps(sps);
        if (vi) {
          s.sps.assign(sps);
          s.info.codec_string = vi->codec_string;
          s.info.width = vi->width;
          s.info.height = vi->height;
          s.info.frame_rate = vi->frame_rate;
          changed = true;
        }
      }
      if (s.sps == sps && head.parameter_sets != s.info.parameter_sets) {
        s.info.parameter_sets = std::move(head.parameter_sets);
        changed = true;
      }
      if (changed || !s.announced) {
        if (!s.sps.empty()) Announce(s);
      }
    }
    // Frames before the first usable SPS cannot be decoded by anyone: not emitted.
    if (!s.announced) {
      s.have_ts = true;  // keep unwrapping continuous
      s.last_pts = pts;
      s.last_dts = dts;
      return;
    }
    Emit(s, pts, dts, head.keyframe, std::move(es));
  }

  void HandleAudio(uint16_t pid, Stream& s, std::string&& es, int64_t pts) {
    std::string data;
    int64_t first_pts = pts;
    if (!s.adts_carry.empty()) {
      // The first frame started in the previous PES: it follows that PES's frames.
      if (s.have_ts) first_pts = s.last_pts + s.last_duration;
      data = std::move(s.adts_carry);
      s.adts_carry.clear();
      data.append(es);
    } else {
      data = std::move(es);
    }
    AdtsRun run = ScanAdtsFrames(data);
    // A frame cut at the PES's end continues in the next PES.
    if (run.cut && data.size() - run.bytes <= kMaxAdtsCarry) s.adts_carry = data.substr(run.bytes);
    data.resize(run.bytes);
    if (run.frames == 0) {
      if (s.adts_carry.empty()) ++stats().pes_dropped;
      return;
    }
    const AdtsHeader* first = &*run.first;
    if (!s.announced || first->sample_rate != s.info.sample_rate ||
        first->channels != s.info.channels || first->object_type != s.info.aac_object_type) {
      s.info.sample_rate = first->sample_rate;
      s.info.channels = first->channels;
      s.info.aac_object_type = first->object_type;
      s.info.codec_string = first->CodecString();
      s.info.audio_specific_config = first->AudioSpecificConfig();
      Announce(s);
    }
    int64_t duration = int64_t{run.frames} * 1024 * 90000 / first->sample_rate;
    Emit(s, first_pts, first_pts, true, std::move(data));
    s.last_duration = duration;
  }
};

TsDemuxer::TsDemuxer(Callbacks callbacks)
    : impl_(std::make_unique<Impl>(this)), callbacks_(std::move(callbacks)) {}

TsDemuxer::~TsDemuxer() = default;

void TsDemuxer::Feed(std::span<const uint8_t> bytes) { impl_->Feed(bytes); }

void TsDemuxer::Flush() { impl_->Flush(); }

void TsDemuxer::Reset() { impl_ = std::make_unique<Impl>(this); }

}  // namespace meshwork::media
