// Parsing of ingest input URLs (S-1) into the settings a source is built from. Internal to
// streamer/ingest; exposed for tests.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace meshwork::ingest {

enum class SourceKind { kUdp, kSrt, kHttp };
enum class SrtMode { kListener, kCaller };

struct SourceUrl {
  SourceKind kind = SourceKind::kUdp;
  std::string host;  // without IPv6 brackets
  uint16_t port = 0;

  // udp://
  bool multicast = false;  // host is a group in 224.0.0.0/4 (or ff00::/8)
  std::string localaddr;   // interface to join the group on; empty = any

  // srt://
  SrtMode srt_mode = SrtMode::kCaller;
  int latency_ms = -1;  // -1: libsrt's default
  std::string streamid;
  std::string passphrase;

  // http://
  std::string target = "/";  // path and query, as sent in the request line
};

// InvalidArgument naming `url` (redacted) when it is malformed or unsupported.
absl::StatusOr<SourceUrl> ParseSourceUrl(std::string_view url);

// `url` with the value of any credential query parameter (`passphrase`, `streamid`, `token`,
// `pass`, `sid`, `key`) replaced by "***", for logs, error messages and status reports.
std::string RedactUrl(std::string_view url);

}  // namespace meshwork::ingest
