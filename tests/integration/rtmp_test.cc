// RTMP and RTMPS ingest (S-1 rtmp, S-2, S-5, M-3) with independent publishers: ffmpeg's RTMP
// client (also as a fan-out to two nodes) and GStreamer's rtmp2sink, the result read by
// ffprobe and played by hls.js and dash.js; an RTMP input in failover with a UDP one.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>

#include "tests/integration/media_harness.h"
#include "tests/test_paths.h"

namespace meshwork::testing {
namespace {

// ffmpeg publishing the H.264/AAC test source in real time to `url` as FLV over RTMP(S).
std::unique_ptr<Process> PublishRtmp(const std::string& url, int seconds = 60,
                                     const std::string& log_tag = "rtmp-publisher") {
  return Process::Start({"/usr/bin/ffmpeg", "-hide_banner", "-loglevel", "error", "-re", "-i",
                         SourceTs(seconds), "-c", "copy", "-f", "flv", url},
                        MakeTempDir(log_tag) + ".log");
}

Streamer StartRtmpIngest(const Central& central, const std::string& id, const std::string& stream,
                         const std::vector<std::string>& extra = {}) {
  std::vector<std::string> flags = {"--rtmp-listen=127.0.0.1:0"};
  flags.insert(flags.end(), extra.begin(), extra.end());
  auto node = StartIngestWithStream(central, id, stream, {"rtmp://"}, flags);
  REQUIRE(!node.rtmp.empty());
  return node;
}

// The codecs ffprobe finds in segment `msn` of `stream`, saved under `dir`.
std::map<std::string, std::string> SegmentCodecs(const Streamer& node, const std::string& stream,
                                                 int64_t msn, const std::string& dir) {
  auto seg = Http("GET", node.http, "/" + stream + "/v1/" + std::to_string(msn) + ".ts");
  REQUIRE(seg.status == 200);
  std::string file = dir + "/" + stream + "-" + std::to_string(msn) + ".ts";
  WriteFile(file, seg.body);
  auto probe = Probe(file);
  std::map<std::string, std::string> codecs;
  for (const auto& s : probe["streams"]) codecs[s["codec_type"]] = s["codec_name"];
  CHECK(probe["first_video_frame"]["key_frame"] == 1);
  return codecs;
}

TEST_CASE("S-1 RTMP: ffmpeg publishes H.264/AAC and the stream is packaged as HLS and DASH") {
  auto dir = MakeTempDir("rtmp-ffmpeg");
  auto central = StartCentral(dir);
  auto node = StartRtmpIngest(central, "ingest-1", "cam");
  auto publisher = PublishRtmp("rtmp://" + node.rtmp + "/live/cam");
  REQUIRE(Eventually([&] { return Playlist(node, "cam").entries.size() >= 3; }, 30s));
  auto playlist = Playlist(node, "cam");
  for (size_t i = 0; i < playlist.entries.size(); ++i) {
    INFO("msn " << playlist.entries[i].msn);
    CHECK(playlist.entries[i].duration == Approx(2.0).margin(0.05));
    auto codecs = SegmentCodecs(node, "cam", playlist.entries[i].msn, dir);
    CHECK(codecs["video"] == "h264");
    CHECK(codecs["audio"] == "aac");
  }
  CHECK(Http("GET", node.http, "/cam/index.mpd").status == 200);
  CHECK(MetricAt(node.http, "meshwork_rtmp_publishes_total", "result=\"started\"") == 1);
}

// GStreamer: the test source's H.264 and AAC, remuxed to FLV by flvmux, paced by the sink's
// clock, pushed by rtmp2sink (GStreamer's own RTMP client, unrelated to ffmpeg's).
std::unique_ptr<Process> PublishGst(const std::string& url) {
  return Process::Start({"/usr/bin/gst-launch-1.0",
                         "-q",
                         "filesrc",
                         "location=" + SourceTs(60),
                         "!",
                         "tsdemux",
                         "name=d",
                         "d.",
                         "!",
                         "queue",
                         "!",
                         "h264parse",
                         "!",
                         "flvmux",
                         "name=m",
                         "streamable=true",
                         "!",
                         "rtmp2sink",
                         "location=" + url,
                         "d.",
                         "!",
                         "queue",
                         "!",
                         "aacparse",
                         "!",
                         "m."},
                        MakeTempDir("gst-publisher") + ".log");
}

TEST_CASE(
    "S-1 RTMP: GStreamer's rtmp2sink publishes, and hls.js (TS and LL-HLS) and dash.js 5 "
    "play the result") {
  auto dir = MakeTempDir("rtmp-gst");
  auto central = StartCentral(dir);
  auto node = StartRtmpIngest(central, "ingest-1", "gst");
  auto publisher = PublishGst("rtmp://" + node.rtmp + "/live/gst");
  REQUIRE(Eventually([&] { return Playlist(node, "gst").entries.size() >= 3; }, 30s));
  auto playlist = Playlist(node, "gst");
  auto codecs = SegmentCodecs(node, "gst", playlist.entries.back().msn, dir);
  CHECK(codecs["video"] == "h264");
  CHECK(codecs["audio"] == "aac");
  constexpr int kSeconds = 8;
  CheckPlayed(PlayInBrowser("http://" + node.http + "/gst/index.m3u8", kSeconds), kSeconds);
  CheckPlayed(
      PlayInBrowser("http://" + node.http + "/gst/index.m3u8?_HLS_ll=1", kSeconds, "--low-latency"),
      kSeconds);
  CheckPlayed(PlayDash("http://" + node.http + "/gst/index.mpd", kSeconds), kSeconds);
}

TEST_CASE(
    "M-3 RTMP: a wrong stream key is refused before any media is stored, a right one "
    "publishes, and only a token holder takes over a live stream") {
  auto dir = MakeTempDir("rtmp-token");
  auto central = StartCentral(dir);
  auto node = StartRtmpIngest(central, "ingest-1", "secure");
  const std::string token = "rtmp-publish-token-0123456789";
  REQUIRE(Http("PATCH", central.http, kApi + "/streams/secure",
               nlohmann::json{{"publish_tokens", {token}}}.dump())
              .status == 200);
  REQUIRE(Eventually(
      [&] {
        auto wrong = PublishRtmp("rtmp://" + node.rtmp + "/live/secure?token=wrong", 60, "wrong");
        return wrong->Wait() != 0 &&
               MetricAt(node.http, "meshwork_rtmp_publishes_total", "result=\"unauthorized\"") >= 1;
      },
      10s));
  auto none = PublishRtmp("rtmp://" + node.rtmp + "/live/secure", 60, "no-token");
  CHECK(none->Wait() != 0);
  CHECK(Http("GET", node.http, "/secure/v1/index.m3u8").status != 200);  // nothing stored
  CHECK(MetricAt(node.http, "meshwork_rtmp_publishes_total", "result=\"started\"") == 0);

  auto right = PublishRtmp("rtmp://" + node.rtmp + "/live/secure?token=" + token, 60, "right");
  REQUIRE(Eventually([&] { return Playlist(node, "secure").entries.size() >= 2; }, 30s));
  // A second publisher without the token is refused while the first is live…
  auto intruder = PublishRtmp("rtmp://" + node.rtmp + "/live/secure", 60, "intruder");
  CHECK(intruder->Wait() != 0);
  CHECK_FALSE(right->Exited());
  // …one with it (in the {stream}-{token} form) takes over, and the first is let go.
  auto successor = PublishRtmp("rtmp://" + node.rtmp + "/live/secure-" + token, 60, "successor");
  CHECK(Eventually([&] { return right->Exited(); }, 10s));
  CHECK_FALSE(successor->Exited());
  const int64_t before = Playlist(node, "secure").entries.back().msn;
  CHECK(Eventually([&] { return Playlist(node, "secure").entries.back().msn >= before + 2; }, 20s));
}

TEST_CASE("S-1 RTMPS: ffmpeg publishes over TLS with a self-signed certificate") {
  auto dir = MakeTempDir("rtmps");
  auto [rc, out] = RunCommand(
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=ingest.test -keyout '" + dir +
      "/key.pem' -out '" + dir + "/cert.pem' 2>&1");
  INFO(out);
  REQUIRE(rc == 0);
  auto central = StartCentral(dir);
  auto node = StartRtmpIngest(central, "ingest-1", "tls",
                              {"--rtmps-listen=127.0.0.1:0", "--tls-cert=" + dir + "/cert.pem",
                               "--tls-key=" + dir + "/key.pem"});
  REQUIRE(!node.rtmps.empty());
  auto publisher = PublishRtmp("rtmps://" + node.rtmps + "/live/tls");
  REQUIRE(Eventually([&] { return Playlist(node, "tls").entries.size() >= 2; }, 30s));
  auto codecs = SegmentCodecs(node, "tls", Playlist(node, "tls").entries.back().msn, dir);
  CHECK(codecs["video"] == "h264");
  // Plain RTMP to the TLS port gets nowhere.
  auto plain = PublishRtmp("rtmp://" + node.rtmps + "/live/tls", 60, "plain-to-tls");
  CHECK(plain->Wait() != 0);
}

TEST_CASE(
    "S-5 RTMP: a publisher that reconnects continues the media sequence after a "
    "discontinuity") {
  auto dir = MakeTempDir("rtmp-reconnect");
  auto central = StartCentral(dir);
  auto node = StartRtmpIngest(central, "ingest-1", "re");
  auto first = PublishRtmp("rtmp://" + node.rtmp + "/live/re");
  REQUIRE(Eventually([&] { return Playlist(node, "re").entries.size() >= 2; }, 30s));
  first.reset();  // the encoder drops its connection…
  const int64_t last = Playlist(node, "re").entries.back().msn;
  auto second = PublishRtmp("rtmp://" + node.rtmp + "/live/re");  // …and comes back
  REQUIRE(Eventually([&] { return Playlist(node, "re").entries.back().msn >= last + 2; }, 30s));
  auto playlist = Playlist(node, "re");
  INFO(Http("GET", node.http, "/re/v1/index.m3u8").body);
  int64_t previous = -1;
  bool discontinuity = false;
  for (const auto& e : playlist.entries) {
    if (previous >= 0) CHECK(e.msn == previous + 1);  // no gap, no restart from 0
    previous = e.msn;
    if (e.msn > last) discontinuity = discontinuity || e.discontinuity;
  }
  CHECK(discontinuity);
}

TEST_CASE("S-1 RTMP: HEVC over Enhanced RTMP (FourCC hvc1) is packaged as hvc1") {
  auto dir = MakeTempDir("rtmp-hevc");
  // Real x265 output; sent by tests/e2e/rtmp_publish_hevc.py because Debian's ffmpeg 5.1
  // cannot put HEVC in FLV (see that script).
  auto [rc, out] = RunCommand(
      "ffmpeg -hide_banner -loglevel error -y -f lavfi -i testsrc2=size=640x360:rate=25 -t 14 "
      "-c:v libx265 -x265-params bframes=0:keyint=50:min-keyint=50:scenecut=0:log-level=error "
      "-bsf:v hevc_metadata=aud=insert -f hevc '" +
      dir + "/src.hevc' 2>&1");
  INFO(out);
  REQUIRE(rc == 0);
  auto central = StartCentral(dir);
  auto node = StartRtmpIngest(central, "ingest-1", "hevc");
  auto publisher =
      Process::Start({"/usr/bin/python3", SourcePath("tests/e2e/rtmp_publish_hevc.py"), "--url",
                      "rtmp://" + node.rtmp + "/live/hevc", "--input", dir + "/src.hevc"},
                     dir + "/publisher.log");
  REQUIRE(Eventually([&] { return Playlist(node, "hevc").entries.size() >= 3; }, 30s));
  auto codecs = SegmentCodecs(node, "hevc", Playlist(node, "hevc").entries.back().msn, dir);
  CHECK(codecs["video"] == "hevc");
  auto init = Http("GET", node.http, "/hevc/v1/init.mp4");
  REQUIRE(init.status == 200);
  WriteFile(dir + "/init.mp4", init.body);
  auto [prc, probe] = RunCommand(
      "ffprobe -v error -show_entries stream=codec_name,codec_tag_string,"
      "width,height -of json '" +
      dir + "/init.mp4'");
  INFO(probe);
  auto streams = nlohmann::json::parse(probe, nullptr, false)["streams"];
  REQUIRE(streams.size() == 1);
  CHECK(streams[0]["codec_name"] == "hevc");
  CHECK(streams[0]["codec_tag_string"] == "hvc1");
  CHECK(streams[0]["width"] == 640);
  auto master = Http("GET", node.http, "/hevc/index.m3u8");
  CHECK(master.body.find("hvc1.") != std::string::npos);
  CHECK(publisher->Wait() == 0);
}

// The newest msn `node` lists for `stream` (-1 when none).
int64_t Newest(const Streamer& node, const std::string& stream) {
  auto p = Playlist(node, stream);
  return p.entries.empty() ? -1 : p.entries.back().msn;
}

TEST_CASE("S-5 RTMP: two nodes fed by one encoder's fan-out agree on msn, duration, date and PTS") {
  auto dir = MakeTempDir("rtmp-fanout");
  auto central = StartCentral(dir);
  auto a = StartRtmpIngest(central, "ingest-a", "fan");
  auto b = StartRtmpIngest(central, "ingest-b", "fan");
  // One encoder pushing the same packets to both nodes (ffmpeg's tee muxer), as an encoder
  // configured with two RTMP destinations does.
  auto encoder = Process::Start(
      {"/usr/bin/ffmpeg", "-hide_banner", "-loglevel", "error", "-re", "-i", SourceTs(60), "-map",
       "0", "-c", "copy",
       // The tee muxer keeps MPEG-TS's codec tags, which FLV refuses: give FLV's own
       // (7 = AVC, 10 = AAC).
       "-tag:v", "7", "-tag:a", "10", "-f", "tee",
       "[f=flv]rtmp://" + a.rtmp + "/live/fan|[f=flv]rtmp://" + b.rtmp + "/live/fan"},
      MakeTempDir("rtmp-tee") + ".log");
  REQUIRE(Eventually([&] { return Newest(a, "fan") >= 0 && Newest(b, "fan") >= 0; }, 30s));
  // Both proposed a timeline anchor at once; central keeps one, and both date what they
  // package from then on with it.
  nlohmann::json anchor;
  REQUIRE(Eventually(
      [&] {
        anchor = Http("GET", central.http, kApi + "/streams/fan").Json()["timeline_anchor"];
        return anchor.is_object() &&
               ReportedStream(central, "ingest-a", "fan")["timeline_anchor"] == anchor &&
               ReportedStream(central, "ingest-b", "fan")["timeline_anchor"] == anchor;
      },
      10s));
  const int64_t from = std::max(Newest(a, "fan"), Newest(b, "fan")) + 2;
  REQUIRE(
      Eventually([&] { return std::min(Newest(a, "fan"), Newest(b, "fan")) >= from + 1; }, 20s));
  CHECK(CheckSameTimeline(a, b, "fan", dir, from) >= 2);
}

TEST_CASE("S-2 RTMP: an RTMP input fails over to the next input and back like any other") {
  auto dir = MakeTempDir("rtmp-failover");
  auto central = StartCentral(dir);
  const std::string udp = "udp://127.0.0.1:" + std::to_string(FreePort(SOCK_DGRAM));
  auto node = StartIngestWithStream(central, "ingest-1", "fo", {"rtmp://", udp},
                                    {"--rtmp-listen=127.0.0.1:0"});
  // Only the backup delivers: it takes over once the RTMP input has been silent for
  // input_timeout.
  auto backup = SendTs(udp + "?pkt_size=1316");
  REQUIRE(Eventually([&] { return ActiveInput(central, "ingest-1", "fo") == udp; }, 10s));
  REQUIRE(Eventually([&] { return Newest(node, "fo") >= 0; }, 15s));
  // The encoder connects: the first input is preferred again, and packaging goes on.
  auto encoder = PublishRtmp("rtmp://" + node.rtmp + "/live/fo");
  REQUIRE(Eventually([&] { return ActiveInput(central, "ingest-1", "fo") == "rtmp://"; }, 10s));
  const int64_t switched = Newest(node, "fo");
  CHECK(Eventually([&] { return Newest(node, "fo") >= switched + 2; }, 15s));
  // The encoder goes away: back to the backup after the timeout.
  encoder.reset();
  CHECK(Eventually([&] { return ActiveInput(central, "ingest-1", "fo") == udp; }, 10s));
}

// A TCP connection from `source` (a loopback address) to `address` that sends nothing.
class SilentClient {
 public:
  SilentClient(const std::string& source, const std::string& address) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in from{};
    from.sin_family = AF_INET;
    ::inet_pton(AF_INET, source.c_str(), &from.sin_addr);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(Port(address));
    ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0;
    timeval tv{0, 100'000};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~SilentClient() { ::close(fd_); }
  bool connected() const { return connected_; }
  // Whether the server closes the connection within `timeout`.
  bool ClosedWithin(std::chrono::milliseconds timeout) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    char byte;
    while (std::chrono::steady_clock::now() < until) {
      ssize_t n = ::recv(fd_, &byte, 1, 0);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        return true;
      }
    }
    return false;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

TEST_CASE(
    "R-3 RTMP: silent connections from one address cannot take every slot, and other "
    "addresses are still served") {
  auto dir = MakeTempDir("rtmp-slots");
  auto central = StartCentral(dir);
  auto node = StartRtmpIngest(central, "ingest-1", "slots");
  std::vector<std::unique_ptr<SilentClient>> silent;
  for (int i = 0; i < 16; ++i) {
    silent.push_back(std::make_unique<SilentClient>("127.0.0.1", node.rtmp));
    REQUIRE(silent.back()->connected());
  }
  // Closed at accept rather than left to its 10 s handshake deadline.
  SilentClient seventeenth("127.0.0.1", node.rtmp);
  CHECK(seventeenth.ClosedWithin(3000ms));
  // Another address is not refused for it.
  SilentClient other("127.0.0.2", node.rtmp);
  REQUIRE(other.connected());
  CHECK_FALSE(other.ClosedWithin(1000ms));
  CHECK(MetricAt(node.http, "meshwork_rtmp_publishes_total", "result=\"started\"") == 0);
  // Once they go, a publisher from the first address is admitted and packaged.
  silent.clear();
  auto publisher = PublishRtmp("rtmp://" + node.rtmp + "/live/slots", 30, "slots");
  CHECK(Eventually([&] { return Playlist(node, "slots").entries.size() >= 2; }, 30s));
}

}  // namespace
}  // namespace meshwork::testing
