// Fuzzes rtmp::ServerSession (S-1 rtmp, R-2): the input is one client's byte stream, fed in
// pieces whose sizes come from the input, to a session whose Handler admits publishes (except
// names holding "deny" or "dup", refused as Unauthenticated / AlreadyExists).
//
// Input: byte 0 = flags: when even, the stream is prefixed with a valid simple-form C0+C1 and
// a C2, so the fuzzer spends its time in the chunk, AMF0 and FLV layers; byte 1 = how the
// stream is cut into Feed calls (0: all at once; otherwise pieces of 1…8×byte1 bytes from a
// generator seeded with it); the rest = the client's bytes.
//
// Properties (a violation traps):
//  * never crashes or reads out of bounds (the sanitizers);
//  * after a non-OK status Feed is not called again (the harness stops), and that status has
//    a message; what one Feed appends to its output stays under 1 MiB;
//  * the answer to a whole C0+C1 starts with S0 = 3 and is at least S0+S1+S2 long;
//  * on_publish sees the configured application, a non-empty name, and is called only once
//    the handshake is done;
//  * tracks have the video or audio pid and a codec string; frames have non-null, non-empty
//    data, come after their track was announced, and pts/dts are multiples of 90 kHz ticks
//    per millisecond within a bounded distance of each other;
//  * on_unpublish follows an admitted publish exactly once (publishing() agrees after each
//    Feed), and destroying the session ends a publishing still going on.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>

#include "absl/strings/str_cat.h"
#include "streamer/rtmp/handshake.h"
#include "streamer/rtmp/session.h"

namespace {

using namespace meshwork::rtmp;
namespace media = meshwork::media;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

constexpr size_t kMaxOutputPerFeed = 1 << 20;

// A simple-form C0+C1 (zero version field) and a C2.
const std::string& ValidHandshake() {
  static const std::string bytes = [] {
    std::string b(1 + 2 * kHandshakeSize, '\0');
    b[0] = 3;
    for (size_t i = 9; i < b.size(); ++i) b[i] = static_cast<char>(i * 31 + 7);
    return b;
  }();
  return bytes;
}

struct Observer {
  int admitted = 0;
  int unpublished = 0;
  bool video_track = false;
  bool audio_track = false;
  ServerSession* session = nullptr;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const bool prefix = (data[0] & 1) == 0;
  const uint8_t split = data[1];
  std::string stream = prefix ? ValidHandshake() : std::string();
  stream.append(reinterpret_cast<const char*>(data + 2), size - 2);

  ServerSession::Options options;
  options.limits.max_message_size = 256 << 10;
  options.limits.max_buffered_bytes = 1 << 20;
  Observer seen;
  ServerSession::Handler handler;
  handler.on_publish = [&](PublishRequest& r) -> absl::StatusOr<FlvDepacketizer::Sink> {
    Check(seen.session != nullptr && seen.session->handshake_done());
    Check(r.app == "live" && !r.name.empty());
    SplitStreamKey(
        r.name, [](std::string_view s) { return s == "cam"; }, r.stream, r.token);
    if (r.name.find("deny") != std::string::npos) return absl::UnauthenticatedError("denied");
    if (r.name.find("dup") != std::string::npos) return absl::AlreadyExistsError("taken");
    // As the node's listener does: a refusal that names what it was asked for, echoed back.
    if (r.name.find("nf") != std::string::npos)
      return absl::NotFoundError(absl::StrCat("stream \"", r.name, "\""));
    ++seen.admitted;
    FlvDepacketizer::Sink sink;
    sink.on_track = [&](const media::TrackInfo& t) {
      Check(t.pid == kVideoPid || t.pid == kAudioPid);
      Check(!t.codec_string.empty());
      (t.pid == kVideoPid ? seen.video_track : seen.audio_track) = true;
    };
    sink.on_frame = [&](media::Frame&& f) {
      Check(f.data != nullptr && !f.data->empty());
      Check(f.pid == kVideoPid ? seen.video_track : (f.pid == kAudioPid && seen.audio_track));
      Check(f.dts % 90 == 0 && f.pts % 90 == 0);
      Check(std::llabs(f.pts - f.dts) <= int64_t{1 << 23} * 90);
    };
    return sink;
  };
  handler.on_unpublish = [&] {
    ++seen.unpublished;
    Check(seen.unpublished <= seen.admitted);
  };
  handler.on_notice = [](const std::string& text) { Check(!text.empty() && text.size() < 600); };
  auto random = [](std::span<uint8_t> r) {
    for (size_t i = 0; i < r.size(); ++i) r[i] = static_cast<uint8_t>(i);
  };
  auto session = std::make_unique<ServerSession>(options, handler, random, 1000);
  seen.session = session.get();

  uint32_t rng = split;
  size_t fed = 0;
  bool answered_handshake = false;
  while (fed < stream.size()) {
    size_t n = stream.size() - fed;
    if (split != 0) {
      rng = rng * 1103515245u + 12345u;
      n = std::min(n, 1 + (rng >> 8) % (8 * size_t{split}));
    }
    std::string out;
    const bool had_handshake = fed >= 1 + kHandshakeSize;
    absl::Status status =
        session->Feed({reinterpret_cast<const uint8_t*>(stream.data()) + fed, n}, out);
    fed += n;
    Check(out.size() < kMaxOutputPerFeed);
    if (!had_handshake && fed >= 1 + kHandshakeSize && !answered_handshake && status.ok()) {
      Check(out.size() >= 1 + 2 * kHandshakeSize && out[0] == 3);
      answered_handshake = true;
    }
    if (!status.ok()) {
      Check(!status.message().empty());
      break;  // the connection ends: Feed is not called again
    }
    Check(session->publishing() == (seen.admitted > seen.unpublished));
  }
  session.reset();
  Check(seen.unpublished == seen.admitted);
  return 0;
}
