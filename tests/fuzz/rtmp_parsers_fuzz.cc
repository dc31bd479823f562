// Fuzzes the RTMP parsers (S-1 rtmp, R-2) one at a time: the first byte selects the parser
// (modulo 6), the rest is its input.
//   0 DecodeAmf0; 1 ChunkReader::Feed with small ChunkLimits, in pieces; 2 FlvDepacketizer
//   OnVideo/OnAudio on a sequence of messages; 3 AnswerHandshake; 4/5 ParseDecoderConfig for
//   AVC/HEVC.
//
// Properties (a violation traps; never crashing or reading out of bounds is the sanitizers'):
//  * AMF0: a refusal has a message; what decodes re-encodes to bytes that decode to the same
//    values (numbers bit for bit), and encoding those gives the same bytes again;
//  * chunks: a message never exceeds max_message_size and is never Set Chunk Size or Abort;
//    the chunk size stays within 1…max_chunk_size; what is buffered stays bounded; bytes_read
//    counts every byte fed; each message written again with ChunkWriter reads back the same;
//    the input fed in pieces gives the messages and the verdict of the same input fed whole;
//  * FLV: tracks carry the video or audio pid and a codec string (video: a positive size);
//    frames have non-null, non-empty data (video: Annex B, its named NAL units tiling it
//    behind 4-byte start codes; audio: an ADTS sync word), come
//    after their track, and pts/dts are 90 × milliseconds within a bounded distance;
//  * handshake: answered exactly when C0+C1 is 1537 bytes with C0 = 3; S0S1S2 is 3073 bytes;
//    a simple answer echoes C1 in S2 (but bytes 4..7), a digest answer only follows a C1
//    whose digest verifies, and a client of that scheme accepts S1 and S2;
//  * decoder configurations: the NAL length size is 1, 2 or 4, and the parameter sets are
//    non-empty and no larger in all than the record.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "streamer/rtmp/amf0.h"
#include "streamer/rtmp/chunk.h"
#include "streamer/rtmp/flv.h"
#include "streamer/rtmp/handshake.h"

namespace {

using namespace meshwork::rtmp;
namespace media = meshwork::media;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

bool Same(const Amf0Value& a, const Amf0Value& b) {
  if (a.type != b.type || a.boolean != b.boolean || a.string != b.string ||
      std::bit_cast<uint64_t>(a.number) != std::bit_cast<uint64_t>(b.number) ||
      a.properties.size() != b.properties.size() || a.elements.size() != b.elements.size()) {
    return false;
  }
  for (size_t i = 0; i < a.properties.size(); ++i) {
    if (a.properties[i].first != b.properties[i].first ||
        !Same(a.properties[i].second, b.properties[i].second)) {
      return false;
    }
  }
  for (size_t i = 0; i < a.elements.size(); ++i) {
    if (!Same(a.elements[i], b.elements[i])) return false;
  }
  return true;
}

void FuzzAmf0(std::span<const uint8_t> in) {
  auto values = DecodeAmf0(in);
  if (!values.ok()) {
    Check(!values.status().message().empty());
    return;
  }
  std::string encoded;
  for (const Amf0Value& v : *values) EncodeAmf0(v, encoded);
  auto again = DecodeAmf0(Bytes(encoded));
  Check(again.ok() && again->size() == values->size());
  std::string reencoded;
  for (size_t i = 0; i < values->size(); ++i) {
    Check(Same((*values)[i], (*again)[i]));
    EncodeAmf0((*again)[i], reencoded);
  }
  Check(reencoded == encoded);
}

void FuzzChunks(std::span<const uint8_t> in) {
  if (in.empty()) return;
  ChunkLimits limits;
  limits.max_chunk_size = 512;
  limits.max_message_size = 2048;
  limits.max_chunk_streams = 4;
  limits.max_buffered_bytes = 4096;
  ChunkReader reader(limits);
  const size_t piece = 1 + in[0] % 64;
  in = in.subspan(1);
  uint64_t fed = 0;
  std::vector<Message> messages;
  bool failed = false;
  for (size_t at = 0; at < in.size(); at += piece) {
    auto chunk = in.subspan(at, std::min(piece, in.size() - at));
    absl::Status s = reader.Feed(chunk, messages);
    fed += chunk.size();
    Check(reader.bytes_read() == fed);
    Check(reader.chunk_size() >= 1 && reader.chunk_size() <= limits.max_chunk_size);
    // Partial messages, plus less than one chunk (18 header bytes at most) not yet parsed.
    Check(reader.buffered_bytes() <= limits.max_buffered_bytes + 18 + limits.max_chunk_size);
    if (!s.ok()) {
      Check(!s.message().empty());
      failed = true;
      break;
    }
  }
  // Read in one piece, the same bytes give the same messages and the same verdict.
  ChunkReader whole(limits);
  std::vector<Message> at_once;
  Check(whole.Feed(in, at_once).ok() == !failed);
  Check(at_once.size() == messages.size());
  for (size_t i = 0; i < messages.size(); ++i) {
    const Message &a = at_once[i], &b = messages[i];
    Check(a.chunk_stream == b.chunk_stream && a.type == b.type && a.stream_id == b.stream_id &&
          a.timestamp == b.timestamp && a.payload == b.payload);
  }
  for (const Message& m : messages) {
    Check(m.payload.size() <= limits.max_message_size);
    Check(m.type != kSetChunkSize && m.type != kAbort);
    std::string wire;
    ChunkWriter().Write(m, wire);
    ChunkReader back;
    std::vector<Message> read;
    Check(back.Feed(Bytes(wire), read).ok() && read.size() == 1);
    const Message& r = read[0];
    Check(r.chunk_stream == m.chunk_stream && r.type == m.type && r.stream_id == m.stream_id &&
          r.timestamp == m.timestamp && r.payload == m.payload);
  }
}

// Messages: [kind: bit 0 = audio][timestamp: 2 bytes, scaled][length: 1 byte][body].
void FuzzFlv(std::span<const uint8_t> in) {
  bool video_track = false, audio_track = false;
  FlvDepacketizer::Sink sink;
  sink.on_track = [&](const media::TrackInfo& t) {
    Check(t.pid == kVideoPid || t.pid == kAudioPid);
    Check(!t.codec_string.empty());
    if (t.pid == kVideoPid) Check(t.width > 0 && t.height > 0 && !t.parameter_sets.empty());
    (t.pid == kVideoPid ? video_track : audio_track) = true;
  };
  sink.on_frame = [&](media::Frame&& f) {
    Check(f.data != nullptr && !f.data->empty());
    if (f.pid == kVideoPid) {
      Check(video_track && f.data->compare(0, 4, std::string("\0\0\0\1", 4)) == 0);
      // The NAL units it names (the fMP4 writer copies them, and only them, without
      // looking) tile the data, each behind a 4-byte start code.
      Check(f.nal_count <= media::Frame::kMaxKnownNals);
      size_t end = 0;
      for (size_t i = 0; i < f.nal_count; ++i) {
        const auto& n = f.nals[i];
        Check(n.offset == end + 4 && n.size > 0 && n.offset + size_t{n.size} <= f.data->size());
        Check(f.data->compare(n.offset - 4, 4, std::string("\0\0\0\1", 4)) == 0);
        end = n.offset + size_t{n.size};
      }
      if (f.nal_count > 0) Check(end == f.data->size());
    } else {
      Check(f.pid == kAudioPid && audio_track && f.data->size() >= 7);
      Check(static_cast<uint8_t>((*f.data)[0]) == 0xff);
    }
    Check(f.dts % 90 == 0 && f.pts % 90 == 0);
    Check(std::llabs(f.pts - f.dts) <= int64_t{1 << 23} * 90);
  };
  FlvDepacketizer flv(sink);
  size_t at = 0;
  while (at + 4 <= in.size()) {
    const bool audio = in[at] & 1;
    const uint32_t ts = (uint32_t{in[at + 1]} << 24) | (uint32_t{in[at + 2]} << 4);
    const size_t length = std::min<size_t>(in[at + 3], in.size() - at - 4);
    auto body = in.subspan(at + 4, length);
    at += 4 + length;
    absl::Status s = audio ? flv.OnAudio(ts, body) : flv.OnVideo(ts, body);
    Check(s.ok() || !s.message().empty());
  }
  // The rest as one message of each kind (room for whole decoder configurations).
  (void)flv.OnVideo(0, in.subspan(at));
  (void)flv.OnAudio(0, in.subspan(at));
}

void FuzzHandshake(std::span<const uint8_t> in) {
  std::vector<uint8_t> random(kHandshakeSize);
  for (size_t i = 0; i < random.size(); ++i) random[i] = static_cast<uint8_t>(i * 7);
  auto answer = AnswerHandshake(in, 42, random);
  Check(answer.ok() == (in.size() == 1 + kHandshakeSize && in[0] == 3));
  if (!answer.ok()) {
    Check(!answer.status().message().empty());
    return;
  }
  const std::string& out = answer->s0s1s2;
  Check(out.size() == 1 + 2 * kHandshakeSize && out[0] == 3);
  auto c1 = in.subspan(1);
  auto s1 = Bytes(out).subspan(1, kHandshakeSize);
  auto s2 = Bytes(out).subspan(1 + kHandshakeSize, kHandshakeSize);
  if (answer->form == HandshakeForm::kSimple) {
    for (size_t i = 0; i < kHandshakeSize; ++i) Check((i >= 4 && i < 8) || s2[i] == c1[i]);
    return;
  }
  const int scheme = answer->form == HandshakeForm::kDigestScheme0 ? 0 : 1;
  Check(VerifyClientDigest(c1, scheme));
  Check(VerifyServerDigest(s1, scheme) && VerifyS2(s2, c1, scheme));
}

void FuzzDecoderConfig(media::Codec codec, std::span<const uint8_t> in) {
  DecoderConfig config;
  absl::Status s = ParseDecoderConfig(codec, in, config);
  if (!s.ok()) {
    Check(!s.message().empty());
    return;
  }
  const int n = config.nal_length_size;
  Check(n == 1 || n == 2 || n == 4);
  size_t total = 0;
  for (const std::string& ps : config.parameter_sets) {
    Check(!ps.empty());
    total += ps.size();
  }
  Check(total <= in.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::span<const uint8_t> in(data + 1, size - 1);
  switch (data[0] % 6) {
    case 0:
      FuzzAmf0(in);
      break;
    case 1:
      FuzzChunks(in);
      break;
    case 2:
      FuzzFlv(in);
      break;
    case 3:
      FuzzHandshake(in);
      break;
    case 4:
      FuzzDecoderConfig(media::Codec::kH264, in);
      break;
    default:
      FuzzDecoderConfig(media::Codec::kHevc, in);
      break;
  }
  return 0;
}
