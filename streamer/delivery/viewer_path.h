// What a path on the viewer listener names (S-2, S-10, S-16): a stream's master playlist,
// LL-HLS master or MPD, a rendition's media playlist, LL-HLS playlist, init segment, MPEG-TS
// segment, fMP4 segment or LL-HLS part. Pure parsing of untrusted input (fuzzed:
// tests/fuzz/viewer_path_fuzz.cc); which names are streams is the caller's to say.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"

namespace meshwork::streamer {

struct ViewerPath {
  enum Kind {
    kMaster,    // {stream}/index.m3u8
    kMedia,     // {stream}/{rendition}/index.m3u8
    kSegment,   // {stream}/{rendition}/{msn}.ts
    kLlMaster,  // {stream}/index.ll.m3u8
    kLlMedia,   // {stream}/{rendition}/index.ll.m3u8
    kInit,      // {stream}/{rendition}/init.mp4
    kM4s,       // {stream}/{rendition}/{msn}.m4s
    kPart,      // {stream}/{rendition}/{msn}.{part}.m4s
    kMpd        // {stream}/index.mpd
  } kind = kMaster;
  std::string stream;  // may hold slashes ("live/news")
  std::string rendition;
  int64_t msn = 0;  // 0 … kMaxMsn
  int part = -1;    // 0 … 100 000 for kPart, else -1
};

// Parses `path` (with or without its leading '/', no query). `is_stream(name)` says whether
// `name` is a stream of this node: "a/b/index.m3u8" is stream "a/b"'s master playlist when
// a/b is a stream, else rendition b's media playlist of stream "a". Every accepted path's
// stream was the argument of the last call to `is_stream`, which returned true. Nullopt for a
// path that names nothing (or no stream).
std::optional<ViewerPath> ParseViewerPath(std::string_view path,
                                          absl::FunctionRef<bool(std::string_view)> is_stream);
// The same into `out` (default-constructed; unspecified when false is returned), for a
// caller that keeps the path inside a larger object without moving its strings (P-5).
bool ParseViewerPath(std::string_view path, absl::FunctionRef<bool(std::string_view)> is_stream,
                     ViewerPath& out);

}  // namespace meshwork::streamer
