// The PSI tables the TS demuxer follows (ISO/IEC 13818-1 §2.4.4): the PAT's first program and
// the PMT's elementary streams. Pure functions over one whole section (from its table_id
// through its CRC), as the demuxer's section reassembly hands them over; bounds-checked, since
// the bytes come from a publisher (fuzzed directly by codec_parsers_fuzz and through
// ts_demuxer_fuzz).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>

namespace meshwork::media {

// A long-form section (section_syntax_indicator set, at least 12 bytes) whose CRC checks and
// whose current_next_indicator says it applies now.
bool ApplicableSection(std::span<const uint8_t> section);

// The PAT's first program other than the network PID's, with its PMT's PID; nullopt when it
// names none (reserved PIDs 0…0xF and 0x1FFF cannot carry a PMT and are passed over).
struct PatProgram {
  uint16_t program = 0;
  uint16_t pmt_pid = 0;
};
std::optional<PatProgram> FirstPatProgram(std::span<const uint8_t> pat);

// A PMT: its program, version, and the elementary streams of the types the demuxer reads
// (0x1B H.264, 0x24 HEVC, 0x0F AAC in ADTS) by PID; entries on reserved PIDs or on
// `pmt_pid` itself are left out, and a descriptor loop running past the section ends the list.
// At most kMaxPmtStreams are taken, the first listed (R-3: each one reassembles PES of up to
// TsDemuxer::kMaxPesBytes; the packager makes renditions of at most 8 video tracks).
inline constexpr size_t kMaxPmtStreams = 16;
struct PmtTable {
  uint16_t program = 0;
  int version = 0;
  std::map<uint16_t, uint8_t> streams;  // PID → stream_type
};
PmtTable ParsePmt(std::span<const uint8_t> pmt, int pmt_pid);

}  // namespace meshwork::media
