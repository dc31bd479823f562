#include "streamer/ott/backups.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>

namespace meshwork::streamer {
namespace {

bool ContainsIgnoreCase(std::string_view haystack, std::string_view needle) {
  auto equal = [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) ==
           std::tolower(static_cast<unsigned char>(b));
  };
  return std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(), equal) !=
         haystack.end();
}

bool ContainsAny(std::string_view haystack, std::initializer_list<std::string_view> needles) {
  for (std::string_view n : needles) {
    if (ContainsIgnoreCase(haystack, n)) return true;
  }
  return false;
}

}  // namespace

PlayerClass ClassifyPlayer(std::string_view user_agent) {
  // Players that do not switch come first: several of them also carry browser or Apple
  // tokens in their user agent.
  if (ContainsAny(user_agent, {"VLC", "Lavf", "mpv", "Kodi", "XBMC"})) {
    return PlayerClass::kNoBackups;
  }
  if (ContainsAny(user_agent, {"AppleCoreMedia", "Safari", "iPhone", "iPad", "AppleTV", "Apple TV",
                               "Mozilla/", "ExoPlayer", "Media3"})) {
    return PlayerClass::kSwitches;
  }
  return PlayerClass::kNoBackups;
}

std::string BackupBase(const BackupPeer& peer, bool viewer_public, bool viewer_https) {
  if (peer.shared_name) return "";
  if (viewer_public && !peer.address_public) return "";
  if (viewer_https) return peer.https_base;
  return peer.http_base.empty() ? peer.https_base : peer.http_base;
}

std::vector<size_t> ChooseBackups(size_t usable_count, uint64_t viewer_index) {
  const uint64_t k = usable_count;
  if (k == 0) return {};
  const uint64_t first = viewer_index % k;
  if (k == 1) return {static_cast<size_t>(first)};
  // Within each aligned block of k viewers the offset is fixed and non-zero, so the second
  // backup is a rotation of the first (a permutation) and never equals it; successive
  // blocks step through every offset 1 … k−1, covering all ordered pairs.
  const uint64_t offset = 1 + (viewer_index / k) % (k - 1);
  return {static_cast<size_t>(first), static_cast<size_t>((first + offset) % k)};
}

std::string BackupUri(std::string_view base, std::string_view stream, std::string_view rendition,
                      std::string_view pass) {
  std::string uri(base);
  uri.append("/").append(stream).append("/").append(rendition);
  uri.append("/index.m3u8?pass=").append(pass);
  return uri;
}

std::string MasterWithBackups(const hls::Variant& variant, std::string_view own_uri,
                              const std::vector<std::string>& backup_uris) {
  hls::Master master;
  auto add = [&](std::string_view uri) {
    hls::Variant v = variant;
    v.uri = std::string(uri);
    master.variants.push_back(std::move(v));
  };
  add(own_uri);
  for (const std::string& uri : backup_uris) add(uri);
  return hls::Write(master);
}

}  // namespace meshwork::streamer
