// Backup variants for OTT redundancy (O-6, O-11, O-13, O-14, O-20): which players get
// them, which peer addresses a viewer may be given, how backups are spread over viewers,
// and the master playlist that lists them. Pure functions, no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "streamer/playlist/hls_writer.h"

namespace meshwork::streamer {

// O-20: whether a player moves to backup variants when its node fails.
enum class PlayerClass { kSwitches, kNoBackups };

// kSwitches: AVPlayer (AppleCoreMedia, Safari, iPhone, iPad, AppleTV), browser players
// ("Mozilla/…": hls.js, Chrome, Firefox, Edge), ExoPlayer and Media3.
// kNoBackups: VLC/LibVLC, ffmpeg (Lavf), mpv, Kodi/XBMC, an empty or unknown user agent.
// The no-backup players are recognised first, so "VLC/3.0 LibVLC" or a Kodi user agent that
// also mentions Mozilla stays kNoBackups. Matching ignores case.
PlayerClass ClassifyPlayer(std::string_view user_agent);

// One eligible peer member as central describes it (from the group view).
struct BackupPeer {
  std::string node;             // node id
  std::string http_base;        // "http://host:port"; empty without a plain HTTP address
  std::string https_base;       // "https://host:port"; empty without HTTPS for its hostname
  bool address_public = false;  // its announced address/hostname is public (O-11)
  bool shared_name = false;     // its hostname is shared with other nodes, a CDN name (O-14)
  uint64_t load = 0;            // sessions, for the least-loaded redirect choice (O-3)
};

// The base URL a viewer may be given for `peer`, or empty when none:
//  - a shared name is never usable (O-14);
//  - a public viewer is never given a peer whose address is private (O-11);
//  - an HTTPS viewer gets only `https_base` (O-13); any other viewer gets `http_base`, or
//    `https_base` when the peer has no plain HTTP address.
std::string BackupBase(const BackupPeer& peer, bool viewer_public, bool viewer_https);

// O-6: indexes (into the caller's usable peers, in a stable order such as by node id) of the
// backups for this node's viewer number `viewer_index`: two distinct peers when
// usable_count ≥ 2, one when it is 1, none when 0. With k peers, viewer i gets
//   first  = i mod k,
//   second = (i mod k + 1 + (i / k) mod (k − 1)) mod k,
// so every run of k consecutive viewers (aligned on multiples of k) has each peer exactly once
// as first and once as second backup: over V viewers each peer is first backup ⌊V/k⌋ or
// ⌊V/k⌋+1 times, and likewise second.
std::vector<size_t> ChooseBackups(size_t usable_count, uint64_t viewer_index);

// "<base>/<stream>/<rendition>/index.m3u8?pass=<pass>" (the pass is base64url, O-7).
std::string BackupUri(std::string_view base, std::string_view stream, std::string_view rendition,
                      std::string_view pass);

// O-6: a single-rendition master playlist listing the node's own variant (relative
// `own_uri`, e.g. "v1/index.m3u8") first, then one variant per absolute backup URI, all with
// the figures of `variant` (its URI is not used), so their EXT-X-STREAM-INF lines are
// byte-identical. Printed by the one playlist writer.
std::string MasterWithBackups(const hls::Variant& variant, std::string_view own_uri,
                              const std::vector<std::string>& backup_uris);

}  // namespace meshwork::streamer
