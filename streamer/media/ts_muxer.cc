#include "streamer/media/ts_muxer.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace meshwork::media {
namespace {

constexpr size_t kPacket = 188;
constexpr uint16_t kVideoPid = 0x100;
constexpr uint16_t kAudioPid = 0x101;
constexpr uint16_t kPmtPid = 0x1000;
constexpr uint16_t kProgram = 1;
constexpr int64_t kWrap = int64_t{1} << 33;
// The PCR runs this far (90 kHz) ahead of the DTS of the frame it is sent with, which gives
// a decoder following the T-STD model a little buffering time.
constexpr int64_t kPcrLead = 9000;

constexpr std::array<uint32_t, 256> MakeCrcTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i << 24;
    for (int k = 0; k < 8; ++k) c = (c & 0x80000000u) ? (c << 1) ^ 0x04c11db7u : c << 1;
    table[i] = c;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kCrcTable = MakeCrcTable();

int64_t Wrap33(int64_t v) { return ((v % kWrap) + kWrap) % kWrap; }

void PutTimestamp(std::string& out, int prefix, int64_t ts) {
  uint64_t v = static_cast<uint64_t>(Wrap33(ts));
  out.push_back(static_cast<char>((prefix << 4) | ((v >> 29) & 0x0e) | 0x01));
  out.push_back(static_cast<char>((v >> 22) & 0xff));
  out.push_back(static_cast<char>(((v >> 14) & 0xfe) | 0x01));
  out.push_back(static_cast<char>((v >> 7) & 0xff));
  out.push_back(static_cast<char>(((v << 1) & 0xfe) | 0x01));
}

void AppendCrc(std::string& section) {
  uint32_t crc = Crc32Mpeg2(reinterpret_cast<const uint8_t*>(section.data()), section.size());
  for (int shift = 24; shift >= 0; shift -= 8) section.push_back(static_cast<char>(crc >> shift));
}

// True when the Annex B data starts with an access unit delimiter NAL unit.
bool StartsWithH264Aud(const std::string& data) {
  size_t i = 0;
  while (i < data.size() && data[i] == 0) ++i;
  return i >= 2 && i + 1 < data.size() && data[i] == 1 && (data[i + 1] & 0x1f) == 9;
}

}  // namespace

uint32_t Crc32Mpeg2(const uint8_t* data, size_t size) {
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < size; ++i) crc = (crc << 8) ^ kCrcTable[((crc >> 24) ^ data[i]) & 0xff];
  return crc;
}

TsMuxer::TsMuxer(const std::vector<TrackInfo>& tracks) {
  auto video =
      std::find_if(tracks.begin(), tracks.end(), [](const TrackInfo& t) { return t.is_video(); });
  auto audio =
      std::find_if(tracks.begin(), tracks.end(), [](const TrackInfo& t) { return t.is_audio(); });
  if (video != tracks.end()) {
    Track t{video->pid, kVideoPid, static_cast<uint8_t>(video->codec == Codec::kHevc ? 0x24 : 0x1b),
            0xe0};
    t.codec = video->codec;
    tracks_.push_back(t);
  }
  if (audio != tracks.end()) {
    Track t{audio->pid, kAudioPid, 0x0f, 0xc0};
    t.codec = audio->codec;
    tracks_.push_back(t);
  }
  if (!tracks_.empty()) pcr_pid_ = tracks_.front().pid;
}

void TsMuxer::WriteSection(uint16_t pid, uint8_t& cc, const std::string& section,
                           std::string& out) {
  size_t start = out.size();
  out.push_back(0x47);
  out.push_back(static_cast<char>(0x40 | (pid >> 8)));
  out.push_back(static_cast<char>(pid & 0xff));
  out.push_back(static_cast<char>(0x10 | cc));
  cc = (cc + 1) & 0x0f;
  out.push_back(0);  // pointer_field
  out.append(section);
  out.resize(start + kPacket, static_cast<char>(0xff));
}

void TsMuxer::WriteTables(std::string& out) {
  // PAT: one program.
  std::string pat = {0x00, static_cast<char>(0xb0), 13,   0x00,
                     0x01, static_cast<char>(0xc1), 0x00, 0x00};
  pat.push_back(static_cast<char>(kProgram >> 8));
  pat.push_back(static_cast<char>(kProgram & 0xff));
  pat.push_back(static_cast<char>(0xe0 | (kPmtPid >> 8)));
  pat.push_back(static_cast<char>(kPmtPid & 0xff));
  AppendCrc(pat);
  WriteSection(0, pat_cc_, pat, out);

  // PMT.
  size_t section_length = 9 + 5 * tracks_.size() + 4;
  std::string pmt;
  pmt.push_back(0x02);
  pmt.push_back(static_cast<char>(0xb0 | (section_length >> 8)));
  pmt.push_back(static_cast<char>(section_length & 0xff));
  pmt.push_back(static_cast<char>(kProgram >> 8));
  pmt.push_back(static_cast<char>(kProgram & 0xff));
  pmt.push_back(static_cast<char>(0xc1));  // version 0, current
  pmt.push_back(0x00);
  pmt.push_back(0x00);
  pmt.push_back(static_cast<char>(0xe0 | (pcr_pid_ >> 8)));
  pmt.push_back(static_cast<char>(pcr_pid_ & 0xff));
  pmt.push_back(static_cast<char>(0xf0));  // program_info_length 0
  pmt.push_back(0x00);
  for (const Track& t : tracks_) {
    pmt.push_back(static_cast<char>(t.stream_type));
    pmt.push_back(static_cast<char>(0xe0 | (t.pid >> 8)));
    pmt.push_back(static_cast<char>(t.pid & 0xff));
    pmt.push_back(static_cast<char>(0xf0));  // ES_info_length 0
    pmt.push_back(0x00);
  }
  AppendCrc(pmt);
  WriteSection(kPmtPid, pmt_cc_, pmt, out);
}

void TsMuxer::WriteFrame(const Frame& frame, std::string& out) {
  auto it = std::find_if(tracks_.begin(), tracks_.end(),
                         [&](const Track& t) { return t.source_pid == frame.pid; });
  if (it == tracks_.end()) return;
  Track& track = *it;
  static const std::string kEmpty;
  const std::string& data = frame.data ? *frame.data : kEmpty;

  // PES header (with the AUD): at most 9 + 10 + 6 bytes.
  const bool with_dts = frame.dts != frame.pts;
  const bool add_aud = track.codec == Codec::kH264 && !StartsWithH264Aud(data);
  static constexpr char kAud[] = {0x00, 0x00, 0x00, 0x01, 0x09, static_cast<char>(0xf0)};
  std::string pes;
  pes.reserve(9 + 10 + sizeof(kAud));
  pes.append("\x00\x00\x01", 3);
  pes.push_back(static_cast<char>(track.stream_id));
  size_t pes_length = 3 + (with_dts ? 10 : 5) + (add_aud ? sizeof(kAud) : 0) + data.size();
  // Video PES are unbounded (length 0), as is usual; audio ones carry their length.
  if (track.stream_id == 0xe0 || pes_length > 0xffff) pes_length = 0;
  pes.push_back(static_cast<char>(pes_length >> 8));
  pes.push_back(static_cast<char>(pes_length & 0xff));
  pes.push_back(static_cast<char>(0x84));  // '10', data_alignment_indicator
  pes.push_back(static_cast<char>(with_dts ? 0xc0 : 0x80));
  pes.push_back(static_cast<char>(with_dts ? 10 : 5));
  PutTimestamp(pes, with_dts ? 0x3 : 0x2, frame.pts);
  if (with_dts) PutTimestamp(pes, 0x1, frame.dts);
  if (add_aud) pes.append(kAud, sizeof(kAud));
  const size_t pes_size = pes.size() + data.size();

  // Adaptation field of the first packet (after its length byte): PCR on the PCR PID, random
  // access on keyframes.
  const bool with_pcr = track.pid == pcr_pid_;
  const bool random_access = frame.keyframe && (track.stream_id == 0xe0 || with_pcr);
  char first_af[7];
  size_t first_af_size = 0;
  if (with_pcr || random_access) {
    first_af[first_af_size++] =
        static_cast<char>((random_access ? 0x40 : 0) | (with_pcr ? 0x10 : 0));
    if (with_pcr) {
      uint64_t base = static_cast<uint64_t>(Wrap33(std::max<int64_t>(0, frame.dts - kPcrLead)));
      first_af[first_af_size++] = static_cast<char>(base >> 25);
      first_af[first_af_size++] = static_cast<char>(base >> 17);
      first_af[first_af_size++] = static_cast<char>(base >> 9);
      first_af[first_af_size++] = static_cast<char>(base >> 1);
      first_af[first_af_size++] = static_cast<char>(((base & 1) << 7) | 0x7e);  // extension 0
      first_af[first_af_size++] = 0x00;
    }
  }

  // P-7: the packets are written in place, the output grown once per frame: the frame's
  // bytes are copied once, from the frame into the packets.
  constexpr size_t kPayload = kPacket - 4;
  const size_t first_payload = kPayload - (first_af_size > 0 ? 1 + first_af_size : 0);
  const size_t packets =
      pes_size <= first_payload ? 1 : 1 + (pes_size - first_payload + kPayload - 1) / kPayload;
  const size_t base = out.size();
  out.resize(base + packets * kPacket);
  char* p = out.data() + base;
  size_t off = 0;  // of the PES: header bytes first, then the frame's
  auto copy_pes = [&](size_t n) {
    if (off < pes.size()) {
      size_t k = std::min(n, pes.size() - off);
      std::memcpy(p, pes.data() + off, k);
      p += k;
      off += k;
      n -= k;
    }
    if (n > 0) {
      std::memcpy(p, data.data() + (off - pes.size()), n);
      p += n;
      off += n;
    }
  };
  for (size_t i = 0; i < packets; ++i) {
    const bool first = i == 0;
    size_t af_size = first ? first_af_size : 0;
    bool has_af = af_size > 0;
    const size_t remaining = pes_size - off;
    const size_t capacity = kPayload - (has_af ? 1 + af_size : 0);
    // The last packet is filled up with adaptation-field stuffing.
    const size_t stuffing = remaining < capacity ? capacity - remaining : 0;
    const bool only_stuffing = stuffing > 0 && !has_af;  // an adaptation field just for it
    if (only_stuffing) has_af = true;
    *p++ = 0x47;
    *p++ = static_cast<char>((first ? 0x40 : 0x00) | (track.pid >> 8));
    *p++ = static_cast<char>(track.pid & 0xff);
    *p++ = static_cast<char>((has_af ? 0x30 : 0x10) | track.cc);
    track.cc = (track.cc + 1) & 0x0f;
    if (has_af) {
      if (only_stuffing) {
        // Its length byte is one byte of the stuffing; a flags byte (no flags) and 0xff fill
        // the rest.
        *p++ = static_cast<char>(stuffing - 1);
        if (stuffing >= 2) {
          *p++ = 0x00;
          std::memset(p, 0xff, stuffing - 2);
          p += stuffing - 2;
        }
      } else {
        *p++ = static_cast<char>(af_size + stuffing);
        std::memcpy(p, first_af, af_size);
        p += af_size;
        std::memset(p, 0xff, stuffing);
        p += stuffing;
      }
    }
    copy_pes(std::min(remaining, capacity));
  }
  // The count above and the loop agree by construction; a mismatch would corrupt the segment.
  if (off != pes_size || p != out.data() + out.size()) {
    std::fprintf(stderr, "TsMuxer: %zu packets did not hold a %zu-byte PES exactly\n", packets,
                 pes_size);
    std::abort();
  }
}

}  // namespace meshwork::media
