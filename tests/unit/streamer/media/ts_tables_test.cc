// S-3: the PSI tables the TS demuxer follows, read from the tables TsMuxer writes and from
// hand-made sections that a publisher could send.
#include "streamer/media/ts_tables.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "streamer/media/ts_muxer.h"

namespace meshwork::media {
namespace ts_tables_test {
namespace {

// The section in a PSI packet that starts one (pointer field 0, as TsMuxer writes).
std::vector<uint8_t> SectionOf(const std::string& packet) {
  const auto* p = reinterpret_cast<const uint8_t*>(packet.data());
  const size_t start = 5 + p[4];  // 4-byte header, the pointer field
  const size_t length = 3 + (((p[start + 1] & 0x0f) << 8) | p[start + 2]);
  return std::vector<uint8_t>(p + start, p + start + length);
}

// A long-form section of `table_id` with `body` after the 5 header bytes that follow the
// length (table id extension `ext`, version 3, current_next as `current`), its length and CRC
// filled in.
std::vector<uint8_t> Section(uint8_t table_id, uint16_t ext, const std::vector<uint8_t>& body,
                             bool current = true) {
  const uint8_t version_byte = static_cast<uint8_t>(0xc0 | (3 << 1) | (current ? 1 : 0));
  std::vector<uint8_t> s = {
      table_id,     0, 0, static_cast<uint8_t>(ext >> 8), static_cast<uint8_t>(ext),
      version_byte, 0, 0};
  s.insert(s.end(), body.begin(), body.end());
  const size_t length = s.size() - 3 + 4;
  s[1] = 0xb0 | static_cast<uint8_t>(length >> 8);
  s[2] = static_cast<uint8_t>(length);
  uint32_t crc = Crc32Mpeg2(s.data(), s.size());
  for (int shift : {24, 16, 8, 0}) s.push_back(static_cast<uint8_t>(crc >> shift));
  return s;
}

TEST_CASE("S-3 the PAT and PMT TsMuxer writes read back: program 1, PMT 0x1000, both tracks") {
  TrackInfo video;
  video.pid = 0x100;
  video.codec = Codec::kH264;
  TrackInfo audio;
  audio.pid = 0x101;
  audio.codec = Codec::kAac;
  TsMuxer muxer({video, audio});
  std::string out;
  muxer.WriteTables(out);
  REQUIRE(out.size() == 2 * 188);
  auto pat = SectionOf(out.substr(0, 188));
  auto pmt = SectionOf(out.substr(188, 188));
  CHECK(ApplicableSection(pat));
  CHECK(ApplicableSection(pmt));
  auto program = FirstPatProgram(pat);
  REQUIRE(program);
  CHECK(program->program == 1);
  CHECK(program->pmt_pid == 0x1000);
  auto table = ParsePmt(pmt, program->pmt_pid);
  CHECK(table.program == 1);
  CHECK(table.streams == std::map<uint16_t, uint8_t>{{0x100, 0x1b}, {0x101, 0x0f}});
  // One changed byte fails the CRC; a section that is not yet applicable does not apply.
  auto damaged = pmt;
  damaged[14] ^= 0x01;
  CHECK_FALSE(ApplicableSection(damaged));
  // A section for later (current_next 0), its CRC right, does not apply yet.
  CHECK(ApplicableSection(Section(0x02, 1, {0xe1, 0x00, 0xf0, 0x00})));
  CHECK_FALSE(ApplicableSection(Section(0x02, 1, {0xe1, 0x00, 0xf0, 0x00}, /*current=*/false)));
  CHECK_FALSE(ApplicableSection(std::vector<uint8_t>(pat.begin(), pat.begin() + 11)));
}

TEST_CASE("S-3 the PAT's first program skips the network PID and reserved PMT PIDs") {
  // program 0 (network PID 0x10), program 7 on reserved PID 0x0005, program 8 on the null
  // PID 0x1FFF, program 9 on 0x0200, program 10 on 0x0300 (a second program: not taken).
  auto pat = Section(0x00, 1, {0x00, 0x00, 0xe0, 0x10, 0x00, 0x07, 0xe0, 0x05, 0x00, 0x08,
                               0xff, 0xff, 0x00, 0x09, 0xe2, 0x00, 0x00, 0x0a, 0xe3, 0x00});
  auto first = FirstPatProgram(pat);
  REQUIRE(first);
  CHECK(first->program == 9);
  CHECK(first->pmt_pid == 0x200);
  CHECK_FALSE(FirstPatProgram(Section(0x00, 1, {0x00, 0x00, 0xe0, 0x10})));
}

TEST_CASE(
    "S-3 a PMT lists the demuxed stream types only, and a descriptor loop past its end "
    "ends the list") {
  // PCR PID 0x100, program info 2 bytes; streams: H.264 0x100, MPEG-2 video 0x102 (not read),
  // HEVC on the PMT's own PID 0x1000 (left out), AAC 0x101 with a 3-byte descriptor, then an
  // entry whose descriptor length runs past the section.
  auto pmt = Section(0x02, 5, {0xe1, 0x00, 0xf0, 0x02, 0xaa, 0xbb,        // PCR PID, program info
                               0x1b, 0xe1, 0x00, 0xf0, 0x00,              // H.264
                               0x02, 0xe1, 0x02, 0xf0, 0x00,              // MPEG-2 video
                               0x24, 0xf0, 0x00, 0xf0, 0x00,              // HEVC on the PMT PID
                               0x0f, 0xe1, 0x01, 0xf0, 0x03, 1,    2, 3,  // AAC, a descriptor
                               0x24, 0xe1, 0x03, 0xf0, 0x40});            // runs past the end
  auto table = ParsePmt(pmt, 0x1000);
  CHECK(table.program == 5);
  CHECK(table.version == 3);
  CHECK(table.streams == std::map<uint16_t, uint8_t>{{0x100, 0x1b}, {0x101, 0x0f}});
  CHECK(ParsePmt(std::vector<uint8_t>(4, 0xff), 0x1000).streams.empty());
}

TEST_CASE("R-3 a PMT listing hundreds of streams gives the demuxer the first 16 only") {
  std::vector<uint8_t> body = {0xe1, 0x00, 0xf0, 0x00};  // PCR PID 0x100, no program info
  for (uint16_t pid = 0x100; pid < 0x100 + 200; ++pid) {
    for (uint8_t b : {uint8_t{0x1b}, static_cast<uint8_t>(0xe0 | (pid >> 8)),
                      static_cast<uint8_t>(pid), uint8_t{0xf0}, uint8_t{0x00}}) {
      body.push_back(b);
    }
  }
  auto table = ParsePmt(Section(0x02, 1, body), 0x1000);
  REQUIRE(table.streams.size() == kMaxPmtStreams);
  CHECK(table.streams.begin()->first == 0x100);
  CHECK(table.streams.rbegin()->first == 0x100 + kMaxPmtStreams - 1);
}

}  // namespace
}  // namespace ts_tables_test
}  // namespace meshwork::media
