// Fuzzes the codec bitstream parsers (S-3): SplitAnnexB, UnescapeRbsp, ParseH264Sps,
// ParseHevcSps and ParseAdtsHeader on the input and on the NAL units found in it,
// ScanAccessUnitHead and ScanAdtsFrames on the input, and the PSI table readers (ts_tables.h)
// on the input as one section.
//
// Properties (a violation traps):
//  * NAL units are non-empty views inside the input; unescaping never grows the data;
//  * a parsed SPS has a positive, bounded size, a non-negative frame rate and an
//    avc1./hvc1. codec string;
//  * a parsed ADTS header has a 7- or 9-byte header within its frame, a known sample rate,
//    a 2-byte AudioSpecificConfig and an mp4a.40.N codec string;
//  * an access unit's SPS is a view inside the input; an ADTS run covers whole frames inside
//    the input (a cut one only after them);
//  * a PAT names a PMT PID outside the reserved ones; a PMT lists only the demuxed stream
//    types, on PIDs outside the reserved ones and other than the PMT's.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "streamer/media/codec_parsers.h"
#include "streamer/media/ts_tables.h"

namespace {

using namespace meshwork::media;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

void CheckVideo(const std::optional<VideoInfo>& info, const char* prefix) {
  if (!info) return;
  Check(info->width > 0 && info->height > 0 && info->width <= 65536 && info->height <= 65536);
  Check(info->frame_rate >= 0);
  Check(info->codec_string.rfind(prefix, 0) == 0);
}

void ParseNal(std::string_view nal) {
  CheckVideo(ParseH264Sps(nal), "avc1.");
  CheckVideo(ParseHevcSps(nal), "hvc1.");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);

  for (std::string_view nal : SplitAnnexB(input)) {
    Check(!nal.empty());
    Check(nal.data() >= input.data() && nal.data() + nal.size() <= input.data() + input.size());
    ParseNal(nal);
  }
  ParseNal(input);
  Check(UnescapeRbsp(input).size() <= size);

  std::span<const uint8_t> bytes(data, size);
  for (size_t off = 0; off < size && off < 64; ++off) {
    auto h = ParseAdtsHeader(bytes.subspan(off));
    if (!h) continue;
    Check(h->header_bytes == 7 || h->header_bytes == 9);
    Check(h->frame_bytes >= h->header_bytes && h->frame_bytes < 8192);
    Check(h->sample_rate >= 7350 && h->sample_rate <= 96000);
    Check(h->object_type >= 1 && h->object_type <= 4);
    Check(h->channels >= 0 && h->channels <= 7);
    Check(h->AudioSpecificConfig().size() == 2);
    Check(h->CodecString() == "mp4a.40." + std::to_string(h->object_type));
  }

  for (bool hevc : {false, true}) {
    auto head = ScanAccessUnitHead(input, hevc);
    if (!head.sps.empty()) {
      Check(head.sps.data() >= input.data() &&
            head.sps.data() + head.sps.size() <= input.data() + input.size());
      Check(!head.parameter_sets.empty());
    }
    // the bounds an init's avcC/hvcC can carry.
    size_t set_bytes = 0;
    for (const auto& set : head.parameter_sets) set_bytes += set.size();
    Check(head.parameter_sets.size() <= kMaxParameterSets && set_bytes <= kMaxParameterSetBytes);
  }
  auto run = ScanAdtsFrames(input);
  Check(run.bytes <= size);
  Check((run.frames == 0) == (run.bytes == 0));
  Check(run.frames == 0 || run.first.has_value());

  (void)ApplicableSection(bytes);
  if (auto pat = FirstPatProgram(bytes)) Check(pat->pmt_pid >= 0x10 && pat->pmt_pid != 0x1fff);
  auto pmt = ParsePmt(bytes, 0x100);
  for (auto [pid, type] : pmt.streams) {
    Check(pid >= 0x10 && pid != 0x1fff && pid != 0x100 && pid < 0x2000);
    Check(type == 0x1b || type == 0x24 || type == 0x0f);
  }
  return 0;
}
