// Backup variants for OTT redundancy (O-6, O-11, O-13, O-14, O-20).
#include "streamer/ott/backups.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "common/net/address_class.h"
#include "common/net/ip_address.h"
#include "streamer/delivery/playlists.h"

namespace meshwork::streamer {
namespace {

TEST_CASE("O-6 backups are balanced over 1000 viewers with 2, 3 and 5 eligible nodes") {
  constexpr uint64_t kViewers = 1000;
  for (size_t k : {2u, 3u, 5u}) {
    CAPTURE(k);
    std::vector<int> first(k, 0), second(k, 0);
    std::set<std::pair<size_t, size_t>> pairs;
    for (uint64_t i = 0; i < kViewers; ++i) {
      std::vector<size_t> b = ChooseBackups(k, i);
      REQUIRE(b.size() == 2);
      REQUIRE(b[0] < k);
      REQUIRE(b[1] < k);
      CHECK(b[0] != b[1]);
      ++first[b[0]];
      ++second[b[1]];
      pairs.insert({b[0], b[1]});
      CHECK(ChooseBackups(k, i) == b);  // deterministic
    }
    const double even = static_cast<double>(kViewers) / static_cast<double>(k);
    for (size_t p = 0; p < k; ++p) {
      CAPTURE(p, first[p], second[p]);
      CHECK(std::abs(first[p] - even) <= 1.0);
      CHECK(std::abs(second[p] - even) <= 1.0);
    }
    // Every ordered pair is used, so a failed first backup's viewers spread over the rest.
    CHECK(pairs.size() == k * (k - 1));
  }
  // Balanced at every prefix too, not only at the end.
  std::vector<int> first(3, 0), second(3, 0);
  for (uint64_t i = 0; i < 100; ++i) {
    auto b = ChooseBackups(3, i);
    ++first[b[0]];
    ++second[b[1]];
    for (size_t p = 0; p < 3; ++p) {
      CHECK(std::abs(first[p] - (i + 1) / 3.0) <= 1.0);
      CHECK(std::abs(second[p] - (i + 1) / 3.0) <= 1.0);
    }
  }
  // One eligible node: one backup; none: no backup.
  for (uint64_t i = 0; i < 10; ++i) CHECK(ChooseBackups(1, i) == std::vector<size_t>{0});
  CHECK(ChooseBackups(0, 7).empty());
}

TEST_CASE(
    "O-20 user agents: AVPlayer, Safari, hls.js browsers, ExoPlayer and Media3 get backups, VLC, "
    "Lavf, mpv, Kodi and empty do not") {
  const std::vector<std::string> switches = {
      // AVPlayer on iOS, iPadOS, tvOS and macOS.
      "AppleCoreMedia/1.0.0.21A329 (iPhone; U; CPU OS 17_0 like Mac OS X; en_us)",
      "AppleCoreMedia/1.0.0.20G75 (iPad; U; CPU OS 16_6 like Mac OS X; de_de)",
      "AppleCoreMedia/1.0.0.20J373 (Apple TV; U; CPU OS 16_0 like Mac OS X; en_us)",
      "AppleCoreMedia/1.0.0.23A344 (Macintosh; U; Intel Mac OS X 14_0; en_us)",
      // Safari on macOS and iPhone.
      "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) "
      "Version/17.1 Safari/605.1.15",
      "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like "
      "Gecko) Version/17.1 Mobile/15E148 Safari/604.1",
      // hls.js in Chrome, Firefox, Edge, and Chrome on Android.
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
      "Chrome/120.0.0.0 Safari/537.36",
      "Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0",
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
      "Chrome/120.0.0.0 Safari/537.36 Edg/120.0.2210.61",
      "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
      "Chrome/120.0.6099.43 Mobile Safari/537.36",
      // ExoPlayer and Media3.
      "ExoPlayerLib/2.19.1",
      "MyTvApp/3.2 (Linux;Android 12) ExoPlayerLib/2.18.7",
      "androidx.media3.common/1.1.1 (Linux; Android 13) AndroidXMedia3/1.1.1",
      "Media3/1.2.0",
  };
  const std::vector<std::string> no_backups = {
      "VLC/3.0.20 LibVLC/3.0.20",
      "VLC/3.0.18 LibVLC/3.0.18 Mozilla/5.0",  // mentions Mozilla but is VLC
      "LibVLC/3.0.16",
      "Lavf/60.16.100",
      "Lavf/58.76.100 Mozilla/5.0",
      "mpv 0.37.0",
      "libmpv",
      "Kodi/20.2 (Windows NT 10.0; Win64; x64) App_Bitness/64 Version/20.2-(20.2.0)-Git:"
      "20230629-5f418d0b13",
      "Kodi/19.4 (Linux; Android 11; SHIELD Android TV Build/RQ1A.210105.003) Android/11.0.0 "
      "Sys_CPU/armv8l Mozilla/5.0 Safari/537.36",  // Kodi with browser and Safari tokens
      "XBMC/12.2 Git:20130502-32b1a5e (Linux; Android 4.2)",
      "",
      "curl/8.4.0",
      "GStreamer souphttpsrc 1.22.0 libsoup/3.4.2",
  };
  for (const auto& ua : switches) {
    CAPTURE(ua);
    CHECK(ClassifyPlayer(ua) == PlayerClass::kSwitches);
  }
  for (const auto& ua : no_backups) {
    CAPTURE(ua);
    CHECK(ClassifyPlayer(ua) == PlayerClass::kNoBackups);
  }
  CHECK(switches.size() + no_backups.size() >= 12);
}

bool PublicAddress(std::string_view text) {
  auto address = net::IpAddress::Parse(text);
  REQUIRE(address.ok());
  return !net::IsPrivate(*address);
}

BackupPeer PeerAt(std::string_view ip) {
  BackupPeer p;
  p.node = std::string(ip);
  p.http_base = "http://" + std::string(ip) + ":8080";
  p.address_public = PublicAddress(ip);
  return p;
}

TEST_CASE("O-11 a public viewer is never offered a private backup") {
  const bool public_viewer = PublicAddress("198.51.100.20");
  const bool private_viewer = PublicAddress("192.168.1.50");
  REQUIRE(public_viewer);
  REQUIRE_FALSE(private_viewer);
  // RFC 1918, CGNAT, loopback, link-local, RFC 4193 and IPv6 link-local/loopback.
  for (std::string_view ip : {"10.1.2.3", "172.20.0.4", "192.168.0.9", "100.64.3.3", "127.0.0.1",
                              "169.254.7.7", "fd12:3456::1", "fe80::1", "::1"}) {
    CAPTURE(ip);
    BackupPeer peer = PeerAt(ip);
    CHECK_FALSE(peer.address_public);
    CHECK(BackupBase(peer, public_viewer, /*viewer_https=*/false).empty());
    // A viewer in the same private network may use it.
    CHECK(BackupBase(peer, private_viewer, false) == peer.http_base);
  }
  BackupPeer pub = PeerAt("203.0.113.7");
  CHECK(BackupBase(pub, public_viewer, false) == "http://203.0.113.7:8080");
  CHECK(BackupBase(pub, private_viewer, false) == "http://203.0.113.7:8080");

  // Over many viewers, the usable set for a public viewer never contains a private node.
  std::vector<BackupPeer> peers = {PeerAt("10.0.0.2"), PeerAt("203.0.113.7"), PeerAt("203.0.113.8"),
                                   PeerAt("100.64.0.1")};
  std::vector<std::string> usable;
  for (const auto& p : peers) {
    std::string base = BackupBase(p, public_viewer, false);
    if (!base.empty()) usable.push_back(base);
  }
  REQUIRE(usable.size() == 2);
  for (uint64_t i = 0; i < 50; ++i) {
    for (size_t idx : ChooseBackups(usable.size(), i)) {
      CHECK(absl::StrContains(usable[idx], "203.0.113."));
    }
  }
}

TEST_CASE("O-13 an HTTPS viewer is offered only HTTPS backups") {
  BackupPeer both{"b", "http://b.example.net:80", "https://b.example.net:443", true, false, 0};
  BackupPeer http_only{"c", "http://203.0.113.9:8080", "", true, false, 0};
  BackupPeer https_only{"d", "", "https://d.example.net:443", true, false, 0};

  CHECK(BackupBase(both, true, /*viewer_https=*/true) == "https://b.example.net:443");
  CHECK(BackupBase(http_only, true, true).empty());
  CHECK(BackupBase(https_only, true, true) == "https://d.example.net:443");
  for (const auto* p : {&both, &http_only, &https_only}) {
    std::string base = BackupBase(*p, true, true);
    CHECK((base.empty() || absl::StartsWith(base, "https://")));
  }
  // A plain HTTP viewer prefers HTTP, and takes HTTPS when that is all there is.
  CHECK(BackupBase(both, true, false) == "http://b.example.net:80");
  CHECK(BackupBase(http_only, true, false) == "http://203.0.113.9:8080");
  CHECK(BackupBase(https_only, true, false) == "https://d.example.net:443");
  // HTTPS does not override the address rule (O-11).
  BackupPeer private_https{"e", "", "https://e.internal:443", false, false, 0};
  CHECK(BackupBase(private_https, true, true).empty());
  CHECK(BackupBase(private_https, false, true) == "https://e.internal:443");
}

TEST_CASE("O-14 a shared CDN name is never a backup address") {
  BackupPeer cdn{"b", "http://live.cdn.example.com", "https://live.cdn.example.com", true, true, 0};
  for (bool viewer_public : {false, true}) {
    for (bool viewer_https : {false, true}) {
      CAPTURE(viewer_public, viewer_https);
      CHECK(BackupBase(cdn, viewer_public, viewer_https).empty());
    }
  }
  cdn.shared_name = false;  // its own name: usable
  CHECK(BackupBase(cdn, true, true) == "https://live.cdn.example.com");
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST_CASE("O-6 the backup variants' EXT-X-STREAM-INF lines are byte-identical to the node's own") {
  auto w = std::make_shared<RenditionWindow>();
  w->info.name = "v1";
  media::TrackInfo video;
  video.codec = media::Codec::kH264;
  video.codec_string = "avc1.64001f";
  video.width = 1280;
  video.height = 720;
  video.frame_rate = 25;
  media::TrackInfo audio;
  audio.codec = media::Codec::kAac;
  audio.codec_string = "mp4a.40.2";
  w->info.tracks = {video, audio};
  w->peak_bitrate_bps = 2'345'678;
  auto segment = std::make_shared<Segment>();
  segment->duration = 2 * 90000;
  w->segments.push_back(segment);

  const std::string inf = StreamInfLine(*w);
  CHECK(inf ==
        "#EXT-X-STREAM-INF:BANDWIDTH=2345678,CODECS=\"avc1.64001f,mp4a.40.2\","
        "RESOLUTION=1280x720,FRAME-RATE=25.000");
  const std::string own = MasterPlaylist({w});
  const hls::Variant variant = TsVariant(*w);
  // Without backups the playlist is exactly the node's own master playlist.
  CHECK(MasterWithBackups(variant, "v1/index.m3u8", {}) == own);

  const std::vector<std::string> backups = {
      BackupUri("https://b.example.net", "news", "v1", "eyJrIjoxfQ.c2ln"),
      BackupUri("https://c.example.net:8443", "news", "v1", "eyJrIjoyfQ.c2lo"),
  };
  CHECK(backups[0] == "https://b.example.net/news/v1/index.m3u8?pass=eyJrIjoxfQ.c2ln");
  const std::string master = MasterWithBackups(variant, "v1/index.m3u8", backups);
  CHECK_FALSE(absl::StrContains(master, "PATHWAY-ID"));

  std::vector<std::string> infs, uris;
  const auto lines = Lines(master);
  REQUIRE(lines.size() >= 1);
  CHECK(lines[0] == "#EXTM3U");
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!absl::StartsWith(lines[i], "#EXT-X-STREAM-INF:")) continue;
    infs.push_back(lines[i]);
    REQUIRE(i + 1 < lines.size());
    uris.push_back(lines[i + 1]);
  }
  REQUIRE(infs.size() == 3);
  for (const auto& line : infs) CHECK(line == Lines(own)[3]);
  for (const auto& line : infs) CHECK(line == inf);
  CHECK(uris == std::vector<std::string>{"v1/index.m3u8", backups[0], backups[1]});
}

}  // namespace
}  // namespace meshwork::streamer
