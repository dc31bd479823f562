#include "streamer/media/ts_tables.h"

#include "streamer/media/ts_muxer.h"

namespace meshwork::media {

bool ApplicableSection(std::span<const uint8_t> b) {
  if (b.size() < 12 || !(b[1] & 0x80)) return false;  // long form only
  const size_t n = b.size() - 4;
  const uint32_t crc =
      (uint32_t{b[n]} << 24) | (uint32_t{b[n + 1]} << 16) | (uint32_t{b[n + 2]} << 8) | b[n + 3];
  if (Crc32Mpeg2(b.data(), n) != crc) return false;
  return b[5] & 0x01;  // current_next_indicator
}

std::optional<PatProgram> FirstPatProgram(std::span<const uint8_t> b) {
  if (b.size() < 12) return std::nullopt;
  const size_t end = b.size() - 4;
  for (size_t i = 8; i + 4 <= end; i += 4) {
    uint16_t program = static_cast<uint16_t>((b[i] << 8) | b[i + 1]);
    uint16_t pid = static_cast<uint16_t>(((b[i + 2] & 0x1f) << 8) | b[i + 3]);
    if (program == 0) continue;                 // network PID
    if (pid < 0x10 || pid == 0x1fff) continue;  // reserved PIDs cannot carry a PMT
    return PatProgram{program, pid};
  }
  return std::nullopt;
}

PmtTable ParsePmt(std::span<const uint8_t> b, int pmt_pid) {
  PmtTable t;
  if (b.size() < 12) return t;
  t.program = static_cast<uint16_t>((b[3] << 8) | b[4]);
  t.version = (b[5] >> 1) & 0x1f;
  const size_t end = b.size() - 4;
  size_t program_info_length = ((b[10] & 0x0f) << 8) | b[11];
  size_t i = 12 + program_info_length;
  while (i + 5 <= end) {
    uint8_t type = b[i];
    uint16_t pid = static_cast<uint16_t>(((b[i + 1] & 0x1f) << 8) | b[i + 2]);
    size_t es_info_length = ((b[i + 3] & 0x0f) << 8) | b[i + 4];
    i += 5 + es_info_length;
    if (i > end) break;
    if (pid < 0x10 || pid == 0x1fff || pid == pmt_pid) continue;
    if (type == 0x1b || type == 0x24 || type == 0x0f) t.streams.emplace(pid, type);
    if (t.streams.size() == kMaxPmtStreams) break;  // the rest are not read
  }
  return t;
}

}  // namespace meshwork::media
